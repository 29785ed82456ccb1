"""The ``strata`` command's one output rule, its version and its documented exit codes."""

from __future__ import annotations

import io
import json

import pytest

from strata_dev.cli import main as cli
from strata_dev.cli.output import EXIT_CODES, Output


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"strata {metadata.version('strata-memory-service')}"


def _help(*argv: str) -> str:
    stream = io.StringIO()
    parser = cli.build_parser()
    target = parser
    for name in argv:  # walk down to the sub-command's own parser
        action = next(a for a in target._actions if a.__class__.__name__ == "_SubParsersAction")
        target = action.choices[name]
    target.print_help(stream)
    return stream.getvalue()


@pytest.mark.parametrize("argv", [(), ("consolidate",), ("outbox", "drain"), ("doctor",), ("bench",),
                                  ("scheduler",), ("inspect",), ("rebuild",)])
def test_help_states_the_output_rule_and_every_exit_code(argv: tuple[str, ...]) -> None:
    text = _help(*argv)
    assert "--json" in text if argv else True
    assert "exit codes:" in text and "output:" in text
    for code, _ in EXIT_CODES:
        assert f" {code}  " in text


def test_every_command_takes_json() -> None:
    parser = cli.build_parser()
    leaves = []

    def walk(p, path):
        subs = [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not subs:
            leaves.append((path, p))
        for action in subs:
            for name, child in action.choices.items():
                walk(child, (*path, name))

    walk(parser, ())
    assert len(leaves) >= 12
    for path, leaf in leaves:
        assert any("--json" in a.option_strings for a in leaf._actions), path


def test_json_mode_prints_records_then_the_result_one_object_per_line() -> None:
    stream = io.StringIO()
    out = Output(True, stream)
    out.record({"uid": "a", "routes": {"promote": 1}})
    out.record({"uid": "b", "routes": {}})
    out.result({"users": 2, "routes": {"promote": 1}})
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines == [{"uid": "a", "routes": {"promote": 1}}, {"uid": "b", "routes": {}},
                     {"users": 2, "routes": {"promote": 1}}]


def test_people_mode_prints_a_table_then_key_value_lines() -> None:
    stream = io.StringIO()
    out = Output(False, stream)
    out.record({"uid": "a", "selected": 3}, title="passes")
    out.record({"uid": "bb", "selected": None})
    out.result({"users": 2, "routes": {"promote": 1, "archive": 2}}, title="consolidation")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "passes"
    assert lines[1].split() == ["uid", "selected"]
    assert lines[2].split() == ["a", "3"] and lines[3].split() == ["bb", "-"]
    assert lines[4] == "consolidation"
    assert [line.split() for line in lines[5:]] == [["users", "2"], ["routes.promote", "1"], ["routes.archive", "2"]]
    with pytest.raises(json.JSONDecodeError):
        json.loads(lines[5])

"""Progress on stderr: a bar only on a terminal and never with --json; `stack up` says what starts.

The bar (strata_dev/cli/progress.py) must leave a pipe, a log file, CI and a machine reader's
output exactly as it was: under ``--json`` or without a terminal it writes nothing at all.
"""

from __future__ import annotations

import argparse
import io
import os

import pytest

from strata_dev.cli import progress, stack_cmd
from strata_dev.localstack import stack
from strata_dev.localstack.processes import Proc


class Terminal(io.StringIO):
    """A stream that says it is a terminal (what a person's stderr is)."""

    def isatty(self) -> bool:
        return True


def test_no_bar_under_json_even_on_a_terminal() -> None:
    stream = Terminal()
    with progress.bar("work", 10, json_mode=True, stream=stream) as shown:
        for _ in range(10):
            shown.advance(note="going")
        shown.update(total=12, completed=12)
    assert not shown.enabled
    assert stream.getvalue() == ""


def test_no_bar_without_a_terminal() -> None:
    stream = io.StringIO()
    with progress.bar("work", 3, stream=stream) as shown:
        shown.advance()
    assert not shown.enabled and stream.getvalue() == ""


def test_the_bar_shows_its_total_on_a_terminal() -> None:
    stream = Terminal()
    with progress.bar("consolidating users", 4, stream=stream) as shown:
        assert shown.enabled
        for _ in range(4):
            shown.advance(note="routed")
    assert "consolidating users" in stream.getvalue() and "4/4" in stream.getvalue()


def test_track_under_pytest_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # pytest's captured stderr is not a terminal: the items come through, the stream stays empty.
    assert list(progress.track([1, 2, 3], "items")) == [1, 2, 3]
    assert list(progress.track(iter([4]), "items", json_mode=True)) == [4]
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_stack_up_says_each_service_and_its_port_except_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert stack_cmd._reporter(True) is None
    report = stack_cmd._reporter(False)
    ready = iter([False, True])
    comps = [stack.Component("firestore", ["x"], 8080, lambda: True),
             stack.Component("api", ["x"], 8081, lambda: next(ready))]
    procs = {c.name: Proc(c.name, os.getpid(), os.getpgid(0), c.port, "/dev/null", ()) for c in comps}
    stack._wait_ready(comps, procs, 30.0, report)
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0].startswith("  firestore ready on port 8080") and "1 of 2" in lines[0]
    assert lines[1].startswith("  api ready on port 8081") and "2 of 2" in lines[1]


def test_stack_up_passes_no_reporter_under_json(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    seen: dict[str, object] = {}

    def up(*args: object, **kwargs: object) -> dict[str, object]:
        seen.update(kwargs)
        return {"api_url": "http://127.0.0.1:1"}

    monkeypatch.setattr(stack, "up", up)
    args = argparse.Namespace(json=True, suite="default", model_replay=None, state_dir=None)
    assert stack_cmd.cmd_up(args) == 0
    assert seen["report"] is None
    assert capsys.readouterr().err == ""


def test_stdout_stays_the_commands_own_while_the_bar_draws(capsys: pytest.CaptureFixture[str]) -> None:
    stream = Terminal()
    with progress.bar("work", 2, stream=stream) as shown:
        print('{"result": 1}')
        shown.advance()
    assert capsys.readouterr().out == '{"result": 1}\n'
    assert '{"result": 1}' not in stream.getvalue()

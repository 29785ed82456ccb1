"""Every exit code of every ``strata`` command is documented, in docs/operations.md and the CLI's epilog.

The codes are read from the code, not from a list kept beside it: each sub-command's function (the
``func`` its parser sets) is parsed, and every ``return`` in it is followed to the integers it can
give (a literal, either side of ``a if c else b``, ``int(...)``, ``x or 0``, or a call of another
function, followed in turn); ``raise SystemExit(message)`` is 1. A new code, or a return this cannot
follow, fails here until docs/operations.md's "Exit codes" table names it (or the reader below
learns the new form).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from strata_dev.cli import main as cli
from strata_dev.cli.output import EXIT_CODES

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
# Every command: argparse's usage error, and Ctrl-C (cli.main's KeyboardInterrupt).
EVERY_COMMAND = {2, 130}


def leaf_commands(parser: argparse.ArgumentParser, prefix: str = "strata") -> Iterator[tuple[str, Callable[..., Any]]]:
    """(``strata a b``, the function it runs) for every sub-command without sub-commands of its own."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser.get_default("func")
        return
    for name, child in subs[0].choices.items():
        yield from leaf_commands(child, f"{prefix} {name}")


class Unreadable(AssertionError):
    pass


def _local_imports(tree: ast.AST) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = (alias.asname and alias.name) or alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            value = getattr(value, attr)
        return value
    raise Unreadable(f"cannot import {dotted}")


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = _dotted(expr.value)
        return f"{inner}.{expr.attr}" if inner else None
    return None


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function, not of the functions and lambdas nested in it."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def exit_codes(func: Callable[..., Any], seen: frozenset[Any] = frozenset()) -> set[int]:
    """The integers ``func`` can return or exit with (see the module docstring)."""
    func = inspect.unwrap(func)
    if func in seen:
        return set()
    seen = seen | {func}
    tree = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
    module = inspect.getmodule(func)
    imports = _local_imports(tree)

    def callee(expr: ast.expr) -> list[Callable[..., Any]]:
        # strata_dev/bench/run.py: `_module(args.name).main(args)` runs an OFFLINE benchmark's main.
        if (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Call)
                and _dotted(expr.value.func) == "_module"):
            return [getattr(importlib.import_module(f"strata_dev.bench.{name}"), expr.attr)
                    for name in module.OFFLINE]  # type: ignore[union-attr]
        dotted = _dotted(expr)
        if dotted is None:
            raise Unreadable(f"{func.__qualname__}: cannot follow a call of {ast.unparse(expr)}")
        head, _, rest = dotted.partition(".")
        if head in imports:
            return [_resolve(imports[head] + (f".{rest}" if rest else ""))]
        if hasattr(module, head):
            value = getattr(module, head)
            for attr in rest.split(".") if rest else []:
                value = getattr(value, attr)
            return [value]
        raise Unreadable(f"{func.__qualname__}: cannot follow a call of {dotted}")

    def codes(expr: ast.expr | None) -> set[int]:
        if expr is None:
            return {0}
        if isinstance(expr, ast.Constant) and isinstance(expr.value, int):
            return {int(expr.value)}
        if isinstance(expr, ast.IfExp):
            return codes(expr.body) | codes(expr.orelse)
        if isinstance(expr, ast.BoolOp):
            return set().union(*(codes(v) for v in expr.values))
        if isinstance(expr, ast.Call) and _dotted(expr.func) == "int" and len(expr.args) == 1:
            return codes(expr.args[0])
        if isinstance(expr, ast.Call):
            return set().union(*(exit_codes(f, seen) for f in callee(expr.func)))
        raise Unreadable(f"{func.__qualname__}: cannot tell the exit code of `return {ast.unparse(expr)}`")

    found: set[int] = set()
    for node in _own_nodes(tree):
        if isinstance(node, ast.Return):
            found |= codes(node.value)
        elif (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
              and _dotted(node.exc.func) == "SystemExit"):
            arg = node.exc.args[0] if node.exc.args else None
            found |= codes(arg) if isinstance(arg, ast.Constant) and isinstance(arg.value, int) else {1}
    return found


def documented() -> dict[str, set[int]]:
    """docs/operations.md's "Exit codes" table: `strata ...` -> the codes its row names (`N`)."""
    text = OPERATIONS.read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[int]] = {}
    for line in section.splitlines():
        match = re.match(r"\|\s*`(strata [^`]*)`\s*\|(.*)\|\s*$", line)
        if match:
            rows[match.group(1).strip()] = {int(c) for c in re.findall(r"`(\d+)`", match.group(2))}
    return rows


COMMANDS = dict(leaf_commands(cli.build_parser()))


def test_every_command_is_found() -> None:
    assert {"strata stack status", "strata outbox drain", "strata bench", "strata server-key revoke"} <= set(COMMANDS)
    assert all(callable(f) for f in COMMANDS.values())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_commands_exit_codes_are_the_documented_ones(command: str) -> None:
    rows = documented()
    assert command in rows, f"docs/operations.md's exit-code table has no row for `{command}`"
    in_code = exit_codes(COMMANDS[command]) - EVERY_COMMAND
    assert rows[command] - EVERY_COMMAND == in_code, (
        f"`{command}` exits with {sorted(in_code)} (besides 2 and 130); docs/operations.md says {sorted(rows[command])}")


def test_the_table_names_no_command_that_does_not_exist() -> None:
    assert set(documented()) <= set(COMMANDS)


def test_the_epilog_lists_every_code() -> None:
    every = set().union(*(exit_codes(f) for f in COMMANDS.values())) | EVERY_COMMAND
    assert {int(code) for code, _ in EXIT_CODES} == every


def _sample_helper() -> int:
    return 4


def _sample_zero() -> int:
    return 0


def _sample_command(flag: bool) -> int:
    if flag:
        raise SystemExit("no")
    return _sample_helper() if flag else int(_sample_zero() or 5)


def _sample_opaque(values: list[int]) -> int:
    return values[0]


def test_the_reader_follows_calls_and_refuses_what_it_cannot_read() -> None:
    assert exit_codes(_sample_command) == {0, 1, 4, 5}
    with pytest.raises(Unreadable):
        exit_codes(_sample_opaque)


def test_every_sub_commands_help_ends_with_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("stack status", "outbox drain", "server-key revoke"):
        with pytest.raises(SystemExit):
            cli.main([*command.split(), "--help"])
        assert "exit codes:" in capsys.readouterr().out, command

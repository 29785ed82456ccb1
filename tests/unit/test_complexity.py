"""Bounds on cyclomatic complexity in ``core`` (issues 30 and 47), measured with radon as ``make complexity``
does: no function above 20, at most ten above 15, and no planner above 15. A planner is recognised by its signature, wherever
it lives: a function whose first parameter is the :class:`~core.domain.plan.ApplyView` and which
returns a :class:`~core.domain.plan.Plan`. The planners are module-level functions in the domain
(tested as values); a planner nested in a service (a closure over the service's arguments) is refused."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

CORE = Path(__file__).resolve().parents[2] / "core"
MAX_FUNCTION = 20
MAX_PLANNER = 15
ABOVE_15 = 10  # at most this many functions above complexity 15 (issue 47)


def _functions(blocks: list[Function | Class], prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, complexity) of every function and method, closures included."""
    for block in blocks:
        name = f"{prefix}{block.name}"
        if isinstance(block, Class):
            yield from _functions(list(block.methods), f"{name}.")
            yield from _functions(list(block.inner_classes), f"{name}.")
            continue
        yield name, block.complexity
        yield from _functions(list(block.closures), f"{name}.")


# radon's blocks of every module of core, by path from the repository root: read once for every test.
BLOCKS = {str(path.relative_to(CORE.parent)): cc_visit(path.read_text()) for path in sorted(CORE.rglob("*.py"))}


def _measured() -> list[tuple[str, str, int]]:
    found = []
    for path, blocks in BLOCKS.items():
        for name, complexity in _functions(blocks):
            found.append((path, name, complexity))
    return found


def _is_planner(node: ast.FunctionDef) -> bool:
    params = [*node.args.posonlyargs, *node.args.args]
    first = params[0].annotation if params else None
    return (isinstance(first, ast.Name) and first.id == "ApplyView"
            and isinstance(node.returns, ast.Name) and node.returns.id == "Plan")


def _planners() -> list[tuple[str, str, bool]]:
    """(path, qualified name as radon gives it, nested in another function) of every planner."""
    found: list[tuple[str, str, bool]] = []

    def visit(node: ast.AST, path: str, prefix: str, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                if _is_planner(child):
                    found.append((path, f"{prefix}{child.name}", nested))
                visit(child, path, f"{prefix}{child.name}.", True)
            elif isinstance(child, ast.ClassDef):
                visit(child, path, f"{prefix}{child.name}.", nested)
            else:
                visit(child, path, prefix, nested)

    for path in sorted(CORE.rglob("*.py")):
        visit(ast.parse(path.read_text()), str(path.relative_to(CORE.parent)), "", False)
    return found


MEASURED = _measured()
PLANNERS = _planners()


def test_the_measure_sees_functions_closures_and_methods() -> None:
    names = {(path, name) for path, name, _ in MEASURED}
    assert ("core/domain/planners.py", "replace_page") in names
    assert ("core/services/capture.py", "_capture.marker") in names
    assert ("core/adapters/rules/router.py", "RuleRouter.route_one") in names


def test_no_function_in_core_is_above_complexity_20() -> None:
    assert [(p, n, c) for p, n, c in MEASURED if c > MAX_FUNCTION] == []


def _above(bound: int) -> set[tuple[str, int]]:
    """(path, line) of every function or method above ``bound``: radon lists some methods both alone
    and in their class, so a function is counted once, by where it starts."""
    found: set[tuple[str, int]] = set()

    def visit(blocks: list[Function | Class], path: str) -> None:
        for block in blocks:
            if isinstance(block, Class):
                visit([*block.methods, *block.inner_classes], path)
                continue
            if block.complexity > bound:
                found.add((path, block.lineno))
            visit(list(block.closures), path)

    for path, blocks in BLOCKS.items():
        visit(blocks, path)
    return found


def test_at_most_ten_functions_in_core_are_above_complexity_15() -> None:
    above = sorted(_above(15))
    named = sorted((p, n, c) for p, n, c in MEASURED if c > 15)
    assert len(above) <= ABOVE_15, named


def test_the_planners_are_found_where_they_live() -> None:
    module_level = {(p, n) for p, n, nested in PLANNERS if not nested}
    assert module_level >= {("core/domain/planners.py", name)
                            for name in ("expire_reviews", "age_out", "cascade_page", "replace_page")}
    assert len(PLANNERS) >= 10


def test_no_planner_is_above_complexity_15() -> None:
    planners = {(p, n) for p, n, _ in PLANNERS}
    measured = [(p, n, c) for p, n, c in MEASURED if (p, n) in planners]
    assert len(measured) == len(planners)  # radon measured every planner the signature found
    assert [(p, n, c) for p, n, c in measured if c > MAX_PLANNER] == []


def test_no_service_nests_a_planner() -> None:
    assert [(p, n) for p, n, inner in PLANNERS if inner and p.startswith("core/services/")] == []

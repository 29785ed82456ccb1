"""Bounds on cyclomatic complexity in ``core`` (issue 30), measured with radon as ``make complexity``
does: no function above 20, and no planner above 15: a function named ``plan`` (nested in the
service that applies it) or any function of ``core/domain/planners.py`` (the planners as values)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

CORE = Path(__file__).resolve().parents[2] / "core"
MAX_FUNCTION = 20
MAX_PLANNER = 15


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


def _measured() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        for name, complexity in _functions(cc_visit(path.read_text())):
            found.append((str(path.relative_to(CORE.parent)), name, complexity))
    return found


MEASURED = _measured()


def test_the_measure_sees_functions_closures_and_methods() -> None:
    names = {(path, name) for path, name, _ in MEASURED}
    assert ("core/services/capture.py", "replace_source.plan") in names
    assert ("core/domain/routing.py", "RuleRouter.route_one") in names


def test_no_function_in_core_is_above_complexity_20() -> None:
    assert [(p, n, c) for p, n, c in MEASURED if c > MAX_FUNCTION] == []


PLANNERS = "core/domain/planners.py"


def test_no_planner_is_above_complexity_15() -> None:
    planners = [(p, n, c) for p, n, c in MEASURED if n.rpartition(".")[2] == "plan" or p == PLANNERS]
    assert len(planners) >= 10  # the services' planners are found
    assert {n for p, n, _ in planners if p == PLANNERS} >= {"expire_reviews", "age_out"}
    assert [(p, n, c) for p, n, c in planners if c > MAX_PLANNER] == []

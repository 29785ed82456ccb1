"""The import graph of ``core`` runs downward only, without circles (docs/architecture.md, "Code
layout"; issue 30).

Every ``import`` in a module counts, the ones inside functions and under ``TYPE_CHECKING``
included: a lazy import is still an arrow. The floors, lowest first, are the ones the code layout
names: the error tree (and the package's version); the settings and the pure domain; the ports
(and logging); the services and the adapters, side by side and never importing each other; the
composition root (``core/bootstrap.py``); the entry points (``core/api``, ``core/functions_entry.py``,
``core/start_check.py``). Inside ``core/api`` the route declarations sit below the route modules,
which sit below the app and the MCP server that import them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"

FLOORS: dict[str, int] = {
    "core": 0,  # the package itself: __version__
    "core.errors": 0,
    "core.config": 1,
    "core.domain": 1,
    "core.ports": 2,
    "core.logs": 2,
    "core.tracing": 2,
    "core.metering": 2,
    "core.services": 3,
    "core.adapters": 3,
    "core.bootstrap": 4,
    "core.api": 5,
    "core.functions_entry": 5,
    "core.start_check": 5,
}
# Floors of equal height that must not import each other.
SIBLINGS = {("core.services", "core.adapters"), ("core.adapters", "core.services")}
# The entry points, the only importers of the composition root.
BOOTSTRAP_IMPORTERS = {"core.functions_entry", "core.start_check", "core.api.app"}
# Inside core/api: declarations (and the edge checks, auth, schemas, OpenAPI) < route modules < app.
API_TOP = {"core.api.app", "core.api.mcp"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(CORE.rglob("*.py")):
        parts = path.relative_to(CORE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> Iterator[tuple[str, str, int]]:
    """(module, what it imports, line) for every import of a core module, relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from core.api import routes`` imports the module core.api.routes
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:  # ``core.domain.records.MemoryItem`` → its module
                name = name.rpartition(".")[0]
            if name.startswith("core") and name in MODULES and name != module:
                yield module, name, node.lineno


EDGES = sorted({edge for module, path in MODULES.items() for edge in _imported(module, path)})


def _floor_name(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def _api_level(module: str) -> int:
    if module in API_TOP:
        return 2
    return 1 if module.endswith("routes") else 0


def test_the_graph_is_read() -> None:
    # the scan sees the arrows the code layout describes (a broken scan would pass everything)
    pairs = {(a, b) for a, b, _ in EDGES}
    assert ("core.api.app", "core.api.routes") in pairs
    assert ("core.api.app", "core.api.mcp") in pairs  # imported inside a function
    assert ("core.bootstrap", "core.config") in pairs
    assert set(map(_floor_name, MODULES)) <= set(FLOORS)


def test_no_import_goes_up_a_floor() -> None:
    upward = []
    for a, b, line in EDGES:
        fa, fb = _floor_name(a), _floor_name(b)
        inside_api_upward = fa == fb == "core.api" and _api_level(b) > _api_level(a)
        if FLOORS[fb] > FLOORS[fa] or (fa, fb) in SIBLINGS or inside_api_upward:
            upward.append(f"{a}:{line} imports {b}")
    assert upward == []


def test_only_the_entry_points_import_the_composition_root() -> None:
    importers = {a for a, b, _ in EDGES if b == "core.bootstrap"}
    assert importers <= BOOTSTRAP_IMPORTERS


def test_there_is_no_circle_among_core_modules() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for a, b, _ in EDGES:
        graph[a].add(b)
    # Tarjan's strongly connected components, iteratively: any component of two or more is a circle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    assert circles == []


def test_no_private_name_is_imported_from_another_api_module() -> None:
    taken = []
    for module, path in MODULES.items():
        if not module.startswith("core.api"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core"):
                taken += [f"{module}:{node.lineno} {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.endswith("__")]
    assert taken == []

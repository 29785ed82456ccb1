"""The :class:`core.ports.Store` port stays narrow, with one way to write (issue 47).

Services write memory items through the unit of work (``Store.apply``, ``Store.apply_steps``, steps
built by ``Step.of``), the drain's events through the ``Outbox`` port, and any other document
through one named :class:`core.domain.changes.Change` (``Store.write``) or a compare-and-swap on one
document (``Store.swap``). The batch, create, increment, guarded, fenced, tree-delete and lease
writes folded into those two; the apply's mechanics (``_transact``) belong to each implementation;
the listings are one ``children``. What a service, an API route or a developer tool calls on the
port is checked here, and every change's name is a literal found in one place only.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from core.ports import Store

ROOT = Path(__file__).resolve().parents[2]
MAX_METHODS = 20
# What the port no longer has, and what replaced it.
FOLDED = {
    "set": "commit([Write('set', ...)])",
    "update": "commit([Write('update', ...)])",
    "delete": "commit([Write('delete', ...)])",
    "update_if_unchanged": "update_if(..., seen=doc)",
    "get_versioned": "get_all_versioned([path])[path]",
    "step": "Step.of(..., clock=ctx.now)",
    "journaled": "get(paths.operation(uid, ids.operation_id(uid, kind, key)))",
    "document_ids": "children(collection)",
    "child_collections": "children(document)",
    "has_children": "children(document)",
    "transact": "the implementation's _transact",
    "committed": "the port's _committed",
    "commit": "write(Change(name, [Write(...), ...]))",
    "create": "write(Change(name, [Write('create', ...)]))",
    "increment": "write(Change(name, [Write('set', path, {field: Increment(1)}, merge=True)])).counts[path]",
    "update_if": "swap(path, lambda d: (True, data) if cond(d) else (False, None), exhausted=False)",
    "delete_tree": "write(Change(name, [Write('purge', path)]))",
    "fenced_write": "write(Change(name, [Write('set', ...)], fenced=uid, guard=..., refuse=...))",
    "take_lease": "swap(path, lambda d: outbox.take(d, ...), exhausted=False)",
    "release_lease": "swap(path, lambda d: outbox.release(d, ...), exhausted=honour_dirty)",
}
# What a caller may call on the port: the reads, the fence, the head, the unit of work, the two writes.
ALLOWED = {"get", "get_all", "query", "scan", "children", "get_all_versioned", "read_fence", "head_sequence",
           "apply", "apply_steps", "write", "swap"}
# strata_dev's callers of something named ``store`` that is not the port: the local Pinecone
# endpoint's own vector store, and the in-memory fake's seeding helpers a bench's fake world uses.
NOT_THE_PORT = {"strata_dev/localstack/pinecone_local.py"}
FAKE_HELPERS = {"put", "collection"}


def _methods() -> dict[str, object]:
    return {name: value for name, value in vars(Store).items() if inspect.isfunction(value)}


def test_the_store_port_has_at_most_20_methods() -> None:
    methods = _methods()
    assert len(methods) <= MAX_METHODS, sorted(methods)  # private ones (``_transact``) included
    public_or_abstract = [n for n, f in methods.items()
                          if not n.startswith("_") or getattr(f, "__isabstractmethod__", False)]
    assert len(public_or_abstract) <= MAX_METHODS, sorted(public_or_abstract)


def test_the_folded_methods_are_gone_from_the_port() -> None:
    assert not set(FOLDED) & set(vars(Store))


def _calls_of_folded_names(path: Path, *, bare: bool) -> list[str]:
    """``<anything>.store.<folded>(...)`` calls in ``path`` (and ``store.<folded>(...)`` with ``bare``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FOLDED):
            continue
        owner = node.func.value
        if (isinstance(owner, ast.Attribute) and owner.attr == "store") or (
                bare and isinstance(owner, ast.Name) and owner.id == "store"):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} store.{node.func.attr} → {FOLDED[node.func.attr]}")
    return found


def test_no_caller_uses_a_folded_store_method() -> None:
    found = [call for path in sorted((ROOT / "core").rglob("*.py"))
             for call in _calls_of_folded_names(path, bare=True)]
    # strata_dev has other stores (the local Pinecone endpoint's): only ``ctx.store`` is the port there.
    found += [call for path in sorted((ROOT / "strata_dev").rglob("*.py"))
              for call in _calls_of_folded_names(path, bare=False)]
    assert found == []


def _store_calls(path: Path, *, bare: bool) -> list[tuple[int, str]]:
    """(line, method) of every ``<anything>.store.<method>(...)`` call in ``path`` (and
    ``store.<method>(...)`` with ``bare``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        if (isinstance(owner, ast.Attribute) and owner.attr == "store") or (
                bare and isinstance(owner, ast.Name) and owner.id == "store"):
            found.append((node.lineno, node.func.attr))
    return found


def _callers() -> list[tuple[Path, bool]]:
    """The modules that use the port: services and API routes (a bare ``store`` is the port
    there too), and the developer tools."""
    core = [(p, True) for folder in ("core/services", "core/api") for p in sorted((ROOT / folder).glob("*.py"))]
    tools = [(p, False) for p in sorted((ROOT / "strata_dev").rglob("*.py"))
             if str(p.relative_to(ROOT)) not in NOT_THE_PORT]
    return core + tools


def test_callers_use_only_the_ports_reads_and_its_two_writes() -> None:
    found = []
    for path, bare in _callers():
        allowed = ALLOWED | (FAKE_HELPERS if not bare else set())
        found += [f"{path.relative_to(ROOT)}:{line} store.{method}" + (f" → {FOLDED[method]}" if method in FOLDED else "")
                  for line, method in _store_calls(path, bare=bare) if method not in allowed]
    assert found == []


def _change_names() -> list[tuple[str, str | None]]:
    """(where, the literal name or None) of every ``Change(...)`` in core and strata_dev."""
    found = []
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "strata_dev").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Change"):
                continue
            given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            name = given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else None
            found.append((f"{path.relative_to(ROOT)}:{node.lineno}", name))
    return found


def test_every_change_has_a_literal_name_found_in_one_place() -> None:
    names = _change_names()
    assert names, "no Change found: the scan is broken"
    assert [where for where, name in names if name is None] == []
    by_name: dict[str, list[str]] = {}
    for where, name in names:
        by_name.setdefault(str(name), []).append(where)
    assert {name: places for name, places in by_name.items() if len(places) > 1} == {}

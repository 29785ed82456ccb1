"""The :class:`core.ports.Store` port stays narrow, with one way to write (issue 47).

Services write memory items through the unit of work (``Store.apply``, ``Store.apply_steps``, steps
built by ``Step.of``), the drain's events through the ``Outbox`` port, and any other document
through ``Store.commit`` (a batch of ``Write``) or the guarded writes (``update_if``,
``fenced_write``, ``create``). The single-write helpers folded into ``commit``; the apply's
mechanics (``_transact``) belong to each implementation; the listings are one ``children``.
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
}


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

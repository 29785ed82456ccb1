"""One path layout: ``core/domain/paths.py`` names every collection, and nothing else in ``core``
spells one as a path.

A scan of the source (not of the running code): in every module of ``core`` but the layout itself,
no string starts with a collection's name and a slash (``"memory_items/..."``, ``f"users/{uid}"``),
no path is joined by hand from a collection variable (``f"{collection}/{id}"``), and no collection
name is passed to a path or query builder, compared with a ``collection`` variable or bound to a
``*COLLECTION*`` / ``REGISTRY`` name. The names are written out here (the store layout of contract
section 5), not taken from the module under test.
"""

from __future__ import annotations

import ast
from pathlib import Path

from core.domain import paths

CORE = Path(__file__).resolve().parents[2] / "core"
LAYOUT = CORE / "domain" / "paths.py"
COLLECTIONS = frozenset({
    "users", "conversations", "memory_items", "capture_runs", "memory_commits", "memory_operations",
    "memory_state", "memory_outbox", "memory_review_queue", "memory_graph_assertions", "knowledge_nodes",
    "knowledge_edges", "consolidation_attempts", "deletion_receipts", "developer_webhooks", "webhook_deliveries",
    "client_devices", "api_keys", "memories", "short_term", "action_items", "goals", "account_deletions",
    "memory_controls", "consolidation_schedule", "projection_rebuilds", "api_key_hashes", "consolidation_walk",
    "request_keys", "rate_limits", "server_keys", "server_key_hashes",
})
BUILDERS = frozenset({"doc", "col", "collection", "document", "rel", "_q", "scan", "collection_group"})


def _is_collection(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in COLLECTIONS


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def violations(source: str) -> list[tuple[int, str]]:
    """(line, what) of each path spelled outside the layout in ``source``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            head = node.value.split("/", 1)[0]
            if "/" in node.value and head in COLLECTIONS:
                found.append((node.lineno, f"path literal {node.value!r}"))
        elif isinstance(node, ast.JoinedStr) and len(node.values) >= 2:
            first, second = node.values[0], node.values[1]
            if (isinstance(first, ast.FormattedValue) and "collection" in _name(first.value).lower()
                    and isinstance(second, ast.Constant) and str(second.value).startswith("/")):
                found.append((node.lineno, "a path joined by hand from a collection"))
        elif isinstance(node, ast.Call) and _name(node.func) in BUILDERS:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and _is_collection(arg):
                    found.append((node.lineno, f"collection {arg.value!r} passed to {_name(node.func)}()"))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any("collection" in _name(s).lower() for s in sides) and any(_is_collection(s) for s in sides):
                found.append((node.lineno, "a collection compared by name"))
        elif isinstance(node, ast.Assign) and _is_collection(node.value):
            for target in node.targets:
                if "COLLECTION" in _name(target) or _name(target) == "REGISTRY":
                    found.append((node.lineno, f"{_name(target)} bound to a literal"))
    return found


def test_no_module_of_core_spells_a_path_the_layout_names() -> None:
    offenders = [f"{path.relative_to(CORE.parent)}:{line}: {what}"
                 for path in sorted(CORE.rglob("*.py")) if path != LAYOUT
                 for line, what in violations(path.read_text())]
    assert offenders == []


def test_the_scan_finds_each_kind_of_spelled_path() -> None:
    source = '''
a = paths.doc(uid, "memory_items", mid)
b = f"memory_graph_assertions/{mid}"
c = f"{collection}/{row_id}"
d = "consolidation_schedule/" + uid
if collection == "short_term":
    pass
DELIVERY_COLLECTION = "webhook_deliveries"
e = client.collection("users").document(uid)
'''
    assert sorted({line for line, _ in violations(source)}) == [2, 3, 4, 5, 6, 8, 9]
    clean = '''
a = paths.memory_item(uid, mid)
JOBS = ("memories", "action_items", "goals")  # capture's job names, not paths
body = {"memories": [], "short_term": 1}
'''
    assert violations(clean) == []


def test_the_layout_names_the_contract_paths() -> None:
    assert paths.memory_item("u1", "m1") == "users/u1/memory_items/m1"
    assert paths.conversation("u1", "c1") == "users/u1/conversations/c1"
    assert paths.capture_run("u1", "c1") == "users/u1/capture_runs/c1"
    assert paths.outbox_event("u1", "e1") == "users/u1/memory_outbox/e1"
    assert paths.commit("u1", "k1") == "users/u1/memory_commits/k1"
    assert paths.operation("u1", "o1") == "users/u1/memory_operations/o1"
    assert paths.review_row("u1", "r1") == "users/u1/memory_review_queue/r1"
    assert paths.graph_assertion("u1", "m1") == "users/u1/memory_graph_assertions/m1"
    assert paths.control("u1") == "users/u1/memory_state/apply_control"
    assert paths.consolidation_lease("u1") == "users/u1/memory_state/consolidation_lease"
    assert paths.projection_lease("u1") == "users/u1/memory_state/projection_lease"
    assert paths.rebuild_marker("u1", "vector") == "users/u1/memory_state/rebuild_vector"
    assert paths.rebuild_run("vector") == "projection_rebuilds/vector"
    assert paths.account_deletion("u1") == "account_deletions/u1"
    assert paths.schedule_entry("u1") == "consolidation_schedule/u1"
    assert paths.CONTROLS_GLOBAL == "memory_controls/global"
    assert paths.conversation_of("users/u1/conversations/c1") == ("u1", "c1")
    assert paths.conversation_of("users/u1/memory_items/c1") is None
    assert set(paths.USER_COLLECTIONS) | set(paths.TOP_LEVEL_COLLECTIONS) <= COLLECTIONS

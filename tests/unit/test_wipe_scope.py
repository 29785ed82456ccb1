"""The account wipe's scope: every collection Strata writes under ``users/{uid}``, and nothing else.

Two checks. A scan of ``core`` finds every collection a per-user path is built from
(``paths.doc(uid, X, …)``, ``paths.col(uid, X)``, and the layout's own ``doc(uid, X, …)``
builders) and requires each to be declared in ``paths.USER_COLLECTIONS`` (or be the conversations):
a new collection that the wipe would miss fails here. And, on the in-memory store, the wipe deletes
each declared collection and leaves the ``users/{uid}`` document and an app's own collections.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from core.domain import paths
from core.services import accounts
from tests.unit.fakes.ports import world
from tests.unit.fakes.store import InMemoryStore

CORE = Path(__file__).resolve().parents[2] / "core"
UID = "u1"


def _resolve(node: ast.AST, module: str) -> str | None:
    """The string a collection argument names: ``paths.X`` / ``store_paths.X``, a module-level alias
    (``COLLECTION = paths.API_KEYS``) or, inside the layout, a bare constant."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id.endswith("paths"):
        value = getattr(paths, node.attr, None)
        return value if isinstance(value, str) else None
    if isinstance(node, ast.Name) and node.id.isupper():
        value = getattr(importlib.import_module(module), node.id, None)
        return value if isinstance(value, str) else None
    return None


def per_user_collections() -> set[str]:
    found: set[str] = set()
    for path in sorted(CORE.rglob("*.py")):
        module = ".".join(path.relative_to(CORE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and len(node.args) >= 2):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            in_layout = module == "core.domain.paths" and isinstance(func, ast.Name)
            if name in ("doc", "col") and (owner.endswith("paths") or in_layout):
                collection = _resolve(node.args[1], module)
                if collection is not None:
                    found.add(collection)
    return found


def test_every_collection_core_writes_under_a_user_is_declared_for_the_wipe() -> None:
    found = per_user_collections()
    # The scan sees the collections it must (a scan that found nothing would pass vacuously).
    assert {"memory_items", "api_keys", "client_devices", "deletion_receipts", "conversations"} <= found, found
    assert found - {paths.CONVERSATIONS} <= set(paths.USER_COLLECTIONS), found - set(paths.USER_COLLECTIONS)


def _seed(store: InMemoryStore) -> None:
    put = store.put
    put(paths.user(UID), {"display_name": "Ana", "plan": "pro"})
    put(f"{paths.user(UID)}/app_settings/prefs", {"theme": "dark"})
    put(f"{paths.user(UID)}/app_settings/prefs/history/h1", {"changed": "theme"})
    for collection in (*paths.USER_COLLECTIONS, paths.CONVERSATIONS):
        put(paths.doc(UID, collection, "d1"), {"x": 1})
        put(f"{paths.doc(UID, collection, 'd1')}/inner/i1", {"y": 2})


def test_the_wipe_deletes_each_declared_collection_and_leaves_the_apps_data() -> None:
    for keep in (False, True):
        w = world(wipe_conversations=not keep)
        _seed(w.store)
        first = accounts.delete_account(w.ctx, UID)
        left = set(w.store.children(paths.user(UID)))
        assert left == ({"app_settings", "conversations"} if keep else {"app_settings"}), (keep, left)
        assert w.store.get(paths.user(UID)) == {"display_name": "Ana", "plan": "pro"}
        assert w.store.get(f"{paths.user(UID)}/app_settings/prefs/history/h1") == {"changed": "theme"}
        # A completed wipe called again answers the same receipt: the app's data start nothing over.
        assert accounts.delete_account(w.ctx, UID) == first
        assert (w.store.get(paths.account_deletion(UID)) or {})["generation"] == 1

"""The names an app chooses (``STRATA_DATA_ROOT``, ``STRATA_CONVERSATIONS_PATH``): every path of the
layout follows them, the triggers' pattern and the rules merge too, and malformed names are refused
when the settings are built.

The expected paths are written out here from the layout the contract describes (a user's collections
under the data root, the conversations at their own path), not taken from the module under test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core import config
from core.domain import paths
from core.errors import ConfigurationError
from core.services import accounts, capture
from strata_dev import rules
from tests.unit.fakes.ports import World, world
from tests.unit.fakes.store import InMemoryStore

ROOT = "apps/acme/strata_users/{uid}"
CONVERSATIONS = "chats/{uid}/threads"


@pytest.fixture
def named() -> Iterator[paths.Layout]:
    """The process's layout set to the app's names for one test, the defaults again after it."""
    yield paths.configure(ROOT, CONVERSATIONS)
    paths.configure()


def test_the_defaults_are_todays_names() -> None:
    assert paths.layout() == paths.Layout("users/{uid}", "users/{uid}/conversations")
    assert config.default("data_root") == "users/{uid}"
    assert config.default("conversations_path") == "users/{uid}/conversations"
    assert paths.layout().trigger_pattern() == "users/{uid}/conversations/{conversation_id}"


def test_every_per_user_path_is_under_the_chosen_root(named: paths.Layout) -> None:
    assert paths.user("u1") == "apps/acme/strata_users/u1"
    assert paths.users_collection() == "apps/acme/strata_users"
    assert paths.memory_item("u1", "m1") == "apps/acme/strata_users/u1/memory_items/m1"
    assert paths.capture_run("u1", "c1") == "apps/acme/strata_users/u1/capture_runs/c1"
    assert paths.control("u1") == "apps/acme/strata_users/u1/memory_state/apply_control"
    assert paths.outbox_event("u1", "e1") == "apps/acme/strata_users/u1/memory_outbox/e1"
    assert paths.api_key("u1", "k1") == "apps/acme/strata_users/u1/api_keys/k1"
    assert paths.col("u1", paths.REQUEST_KEYS) == "apps/acme/strata_users/u1/request_keys"
    # A plan's relative path resolves under the root, the conversations' at their own place.
    assert paths.doc("u1", paths.GRAPH_ASSERTIONS, "m1") == "apps/acme/strata_users/u1/memory_graph_assertions/m1"
    assert paths.doc("u1", paths.CONVERSATIONS, "c1") == "chats/u1/threads/c1"
    # Top-level collections do not move.
    assert paths.account_deletion("u1") == "account_deletions/u1"
    assert paths.schedule_entry("u1") == "consolidation_schedule/u1"
    assert paths.api_key_lookup("d") == "api_key_hashes/d"


def test_the_conversations_live_at_their_own_path(named: paths.Layout) -> None:
    assert paths.conversation("u1", "c1") == "chats/u1/threads/c1"
    assert paths.col("u1", paths.CONVERSATIONS) == "chats/u1/threads"
    assert paths.conversations_parent("u1") == ("chats/u1", "threads")
    assert paths.conversation_of("chats/u1/threads/c1") == ("u1", "c1")
    assert paths.conversation_of("users/u1/conversations/c1") is None  # the default path is not watched
    assert paths.conversation_of("chats/u1/threads/c1/extra/x") is None
    assert paths.conversation_of("chats/u1/other/c1") is None
    assert named.trigger_pattern() == "chats/{uid}/threads/{conversation_id}"


def test_the_owner_of_a_path_is_read_against_the_names(named: paths.Layout) -> None:
    assert paths.owner("apps/acme/strata_users/u1/memory_outbox/e1") == "u1"
    assert paths.owner("chats/u2/threads/c1") == "u2"
    assert paths.owner("apps/acme/strata_users/u1") is None  # the root itself is no document below it
    assert paths.owner("users/u1/memory_outbox/e1") is None
    assert paths.owner("account_deletions/u1") is None


@pytest.mark.parametrize(("field", "value", "why"), [
    ("data_root", "users", "{uid} once"),
    ("data_root", "{uid}", "{uid} once"),
    ("data_root", "users/{uid}/strata", "ending in {uid}"),
    ("data_root", "users/{uid}/x/{uid}", "{uid} once"),
    ("data_root", "users/{user}", "segment"),
    ("data_root", "users//{uid}", "segment"),
    ("data_root", "us ers/{uid}", "segment"),
    ("data_root", "__users__/{uid}", "segment"),
    ("data_root", "memory_items/{uid}", "Strata's collection ids"),
    ("conversations_path", "users/{uid}", "collection path"),
    ("conversations_path", "conversations", "{uid} once"),
    ("conversations_path", "{uid}/conversations", "{uid} once"),
    ("conversations_path", "users/{uid}/memory_items", "Strata's collection ids"),
    ("conversations_path", "users/{uid}/chats/", "segment"),
])
def test_malformed_names_are_refused_when_the_settings_are_built(field: str, value: str, why: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        config.load(**{field: value})
    assert config.env_name(field) in str(refused.value) and why in str(refused.value)
    with pytest.raises(ValueError):
        paths.configure(**{"data_root" if field == "data_root" else "conversations": value})
    assert paths.layout() == paths.Layout()  # a refused layout leaves the process's as it was


def test_the_rules_fragment_guards_the_chosen_conversations_path() -> None:
    layout = paths.Layout(ROOT, CONVERSATIONS)
    merged = rules.default_rules(layout)
    assert "match /chats/{strataUid}/threads/{strataConversationId} {" in merged
    assert "/users/{strataUid}/conversations/" not in merged
    assert rules.default_rules() == rules.DEFAULT_RULES.read_text(encoding="utf-8")  # the default file unchanged


@pytest.mark.parametrize("opening", [
    "match /apps/acme/strata_users/{uid}/memory_items/{id} {\n      allow read: if true;\n    }",
    "match /apps/acme/strata_users/{uid}/{coll}/{id} {\n      allow read: if true;\n    }",
    "match /chats/{uid}/threads/{id} {\n      allow write: if true;\n    }",
    "match /chats/{uid}/{coll}/{id} {\n      allow write: if true;\n    }",
])
def test_app_rules_opening_the_chosen_paths_are_refused(opening: str) -> None:
    app = ("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    "
           + opening + "\n  }\n}\n")
    with pytest.raises(ConfigurationError):
        rules.merge(app, layout=paths.Layout(ROOT, CONVERSATIONS))


@pytest.mark.parametrize("collection", ["api_key_hashes", "server_keys", "server_key_hashes", "deletion_receipts",
                                        "consolidation_walk", "rate_limits", "account_deletions"])
def test_app_rules_opening_a_top_level_collection_of_stratas_are_refused(collection: str) -> None:
    """Key hashes, server keys and receipts are Strata's under any names the app chose."""
    app = ("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
           f"    match /{collection}/{{id}} {{\n      allow read: if true;\n    }}\n  }}\n}}\n")
    for layout in (paths.Layout(), paths.Layout(ROOT, CONVERSATIONS)):
        with pytest.raises(ConfigurationError, match="top-level"):
            rules.merge(app, layout=layout)


def test_the_apps_own_users_collection_is_free_when_strata_keeps_elsewhere() -> None:
    app = ("rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
           "    match /users/{uid}/{coll}/{id} {\n      allow read: if request.auth.uid == uid;\n    }\n  }\n}\n")
    merged = rules.merge(app, layout=paths.Layout(ROOT, CONVERSATIONS))
    assert "match /users/{uid}/{coll}/{id}" in merged and "match /chats/{strataUid}/threads/" in merged
    with pytest.raises(ConfigurationError):
        rules.merge(app, layout=paths.Layout())  # under the default names the same rule opens Strata's


@pytest.fixture
def named_world() -> Iterator[World]:
    """An in-memory world whose settings carry the app's names (its context sets the layout)."""
    yield world(data_root=ROOT, conversations_path=CONVERSATIONS)
    paths.configure()


def _subtree(store: InMemoryStore, prefix: str) -> set[str]:
    return {p for p in store.docs if p == prefix or p.startswith(prefix + "/")}


def test_capture_and_wipe_use_the_chosen_names(named_world: World) -> None:
    w = named_world
    store = w.store
    store.put("users/u1", {"display_name": "Ana"})  # the app's own user document and data
    store.put("users/u1/conversations/app-c1", {"title": "the app's own"})
    store.put("apps/acme/strata_users/u1/app_notes/n1", {"text": "the app's, under Strata's root"})
    doc = {"status": "completed", "transcript_segments": [
        {"id": "s0", "text": "I live in Lisbon.", "is_user": True, "speaker": "SPEAKER_0"}]}
    store.put("chats/u1/threads/c1", doc)
    result = capture.capture_conversation(w.ctx, "u1", "c1", doc)
    assert result.created >= 1
    items = store.collection("apps/acme/strata_users/u1/memory_items")
    assert items and all(item["source_ids"] == ["c1"] for item in items.values())
    assert store.get("apps/acme/strata_users/u1/capture_runs/c1") is not None
    assert not _subtree(store, "users/u1") - {"users/u1", "users/u1/conversations/app-c1"}

    accounts.delete_account(w.ctx, "u1")
    assert store.get("chats/u1/threads/c1") is None  # the conversations go (STRATA_WIPE_CONVERSATIONS)
    assert _subtree(store, "apps/acme/strata_users/u1") == {"apps/acme/strata_users/u1/app_notes/n1"}
    assert store.get("users/u1") == {"display_name": "Ana"}
    assert store.get("users/u1/conversations/app-c1") == {"title": "the app's own"}

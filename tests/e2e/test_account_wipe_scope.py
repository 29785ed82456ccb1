"""The account wipe removes what Strata owns and nothing of the app's (issue 45).

In an app's own Firebase project ``users/{uid}`` is the app's: its profile document with the app's
fields, and subcollections of its own. Strata keeps its per-user collections beside them
(docs/data-model.md, *Firestore layout*). ``DELETE /v1/users/delete-account`` must delete every one
of Strata's collections and leave the app's document and collections exactly as they were; the
conversations go too unless ``STRATA_WIPE_CONVERSATIONS`` is off. The collection names below are
the ones docs/data-model.md lists, written out here, not read from the code under test.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.config import load
from core.errors import RetryableError
from core.services import accounts
from tests.support.firestore_checks import wait_for

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
# docs/data-model.md's table of what Strata keeps under users/{uid} (the conversations aside).
STRATA_COLLECTIONS = {
    "memory_items", "memory_commits", "memory_operations", "memory_state", "memory_graph_assertions",
    "memory_outbox", "memory_review_queue", "consolidation_attempts", "capture_runs", "action_items", "goals",
    "knowledge_nodes", "knowledge_edges", "client_devices", "developer_webhooks", "webhook_deliveries",
    "api_keys", "deletion_receipts", "memories", "short_term", "request_keys",
}
PROFILE = {"display_name": "Ana Lima", "plan": "pro", "onboarded": True, "nested": {"locale": "pt-PT"}}
APP_DOCS = {
    "app_settings/prefs": {"theme": "dark", "notifications": False},
    "app_settings/prefs/history/h1": {"changed": "theme"},  # the app's own nesting, two levels down
    "chats/c1": {"title": "the app's own chat log", "messages": 3},
}
DEVICE = {"X-App-Platform": "ios", "X-Device-Id-Hash": "3f9a1c2b"}


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _seed_app(ctx: Context, uid: str) -> None:
    ctx.client.document(f"users/{uid}").set(PROFILE)
    for path, data in APP_DOCS.items():
        ctx.client.document(f"users/{uid}/{path}").set(data)


def _seed_strata(http: httpx.Client, ctx: Context, uid: str) -> None:
    """Strata's data through its own API: a conversation (captured: memories, ledger, outbox, capture
    run), explicit memories, a delete (a receipt), a key, a webhook, a device."""
    headers = {**_auth(uid), **DEVICE}
    created = http.post("/v1/conversations", headers={**headers, "Idempotency-Key": "k1"}, json={"id": "c-wipe", "transcript_segments": [
        {"id": "s1", "text": "I moved to Lisbon in March and I work as a nurse.", "speaker": "SPEAKER_00",
         "is_user": True}]})
    assert created.status_code == 201, created.text
    memory = http.post("/v1/memories", headers=headers, json={"content": "I grow chillies on the balcony"})
    assert memory.status_code == 201, memory.text
    kept = http.post("/v1/memories", headers=headers, json={"content": "I play the cello"})
    assert kept.status_code == 201, kept.text
    deleted = http.delete(f"/v1/memories/{memory.json()['id']}", headers=headers)
    assert deleted.status_code == 200, deleted.text
    key = http.post("/v1/keys", headers=headers, json={"name": "agent", "scope": "read"})
    assert key.status_code == 201, key.text
    hook = http.put("/v1/users/developer/webhooks/memory_created", headers=headers,
                    json={"url": "http://127.0.0.1:9/hook", "enabled": False})
    assert hook.status_code == 200, hook.text
    wait_for(lambda: ctx.client.document(f"users/{uid}/capture_runs/c-wipe").get().exists, timeout=60,
             what="the conversation's capture")


def _collections(ctx: Context, uid: str) -> set[str]:
    return {c.id for c in ctx.client.collection("users").document(uid).collections()}


def _app_state(ctx: Context, uid: str) -> dict[str, Any]:
    return {"profile": ctx.client.document(f"users/{uid}").get().to_dict(),
            **{path: ctx.client.document(f"users/{uid}/{path}").get().to_dict() for path in APP_DOCS}}


def _wipe(http: httpx.Client, uid: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120  # a bound on the retries of a documented 503, not a measurement
    while (answer := http.delete("/v1/users/delete-account", headers=_auth(uid))).status_code == 503:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.2)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_the_wipe_deletes_stratas_collections_and_leaves_the_apps_data(stack: dict[str, Any],
                                                                       http: httpx.Client) -> None:
    ctx, uid = Context(), f"wipe-{uuid.uuid4().hex[:12]}"
    _seed_app(ctx, uid)
    _seed_strata(http, ctx, uid)
    before = _collections(ctx, uid)
    written = before & STRATA_COLLECTIONS
    # The seeding reached most of Strata's collections, so the wipe has something to tell apart.
    assert {"memory_items", "memory_commits", "capture_runs", "api_keys", "deletion_receipts",
            "developer_webhooks", "client_devices", "conversations", "request_keys"} <= before, before
    assert {"app_settings", "chats"} <= before

    first = _wipe(http, uid)

    assert _collections(ctx, uid) == {"app_settings", "chats"}, (written, _collections(ctx, uid))
    assert _app_state(ctx, uid) == {"profile": PROFILE, **APP_DOCS}
    # Called again, the completed wipe is not started over by the app's data (the same receipt).
    again = _wipe(http, uid)
    assert again["receipt_id"] == first["receipt_id"], (first, again)
    assert ctx.client.document(f"account_deletions/{uid}").get().to_dict()["generation"] == 1
    # The account works afterwards and the app's data are still there.
    assert http.get("/v1/memories", headers=_auth(uid)).json()["memories"] == []
    assert _app_state(ctx, uid) == {"profile": PROFILE, **APP_DOCS}


def test_with_wipe_conversations_off_the_apps_conversations_stay(stack: dict[str, Any], http: httpx.Client) -> None:
    """``STRATA_WIPE_CONVERSATIONS=false``: an app that keeps its conversations as its own records
    keeps them; everything derived from them is still wiped (the service, on the same emulator)."""
    ctx, uid = Context(), f"wipe-{uuid.uuid4().hex[:12]}"
    _seed_app(ctx, uid)
    _seed_strata(http, ctx, uid)
    conversation = ctx.client.document(f"users/{uid}/conversations/c-wipe").get().to_dict()
    keeping = Context(load(wipe_conversations=False, keyword_purge="inline"))
    deadline = time.monotonic() + 120
    while True:
        try:
            accounts.delete_account(keeping, uid)
            break
        except RetryableError:  # a projection lease still held (the API's 503): call again
            assert time.monotonic() < deadline
            time.sleep(0.2)
    assert _collections(ctx, uid) == {"app_settings", "chats", "conversations"}
    assert ctx.client.document(f"users/{uid}/conversations/c-wipe").get().to_dict() == conversation
    assert _app_state(ctx, uid) == {"profile": PROFILE, **APP_DOCS}

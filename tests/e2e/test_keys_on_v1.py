"""Personal keys on ``/v1`` within their scope, and which credential made each write (issue 45;
docs/api.md, *Personal API keys*).

Over real HTTP on the stack: a ``read`` key lists, reads and searches through ``/v1`` but its
creates, edits and deletes are a 403 ``key_scope`` that writes nothing; a ``read+write`` key
creates, edits and deletes memories and creates a conversation; the routes documented as taking the
user's ID token only refuse any key with a 401. Every ledger commit a request makes records the
credential: the key's id (and the device the request named) or the ID token; a conversation
created through the API records it as ``created_by``.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.support.firestore_checks import user_documents

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
DEVICE = {"X-App-Platform": "web", "X-Device-Id-Hash": "0a1b2c3d"}


def _token(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _key(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _new_key(http: httpx.Client, uid: str, scope: str) -> dict[str, Any]:
    answer = http.post("/v1/keys", json={"name": f"{scope} agent", "scope": scope}, headers=_token(uid))
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _commits(ctx: Context, uid: str) -> list[dict[str, Any]]:
    rows = [s.to_dict() for s in ctx.client.collection(f"users/{uid}/memory_commits").stream()]
    return sorted(rows, key=lambda c: c["sequence"])


def test_a_read_key_reads_v1_and_its_writes_are_403_writing_nothing(http: httpx.Client) -> None:
    ctx, uid = Context(), f"keyv1-{uuid.uuid4().hex[:12]}"
    made = http.post("/v1/memories", json={"content": "My bike is a green Brompton"}, headers=_token(uid))
    assert made.status_code == 201, made.text
    memory_id = made.json()["id"]
    reader = _key(_new_key(http, uid, "read")["secret"])
    listed = http.get("/v1/memories", headers=reader)
    assert listed.status_code == 200 and [m["id"] for m in listed.json()["memories"]] == [memory_id]
    assert http.get(f"/v1/memories/{memory_id}", headers=reader).status_code == 200
    assert http.get(f"/v1/memories/{memory_id}/history", headers=reader).status_code == 200
    assert http.get("/v1/memories/search", params={"q": "bike"}, headers=reader).status_code == 200
    assert http.get("/v1/knowledge-graph", headers=reader).status_code == 200
    before = user_documents(ctx, uid)
    for method, path, body in (("POST", "/v1/memories", {"content": "I own a red kayak"}),
                               ("PATCH", f"/v1/memories/{memory_id}", {"visibility": "public"}),
                               ("DELETE", f"/v1/memories/{memory_id}", None),
                               ("POST", "/v1/conversations", {"transcript_segments": [
                                   {"id": "s1", "text": "I own a red kayak", "is_user": True}]})):
        answer = http.request(method, path, json=body, headers=reader)
        assert answer.status_code == 403 and answer.json()["error"]["code"] == "key_scope", (path, answer.text)
    after = user_documents(ctx, uid)
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)
               and not p.startswith(("memory_outbox", "memory_state/projection_lease", "api_keys", "knowledge_"))}
    assert not changed, changed


def test_a_read_write_key_writes_on_v1_and_each_commit_names_its_credential(http: httpx.Client) -> None:
    ctx, uid = Context(), f"keyv1-{uuid.uuid4().hex[:12]}"
    by_token = http.post("/v1/memories", json={"content": "I play the cello"}, headers=_token(uid))
    assert by_token.status_code == 201, by_token.text
    head = ctx.client.document(f"users/{uid}/memory_state/apply_control").get().to_dict()["sequence"]
    key = _new_key(http, uid, "read+write")
    writer = {**_key(key["secret"]), **DEVICE}
    created = http.post("/v1/memories", json={"content": "I grow chillies on the balcony"}, headers=writer)
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    edited = http.patch(f"/v1/memories/{memory_id}", json={"content": "I grow chillies and basil"}, headers=writer)
    assert edited.status_code == 200, edited.text
    deleted = http.delete(f"/v1/memories/{by_token.json()['id']}", headers=writer)
    assert deleted.status_code == 200, deleted.text
    conversation = http.post("/v1/conversations", headers=writer, json={
        "id": "c-agent", "transcript_segments": [{"id": "s1", "text": "I moved to Porto.", "is_user": True}]})
    assert conversation.status_code == 201, conversation.text

    by_key = {"kind": "personal_key", "key_id": key["id"], "device_id": "web_0a1b2c3d"}
    commits = [c for c in _commits(ctx, uid) if "credential" in c]  # the capture's commits carry none
    # The ID token's create (its commits up to the head read after it), then the key's create, edit
    # and delete, each one commit or more.
    token_commits = [c for c in commits if c["sequence"] <= head]
    key_commits = [c for c in commits if c["sequence"] > head]
    assert token_commits and all(c["credential"] == {"kind": "id_token"} for c in token_commits), token_commits
    assert {m for c in token_commits for m in c["memory_ids"]} == {by_token.json()["id"]}
    assert len(key_commits) >= 3 and all(c["credential"] == by_key for c in key_commits), key_commits
    assert {memory_id, by_token.json()["id"]} <= {m for c in key_commits for m in c["memory_ids"]}
    stored = ctx.client.document(f"users/{uid}/conversations/c-agent").get().to_dict()
    assert stored["created_by"] == by_key


def test_the_id_token_routes_refuse_a_key(http: httpx.Client) -> None:
    uid = f"keyv1-{uuid.uuid4().hex[:12]}"
    writer = _key(_new_key(http, uid, "read+write")["secret"])
    for method, path, body in (("GET", "/v1/keys", None), ("POST", "/v1/keys", {"name": "x", "scope": "read"}),
                               ("GET", "/v1/memories/export", None), ("DELETE", "/v1/users/delete-account", None),
                               ("GET", "/v1/users/developer/webhooks/memory_created", None),
                               ("GET", "/v3/memories", None)):
        answer = http.request(method, path, json=body, headers=writer)
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized", (path, answer.text)
    assert http.get("/v1/memories", headers=_token(uid)).status_code == 200  # the account is untouched

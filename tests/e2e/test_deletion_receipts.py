"""Deletion receipts on the whole local stack (issue 31).

Every kind of delete (one memory, delete-all, a conversation cascade, the account wipe) answers a
receipt id; ``GET /v1/deletions/{id}`` reaches ``confirmed`` for every store once the outbox drain
has run; the keyword index stays ``pending`` while Typesense is stopped and confirms once it is back;
no stored receipt holds any word of what was deleted; another user gets 404.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.services import projection, receipts
from strata_dev.localstack import faults
from tests.support import trace
from tests.support.firestore_checks import user_documents, wait_for

pytestmark = pytest.mark.e2e

STORES = {"memory_items", "review_queue", "graph", "keyword_index", "vector_index"}
LINES = ["By the way I moved to Lisbon in March.",
         "The doctor said my blood pressure is a bit high, so I'm cutting down on coffee."]
WORD = re.compile(r"\w+")


class User:
    def __init__(self, stack: dict[str, Any]) -> None:
        self.uid = f"u-receipt-{uuid.uuid4().hex[:10]}"
        self.ctx = Context()
        self.stack = stack

    def call(self, method: str, path: str, *, headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        auth = {"Authorization": f"Bearer {emulator_token(self.uid, 'demo-strata')}"}
        return httpx.request(method, self.stack["api_url"] + path, headers={**auth, **(headers or {})}, timeout=120,
                             **kwargs)

    def receipt(self, rid: str) -> dict[str, Any]:
        response = self.call("GET", f"/v1/deletions/{rid}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert set(body["stores"]) == STORES
        return body

    def contents(self) -> list[str]:
        return [m.content for m in trace.items(self.ctx, self.uid).values() if m.content]


def captured(stack: dict[str, Any], conversation_id: str = "c1") -> User:
    user = User(stack)
    trace.capture_now(user.ctx, user.uid, conversation_id, trace.conversation_doc(conversation_id, LINES))
    trace.converge(user.ctx, user.uid)  # projected: the delete has index entries to remove
    assert user.contents()
    return user


def _words(text: str) -> set[str]:
    return set(WORD.findall(text.casefold()))


def assert_content_free(user: User, rid: str, deleted: list[str], *, account: bool = False) -> None:
    """The stored receipt (its document's bytes, as JSON) and its API answer share no word with the
    deleted memories; the wipe's stored receipt holds no uid either."""
    words = set().union(*(_words(text) for text in deleted))
    assert words
    if account:
        stored = user.ctx.client.document(receipts._account_path(user.uid, rid)).get()
        assert stored.exists
        data = stored.to_dict() or {}
        assert set(data) == {"kind", "created_at", "expire_at", "stores"}, data  # ids and times only
        raw = json.dumps(data, default=str)
        assert user.uid not in raw
    else:
        data = user.ctx.paths.doc(user.uid, receipts.COLLECTION, rid).get().to_dict() or {}
        raw = json.dumps(data, default=str)
    leaked = words & (_words(raw) | _words(json.dumps(user.receipt(rid))))
    assert not leaked, f"the receipt holds deleted words {sorted(leaked)}: {raw}"


def states(body: dict[str, Any]) -> dict[str, str]:
    return {name: store["state"] for name, store in body["stores"].items()}


# ---------------------------------------------------------------------------- each kind of delete
def _delete_memory(user: User) -> str:
    items = trace.items(user.ctx, user.uid)
    memory_id = next(mid for mid, item in items.items() if "Lisbon" in item.content)
    response = user.call("DELETE", f"/v3/memories/{memory_id}")
    assert response.status_code == 200, response.text
    assert memory_id in response.json()["deleted"]
    rid: str = response.json()["receipt_id"]
    assert memory_id in user.receipt(rid)["memory_ids"]
    return rid


def _delete_all(user: User) -> str:
    live = {mid for mid, item in trace.items(user.ctx, user.uid).items() if item.content}
    response = user.call("DELETE", "/v3/memories")
    assert response.status_code == 200, response.text
    rid = str(response.json()["receipt_id"])
    receipt = user.receipt(rid)
    assert receipt["memory_count"] == response.json()["deleted"] == len(live)
    assert receipt["up_to_sequence"] == response.json()["stable_at_sequence"] and receipt["memory_ids"] == []
    return rid


def _delete_conversation(user: User) -> str:
    derived = {mid for mid, item in trace.items(user.ctx, user.uid).items() if "c1" in item.source_ids}
    assert derived
    response = user.call("DELETE", "/v1/conversations/c1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["deleted"] is True and body["cascade"]["retracted"] >= 1
    receipt = user.receipt(body["receipt_id"])
    assert receipt["conversation_id"] == "c1" and set(receipt["memory_ids"]) == derived
    return str(body["receipt_id"])


def _wipe(user: User) -> str:
    for _ in range(20):
        response = user.call("DELETE", "/v1/users/delete-account")
        if response.status_code == 200:
            return str(response.json()["receipt_id"])
        assert response.status_code == 503, response.text
    raise AssertionError("the account wipe never completed")


KINDS: dict[str, tuple[str, Callable[[User], str]]] = {
    "memory": ("memory", _delete_memory), "all": ("all", _delete_all),
    "conversation": ("conversation", _delete_conversation), "account": ("account", _wipe)}


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_of_delete_answers_a_receipt_that_confirms_every_store(stack: dict[str, Any], name: str) -> None:
    kind, delete = KINDS[name]
    user = captured(stack)
    deleted = [c for c in user.contents() if "Lisbon" in c] if name == "memory" else user.contents()
    rid = delete(user)
    first = user.receipt(rid)
    assert first["receipt_id"] == rid and first["kind"] == kind
    assert first["created_at"] and first["expires_at"] and first["expires_at"] > first["created_at"]
    # The delete's own commit removed the items and redacted their review rows.
    assert first["stores"]["memory_items"]["state"] == "confirmed"
    assert first["stores"]["review_queue"]["state"] == "confirmed"
    if name != "account":
        trace.converge(user.ctx, user.uid)  # the drain has run: the outbox is empty
    body = user.receipt(rid)
    assert body["state"] == "confirmed" and set(states(body).values()) == {"confirmed"}, body
    for store in body["stores"].values():
        assert store["confirmed_at"] >= body["created_at"]
    again = user.receipt(rid)  # read back each time, nothing written: the same stores confirmed
    assert states(again) == states(body) and again["created_at"] == body["created_at"], again
    assert_content_free(user, rid, deleted, account=name == "account")
    other = User(stack)
    missing = other.call("GET", f"/v1/deletions/{rid}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found", missing.text


def test_a_retried_delete_answers_the_same_receipt(stack: dict[str, Any]) -> None:
    user = captured(stack)
    first = user.call("DELETE", "/v3/memories", headers={"Idempotency-Key": "wipe-memories-1"})
    again = user.call("DELETE", "/v3/memories", headers={"Idempotency-Key": "wipe-memories-1"})
    assert first.status_code == again.status_code == 200, (first.text, again.text)
    assert first.json()["receipt_id"] == again.json()["receipt_id"]
    listed = user_documents(user.ctx, user.uid)
    assert len([p for p in listed if p.startswith(f"{receipts.COLLECTION}/")]) == 1


def test_the_keyword_index_stays_pending_while_typesense_is_stopped(stack: dict[str, Any]) -> None:
    user = captured(stack)
    deleted = [c for c in user.contents() if "Lisbon" in c]
    with faults.stopped(stack["state_dir"], "typesense"):
        rid = _delete_memory(user)
        deleted_ids = set(user.receipt(rid)["memory_ids"])

        def failed_once() -> bool:
            projection.drain_user(user.ctx, user.uid)  # (or the stack's own drain, nudged by the delete)
            events = [e for _, e in trace.outbox(user.ctx, user.uid) if e.get("memory_id") in deleted_ids]
            return bool(events) and all(e["state"] == "pending" and e.get("attempts", 0) >= 1 for e in events)

        # The drain runs and fails against the stopped Typesense: nothing is acknowledged.
        wait_for(failed_once, timeout=60, interval=0.5, what="the delete's events to fail once against Typesense")
        body = user.receipt(rid)
        assert body["state"] == "pending"
        assert body["stores"]["keyword_index"] == {"state": "pending", "confirmed_at": None}
        assert body["stores"]["graph"]["state"] == "pending"  # written only with the acknowledgement
        # The vector index did delete them: that store is confirmed on its own.
        assert body["stores"]["vector_index"]["state"] == "confirmed", body
        assert not {ids.provider_id(user.uid, m) for m in deleted_ids} & set(trace.pinecone_vectors(user.ctx, user.uid))
        assert body["stores"]["memory_items"]["state"] == "confirmed"
    trace.converge(user.ctx, user.uid)  # Typesense is back: the retried event is acknowledged
    body = user.receipt(rid)
    assert body["stores"]["keyword_index"]["state"] == "confirmed" and body["state"] == "confirmed", body
    assert_content_free(user, rid, deleted)
    # And the index really lost it.
    assert not any("Lisbon" in json.dumps(doc) for doc in trace.typesense_docs(user.ctx, user.uid))


def test_an_unknown_receipt_id_is_not_found(stack: dict[str, Any]) -> None:
    user = User(stack)
    response = user.call("GET", f"/v1/deletions/{uuid.uuid4().hex}")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found", response.text

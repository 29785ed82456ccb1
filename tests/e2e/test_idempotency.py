"""``Idempotency-Key`` over real HTTP (issue 45; docs/api.md, *Optional headers*).

``POST /v1/conversations`` with a key: a retry answers the first request's id and writes no second
conversation, however many retries race; the same key with another body is a 422
``idempotency_key_reused`` that writes nothing. On every route that reads the header, a key over 200
characters is a 400 ``validation_error`` that writes nothing: never cut (two keys that differed only
past the cut would replay each other's answers).
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.support.firestore_checks import user_doc_count, user_documents

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
MAX_KEY = 200  # docs/api.md
SEGMENTS = [{"id": "s1", "text": "I started learning the cello this winter.", "speaker": "SPEAKER_00",
             "is_user": True}]
# Every route that reads Idempotency-Key (docs/api.md: creates and deletes).
KEYED_ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/v1/conversations", {"transcript_segments": SEGMENTS}),
    ("POST", "/v1/memories", {"content": "I like figs"}),
    ("POST", "/v1/memories/batch", {"memories": [{"content": "I like figs"}]}),
    ("POST", "/v3/memories", {"content": "I like figs"}),
    ("POST", "/v3/memories/batch", {"memories": [{"content": "I like figs"}]}),
    ("POST", "/v1/mcp/memories", {"content": "I like figs"}),
    ("POST", "/v1/tools/memories", {"content": "I like figs"}),
    ("DELETE", "/v1/memories/mem-none", None),
    ("DELETE", "/v3/memories/mem-none", None),
    ("DELETE", "/v1/mcp/memories/mem-none", None),
    ("DELETE", "/v1/tools/memories/mem-none", None),
    ("DELETE", "/v1/memories", None),
    ("DELETE", "/v3/memories", None),
]


def _uid() -> str:
    return f"idem-{uuid.uuid4().hex[:12]}"


def _headers(uid: str, key: str | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}", **({"Idempotency-Key": key} if key else {})}


def _conversations(ctx: Context, uid: str) -> dict[str, dict[str, Any]]:
    return {s.id: s.to_dict() for s in ctx.client.collection(f"users/{uid}/conversations").stream()}


def test_a_retried_conversation_create_answers_the_first_id_and_writes_one(http: httpx.Client) -> None:
    ctx, uid, key = Context(), _uid(), f"import-{uuid.uuid4().hex}"
    body = {"transcript_segments": SEGMENTS}  # no id: without the key every call would make a new one
    first = http.post("/v1/conversations", json=body, headers=_headers(uid, key))
    assert first.status_code == 201, first.text
    stored = _conversations(ctx, uid)
    assert list(stored) == [first.json()["id"]]
    # Retries, one after another and eight at once: each answers the first request's result.
    again = http.post("/v1/conversations", json=body, headers=_headers(uid, key))
    with ThreadPoolExecutor(8) as pool:
        racing = list(pool.map(lambda _: http.post("/v1/conversations", json=body, headers=_headers(uid, key)),
                               range(8)))
    for answer in (again, *racing):
        assert (answer.status_code, answer.json()) == (201, first.json()), answer.text
    assert _conversations(ctx, uid) == stored  # one conversation, not rewritten
    # The same key with another body is not a retry: 422, nothing written.
    other = http.post("/v1/conversations", json={"transcript_segments": [{**SEGMENTS[0], "text": "I sold my bike."}]},
                      headers=_headers(uid, key))
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused", other.text
    assert _conversations(ctx, uid) == stored
    # Another key is another request; no key at all is too.
    assert http.post("/v1/conversations", json=body, headers=_headers(uid, key + "-2")).status_code == 201
    assert http.post("/v1/conversations", json=body, headers=_headers(uid)).status_code == 201
    assert len(_conversations(ctx, uid)) == 3


def test_a_key_with_an_explicit_id_replays_and_a_key_of_200_characters_is_whole(http: httpx.Client) -> None:
    ctx, uid = Context(), _uid()
    body = {"id": "c-keyed", "transcript_segments": SEGMENTS}
    longest = "k" * MAX_KEY
    first = http.post("/v1/conversations", json=body, headers=_headers(uid, longest))
    assert (first.status_code, first.json()) == (201, {"id": "c-keyed", "status": "completed"}), first.text
    stored = _conversations(ctx, uid)
    retry = http.post("/v1/conversations", json=body, headers=_headers(uid, longest))
    assert (retry.status_code, retry.json()) == (201, first.json())
    assert _conversations(ctx, uid) == stored  # created_at and finished_at not rewritten by the retry
    # A 200-character key is used whole: one differing in its last character is another key.
    other = http.post("/v1/conversations", json={**body, "id": "c-keyed-2"}, headers=_headers(uid, "k" * 199 + "j"))
    assert other.status_code == 201 and other.json()["id"] == "c-keyed-2", other.text


@pytest.mark.parametrize(("method", "path", "body"), KEYED_ROUTES, ids=[f"{m} {p}" for m, p, _ in KEYED_ROUTES])
def test_a_key_over_200_characters_is_a_400_on_every_route_that_reads_it(http: httpx.Client, method: str,
                                                                          path: str, body: Any) -> None:
    ctx, uid = Context(), _uid()
    answer = http.request(method, path, json=body, headers=_headers(uid, "k" * (MAX_KEY + 1)))
    assert answer.status_code == 400, (method, path, answer.status_code, answer.text)
    error = answer.json()["error"]
    assert error["code"] == "validation_error" and "Idempotency-Key" in error["message"], error
    assert user_doc_count(ctx, uid) == 0, user_documents(ctx, uid)
    assert not ctx.client.document(f"account_deletions/{uid}").get().exists

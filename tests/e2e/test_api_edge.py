"""Bad input at the HTTP edge of the running API (issue 12): every case a bounded fuzz answered with
a 500 or wrongly accepted, over real HTTP against the stack's ``api`` function. Expectations come
from the contract (docs/api.md: 400 bad input, 401, 404, 409, 413, 415, never a 500, bad
input writes nothing, every error in the JSON error shape) and Firestore's document-id rules."""

from __future__ import annotations

import http.client
import json
import urllib.parse
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.support.firestore_checks import user_doc_count

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
RESERVED_IDS = ["__main__", "__x__", ".", "..", "%2e%2e", "%2E", "a%2Fb"]
ID_ROUTES = [
    ("GET", "/v1/memories/{id}"), ("GET", "/v1/memories/{id}/history"), ("PATCH", "/v3/memories/{id}?value=x"),
    ("PATCH", "/v3/memories/{id}/visibility?value=public"), ("POST", "/v3/memories/{id}/review?value=true"),
    ("DELETE", "/v3/memories/{id}"), ("POST", "/v1/conversations/{id}/reprocess"),
    ("DELETE", "/v1/conversations/{id}"), ("GET", "/v1/conversations/{id}"),
    ("POST", "/v3/memories/review-queue/{id}/resolve"),
]
SEGMENT = {"id": "s1", "text": "I moved to Lisbon last spring", "speaker": "SPEAKER_00", "is_user": True,
           "start": 0.0, "end": 2.0}


def _uid() -> str:
    return f"edge-{uuid.uuid4().hex[:12]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _raw(stack: dict[str, Any], method: str, path: str, headers: dict[str, str] | None = None,
         body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """Send ``path`` byte for byte (no client-side normalisation of ``.``/``..`` or escapes)."""
    url = urllib.parse.urlsplit(stack["api_url"])
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _error(status: int, headers: dict[str, str], body: bytes) -> dict[str, str]:
    assert headers.get("content-type", "").startswith("application/json"), (status, headers, body[:200])
    data = json.loads(body)
    assert set(data) == {"error"} and set(data["error"]) == {"code", "message", "request_id"}, data
    assert data["error"]["request_id"] == headers.get("x-request-id"), (data, headers)
    return data["error"]


def _nothing_written(ctx: Context, uid: str) -> None:
    assert user_doc_count(ctx, uid) == 0
    assert not ctx.paths.account_deletion(uid).get().exists


# ------------------------------------------------------------------------------- ids and uids
@pytest.mark.parametrize("bad_id", RESERVED_IDS)
def test_reserved_or_impossible_ids_are_404_on_every_id_route(stack: dict[str, Any], bad_id: str) -> None:
    ctx, uid = Context(), _uid()
    for method, pattern in ID_ROUTES:
        body = json.dumps({"decision": "accept"}).encode() if pattern.endswith("/resolve") else None
        headers = {**_auth(uid), **({"Content-Type": "application/json"} if body else {})}
        status, resp_headers, raw = _raw(stack, method, pattern.replace("{id}", bad_id), headers, body)
        assert status == 404, (method, pattern, bad_id, status, raw[:300])
        _error(status, resp_headers, raw)
    _nothing_written(ctx, uid)


@pytest.mark.parametrize("sub", ["__main__", "__x__", ".", ".."])
def test_a_token_subject_that_cannot_name_a_user_is_401(http: httpx.Client, sub: str) -> None:
    for method, path in [("GET", "/v1/memories"), ("POST", "/v3/memories"), ("DELETE", "/v1/users/delete-account"),
                         ("GET", "/v1/memories/export")]:
        response = http.request(method, path, headers=_auth(sub), json={"content": "I like figs"})
        assert response.status_code == 401, (method, path, response.status_code, response.text[:300])
        assert response.json()["error"]["code"] == "unauthorized"


# ----------------------------------------------------------------------------------- bodies
HOSTILE_BODIES: list[tuple[str, str, bytes, int]] = [
    ("lone_surrogate", "/v3/memories", b'{"content": "I like figs \\ud800"}', 400),
    ("nul_byte", "/v3/memories", b'{"content": "I like\\u0000 figs"}', 400),
    ("nan", "/v3/memories", b'{"content": "I like figs", "category": NaN}', 400),
    ("int_beyond_int64", "/v1/conversations", json.dumps({
        "transcript_segments": [SEGMENT], "structured": {"action_items": [{"n": 2**64}]}}).encode(), 400),
    ("reserved_conversation_id", "/v1/conversations", json.dumps({
        "id": "__main__", "transcript_segments": [SEGMENT]}).encode(), 400),
    ("reserved_field_name", "/v1/conversations", json.dumps({
        "transcript_segments": [SEGMENT], "structured": {"action_items": [{"__name__": "x"}]}}).encode(), 400),
    ("segment_start_1e309", "/v1/conversations", json.dumps({
        "transcript_segments": [SEGMENT]}).replace('"start": 0.0', '"start": 1e309').encode(), 400),
    ("empty_conversation", "/v1/conversations", b"{}", 400),
    ("blank_conversation", "/v1/conversations", json.dumps({
        "transcript_segments": [{**SEGMENT, "text": "   "}]}).encode(), 400),
    ("nested_50000", "/v3/memories", b'{"content": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", 400),
]


@pytest.mark.parametrize(("name", "path", "body", "status"), HOSTILE_BODIES, ids=[b[0] for b in HOSTILE_BODIES])
def test_hostile_json_is_a_4xx_that_writes_nothing(stack: dict[str, Any], name: str, path: str, body: bytes,
                                                   status: int) -> None:
    ctx, uid = Context(), _uid()
    headers = {**_auth(uid), "Content-Type": "application/json"}
    code, resp_headers, raw = _raw(stack, "POST", path, headers, body)
    assert code == status, (name, code, raw[:300])
    _error(code, resp_headers, raw)
    _nothing_written(ctx, uid)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          None, "application/jsonx"])
def test_only_json_bodies_are_accepted(stack: dict[str, Any], content_type: str | None) -> None:
    ctx, uid = Context(), _uid()
    body = json.dumps({"content": "I like figs"}).encode()
    for path, payload in [("/v3/memories", body),
                          ("/v1/conversations", json.dumps({"transcript_segments": [SEGMENT]}).encode())]:
        headers = {**_auth(uid), **({"Content-Type": content_type} if content_type else {})}
        code, resp_headers, raw = _raw(stack, "POST", path, headers, payload)
        assert code == 415, (path, content_type, code, raw[:300])
        assert _error(code, resp_headers, raw)["code"] == "unsupported_media_type"
    _nothing_written(ctx, uid)


def test_documented_app_fields_are_accepted_on_post_conversation(http: httpx.Client) -> None:
    ctx, uid = Context(), _uid()
    doc = {"id": f"c-{uuid.uuid4().hex[:8]}", "transcript_segments": [SEGMENT],
           "apps_results": [{"app_id": "summarizer", "content": "A short summary"}],
           "plugins_results": [{"plugin_id": "summarizer", "content": "A short summary"}],
           "processing_memory_id": "pm-123", "created_at": "2026-05-01T10:00:00+00:00"}
    response = http.post("/v1/conversations", json=doc, headers=_auth(uid))
    assert response.status_code == 201, response.text
    stored = ctx.paths.doc(uid, "conversations", doc["id"]).get().to_dict()
    assert stored["apps_results"] == doc["apps_results"] and stored["plugins_results"] == doc["plugins_results"]
    assert stored["processing_memory_id"] == "pm-123"
    assert stored["created_at"] == datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    bad = http.post("/v1/conversations", json={**doc, "created_at": "yesterday"}, headers=_auth(_uid()))
    assert bad.status_code == 400, bad.text


# ------------------------------------------------------------------------------ 404, 405, query
def test_unknown_paths_and_methods_answer_in_the_json_error_shape(stack: dict[str, Any]) -> None:
    for path in ["/nope", "/robots.txt", "/favicon.ico", "/v1/memories/a/b/c"]:
        code, headers, raw = _raw(stack, "GET", path)
        assert code == 404, (path, code, raw[:200])
        _error(code, headers, raw)
    for method in ["TRACE", "PUT"]:
        code, headers, raw = _raw(stack, method, "/v1/memories", _auth(_uid()))
        assert code == 405, (method, code, raw[:200])
        _error(code, headers, raw)
        assert {m.strip() for m in headers["allow"].split(",")} == {"GET", "HEAD", "POST", "DELETE"}
    # OPTIONS was a 405 here until browsers were let in (issue 45): it is the CORS preflight, which
    # carries no token, so every known path answers it 204 with the methods it takes
    # (tests/e2e/test_cors.py covers the Access-Control-* headers).
    code, headers, raw = _raw(stack, "OPTIONS", "/v1/memories")
    assert (code, raw) == (204, b""), (code, raw[:200])
    assert {m.strip() for m in headers["allow"].split(",")} == {"GET", "HEAD", "POST", "DELETE", "OPTIONS"}
    code, headers, raw = _raw(stack, "TRACE", "/v3/memories")
    assert code == 405 and {m.strip() for m in headers["allow"].split(",")} == {"GET", "HEAD", "POST", "DELETE"}


def test_unknown_and_bad_query_parameters_are_400(http: httpx.Client) -> None:
    uid = _uid()
    for path, params in [("/v1/memories", {"limt": "5"}), ("/v1/memories", {"limit": "abc"}),
                         ("/v1/memories", {"limit": "501"}), ("/v1/memories", {"cursor": "a\x00b"}),
                         ("/v1/knowledge-graph", {"limit": "0"}), ("/healthz", {"x": "1"})]:
        response = http.get(path, params=params, headers=_auth(uid))
        assert response.status_code == 400, (path, params, response.status_code, response.text[:200])
    cascade = http.delete(f"/v1/conversations/c-{uuid.uuid4().hex[:8]}", params={"cascade": "maybe"},
                          headers=_auth(uid))
    assert cascade.status_code == 400, cascade.text


# ------------------------------------------------------------------------------------- OpenAPI
def test_openapi_types_parameters_and_lists_every_status(http: httpx.Client) -> None:
    document = http.get("/openapi.json").json()
    paths = document["paths"]

    def param(path: str, method: str, name: str) -> dict[str, Any]:
        return next(p for p in paths[path][method]["parameters"] if p["name"] == name)

    assert param("/v1/memories", "get", "limit")["schema"] == {"type": "integer", "minimum": 1, "maximum": 500,
                                                                "default": 100}
    assert param("/v1/conversations/{conversation_id}", "delete", "cascade")["schema"]["type"] == "boolean"
    assert param("/v1/memories", "get", "layer")["schema"]["enum"] == ["short_term", "long_term", "archive"]
    for path, operations in paths.items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert all("content" in r and r["content"] for r in responses.values()), (path, method)
            if "security" in operation:
                assert {"400", "401", "503"} <= set(responses), (path, method)
            if method in ("post", "patch", "put", "delete") and "security" in operation:
                assert "409" in responses, (path, method)
            if "requestBody" in operation:
                assert {"413", "415"} <= set(responses), (path, method)
            if "{" in path:
                assert "404" in responses, (path, method)
    assert set(paths["/v1/knowledge-graph"]["delete"]["responses"]) >= {"409"}
    assert "201" in paths["/v1/conversations"]["post"]["responses"]

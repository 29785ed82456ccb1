"""Browsers may call the API from the configured origins (issue 45; docs/api.md, *CORS*).

Over real HTTP against the local stack, which allows localhost origins (local mode): a preflight
(``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``, no token, as a browser sends it)
is answered ``204`` with the ``Access-Control-*`` headers naming that origin, the path's methods
and the request headers the API reads; the actual request's answer, errors included, carries
``Access-Control-Allow-Origin`` and exposes ``X-Request-Id``. A disallowed origin gets no
``Access-Control-Allow-*`` header at all, on the preflight or the request; the preflight writes
nothing. The expected headers come from the Fetch standard's CORS protocol.
"""

from __future__ import annotations

import uuid

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.support.firestore_checks import user_doc_count

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
APP = "http://localhost:5173"  # a dev server's origin: local mode allows any localhost port
ALLOWED = [APP, "http://127.0.0.1:8080", "http://localhost"]
REFUSED = ["https://evil.example", "http://localhost.evil.example:5173", "null", "http://192.168.1.5:5173"]


def _preflight(http: httpx.Client, path: str, origin: str, method: str = "POST",
               headers: str = "authorization, content-type, idempotency-key") -> httpx.Response:
    return http.options(path, headers={"Origin": origin, "Access-Control-Request-Method": method,
                                       "Access-Control-Request-Headers": headers})


def _listed(value: str | None) -> set[str]:
    return {part.strip().lower() for part in (value or "").split(",") if part.strip()}


@pytest.mark.parametrize("origin", ALLOWED)
def test_a_preflight_from_an_allowed_origin_is_answered_without_a_token(http: httpx.Client, origin: str) -> None:
    answer = _preflight(http, "/v1/memories", origin)
    assert answer.status_code == 204 and answer.content == b"", (answer.status_code, answer.text)
    assert answer.headers["access-control-allow-origin"] == origin
    assert {"get", "post", "delete"} <= _listed(answer.headers["access-control-allow-methods"])
    assert {"authorization", "content-type", "idempotency-key"} <= _listed(answer.headers["access-control-allow-headers"])
    assert int(answer.headers["access-control-max-age"]) > 0
    assert "origin" in _listed(answer.headers.get("vary"))
    assert "access-control-allow-credentials" not in answer.headers  # bearer tokens, never cookies


def test_preflights_name_each_paths_own_methods_and_the_mcp_server(http: httpx.Client) -> None:
    memory = _preflight(http, "/v1/memories/mem-1", APP, "PATCH")
    assert memory.status_code == 204
    assert {"get", "patch", "delete"} <= _listed(memory.headers["access-control-allow-methods"])
    mcp = _preflight(http, "/mcp", APP, headers="authorization, content-type, mcp-protocol-version")
    assert mcp.status_code == 204 and mcp.headers["access-control-allow-origin"] == APP
    assert "post" in _listed(mcp.headers["access-control-allow-methods"])
    assert "mcp-protocol-version" in _listed(mcp.headers["access-control-allow-headers"])
    unknown = _preflight(http, "/v1/nothing-here", APP)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "no_route"
    assert unknown.headers["access-control-allow-origin"] == APP  # the page may read why


def test_the_request_after_the_preflight_answers_with_the_allow_origin_header(http: httpx.Client) -> None:
    ctx, uid = Context(), f"cors-{uuid.uuid4().hex[:12]}"
    auth = {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}", "Origin": APP}
    created = http.post("/v1/memories", json={"content": "I grow chillies on the balcony"}, headers=auth)
    assert created.status_code == 201, created.text
    assert created.headers["access-control-allow-origin"] == APP
    assert "x-request-id" in _listed(created.headers["access-control-expose-headers"])
    assert "retry-after" in _listed(created.headers["access-control-expose-headers"])
    listed = http.get("/v1/memories", headers=auth)
    assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == APP
    refused = http.get("/v1/memories", headers={"Origin": APP})  # no token: the page can read the 401
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == APP
    assert user_doc_count(ctx, uid) >= 1


@pytest.mark.parametrize("origin", REFUSED)
def test_a_disallowed_origin_gets_no_allow_header_and_the_preflight_writes_nothing(http: httpx.Client,
                                                                                   origin: str) -> None:
    ctx, uid = Context(), f"cors-{uuid.uuid4().hex[:12]}"
    answer = _preflight(http, "/v1/memories", origin)
    assert answer.status_code == 204
    assert not [h for h in answer.headers if h.startswith("access-control-")], dict(answer.headers)
    request = http.get("/v1/memories", headers={"Origin": origin,
                                                "Authorization": f"Bearer {emulator_token(uid, PROJECT)}"})
    assert request.status_code == 200
    assert not [h for h in request.headers if h.startswith("access-control-")], dict(request.headers)
    assert user_doc_count(ctx, uid) == 0

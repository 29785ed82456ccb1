"""The HTTP API of the running local stack, over real HTTP (the ``api`` function on
functions-framework, backed by the Firestore emulator)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.support.firestore_checks import (
    all_docs,
    assert_all_items_legal,
    assert_ledger_gapless,
    assert_nothing_written,
    user_doc_count,
    user_documents,
)

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
SCOPE = "X-Omi-Memory-Device-Scope-Supported"
JSON_TYPE = {"Content-Type": "application/json"}  # bodies sent as raw bytes say what they are (else 415)


def _uid() -> str:
    return f"api-{uuid.uuid4().hex[:12]}"


def _auth(uid: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}", **extra}


def _assert_error(response: httpx.Response, status: int | tuple[int, ...]) -> dict[str, Any]:
    allowed = (status,) if isinstance(status, int) else status
    assert response.status_code in allowed, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "request_id"}
    # The request's id, in the body and the header alike (a user's report finds the log lines).
    assert body["error"]["request_id"].startswith("req_")
    assert body["error"]["request_id"] == response.headers["x-request-id"]
    if response.status_code in (429, 503):
        assert int(response.headers["retry-after"]) > 0
    assert body["error"]["code"] and body["error"]["code"] == body["error"]["code"].lower()
    assert " " not in body["error"]["code"] and body["error"]["message"]
    return body["error"]


def _create(http: httpx.Client, uid: str, content: str, **headers: str) -> dict[str, Any]:
    response = http.post("/v3/memories", json={"content": content}, headers=_auth(uid, **headers))
    assert response.status_code == 201, response.text
    return response.json()


# ------------------------------------------------------------------------------------------ basics
def test_healthz_and_openapi_list_every_route(http: httpx.Client) -> None:
    assert http.get("/healthz").json() == {"status": "ok"}
    document = http.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    from core.api.app import ROUTES

    documented = {(path, method.upper()) for path, ops in document["paths"].items() for method in ops}
    registered = {(r.pattern, r.method) for r in ROUTES}
    assert registered <= documented
    for path, method in [("/v3/memories", "POST"), ("/v3/memories/batch", "POST"), ("/v1/memories", "GET"),
                         ("/v1/memories/{memory_id}", "GET"), ("/v1/memories/{memory_id}/history", "GET"),
                         ("/v1/conversations", "POST"), ("/v1/conversations/{conversation_id}/reprocess", "POST"),
                         ("/v3/memories/{memory_id}/visibility", "PATCH"), ("/healthz", "GET")]:
        assert (path, method) in documented


def test_explicit_create_then_read_back(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    created = _create(http, uid, "I collect vintage fountain pens")
    assert created["layer"] == "short_term" and created["manually_added"] is True
    assert created["content"] == "I collect vintage fountain pens"
    for internal in ("processing_state", "status", "ledger_commit_id", "ledger_sequence", "promotion", "uid"):
        assert internal not in created
    one = http.get(f"/v1/memories/{created['id']}", headers=_auth(uid))
    assert one.status_code == 200 and one.json()["content"] == created["content"]
    listed = http.get("/v1/memories", headers=_auth(uid))
    assert listed.status_code == 200 and listed.headers[SCOPE] == "true"
    assert [m["id"] for m in listed.json()["memories"]] == [created["id"]]
    legacy = http.get("/v3/memories", headers=_auth(uid))
    assert legacy.headers[SCOPE] == "true"
    assert [m["id"] for m in legacy.json()] == [created["id"]]
    stored = assert_all_items_legal(ctx, uid)[created["id"]]
    assert (stored["layer"], stored["status"], stored["processing_state"]) == ("short_term", "active", "processed")
    assert_ledger_gapless(ctx, uid)


def _walk(http: httpx.Client, path: str, uid: str, key: str, limit: int) -> list[list[dict[str, Any]]]:
    """Every page of a cursor-paged /v1 list, following next_cursor to the end."""
    pages, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        response = http.get(path, params=params, headers=_auth(uid))
        assert response.status_code == 200, response.text
        body = response.json()
        assert len(body[key]) <= limit
        pages.append(body[key])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 100, "the walk does not end"


def test_history_pages_through_every_commit_exactly_once(http: httpx.Client) -> None:
    uid = _uid()
    created = _create(http, uid, "I swim at the lido on Saturdays")
    for text in ("I swim at the lido on Sundays", "I swim at the lido on Mondays", "I swim in the sea on Mondays"):
        edit = http.patch(f"/v1/memories/{created['id']}", json={"content": text}, headers=_auth(uid))
        assert edit.status_code == 200, edit.text
    path = f"/v1/memories/{created['id']}/history"
    full = http.get(path, headers=_auth(uid)).json()
    assert full["next_cursor"] is None
    # a create (written, then processed) and three content edits, each one commit at least
    assert [c["kind"] for c in full["commits"]][:2] == ["intake.explicit", "intake.process"]
    assert len(full["commits"]) >= 5
    for limit in (1, 3):
        pages = _walk(http, path, uid, "commits", limit)
        walked = [c["commit_id"] for page in pages for c in page]
        assert walked == [c["commit_id"] for c in full["commits"]], limit  # each once, oldest first
        assert all(len(page) == limit for page in pages[:-1])
    # a cursor of another memory's history (or of another list) is refused and changes nothing
    other = _create(http, uid, "I cycle to work")
    cursor = http.get(path, params={"limit": 1}, headers=_auth(uid)).json()["next_cursor"]
    _assert_error(http.get(f"/v1/memories/{other['id']}/history", params={"cursor": cursor}, headers=_auth(uid)), 400)
    _assert_error(http.get("/v1/knowledge-graph", params={"cursor": cursor}, headers=_auth(uid)), 400)
    _assert_error(http.get(path, params={"cursor": "not-a-cursor"}, headers=_auth(uid)), 400)


def test_history_shows_pending_then_processed(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    created = _create(http, uid, "I volunteer at the food bank on Thursdays")
    history = http.get(f"/v1/memories/{created['id']}/history", headers=_auth(uid))
    assert history.status_code == 200
    commits = history.json()["commits"]
    assert [c["kind"] for c in commits] == ["intake.explicit", "intake.process"]
    assert [c["revision"] for c in commits] == [1, 2]
    assert all(c["layer"] == "short_term" and c["status"] == "active" for c in commits)
    stored = all_docs(ctx, uid, "memory_commits")
    states = [next(ch["processing_state"] for ch in stored[c["commit_id"]]["changes"]
                   if ch["memory_id"] == created["id"]) for c in commits]
    assert states == ["pending", "processed"]


def test_batch_create(http: httpx.Client) -> None:
    uid = _uid()
    body = {"memories": [{"content": f"I have visited city number {n}"} for n in range(3)]}
    response = http.post("/v3/memories/batch", json=body, headers=_auth(uid))
    assert response.status_code == 201, response.text
    assert len(response.json()["memories"]) == 3
    assert all(m["layer"] == "short_term" for m in response.json()["memories"])


# ---------------------------------------------------------------------------------------- auth
def test_no_or_bad_token_is_401(http: httpx.Client) -> None:
    for headers in ({}, {"Authorization": "Bearer"}, {"Authorization": "Bearer not-a-token"},
                    {"Authorization": "Basic abc"},
                    {"Authorization": f"Bearer {emulator_token('someone', 'another-project')}"}):
        _assert_error(http.get("/v1/memories", headers=headers), 401)
        _assert_error(http.post("/v3/memories", json={"content": "I like figs"}, headers=headers), 401)


def test_another_users_memory_is_404_without_content(http: httpx.Client, ctx: Context) -> None:
    owner, intruder = _uid(), _uid()
    created = _create(http, owner, "My locker code hint is the blue door")
    before = user_documents(ctx, owner)
    for method, path, params in [("GET", f"/v1/memories/{created['id']}", None),
                                 ("GET", f"/v1/memories/{created['id']}/history", None),
                                 ("PATCH", f"/v3/memories/{created['id']}", {"value": "changed"}),
                                 ("PATCH", f"/v3/memories/{created['id']}/visibility", {"value": "public"}),
                                 ("POST", f"/v3/memories/{created['id']}/review", {"value": "true"}),
                                 ("DELETE", f"/v3/memories/{created['id']}", None)]:
        response = http.request(method, path, params=params, headers=_auth(intruder))
        _assert_error(response, 404)
        assert "blue door" not in response.text
    assert_nothing_written(ctx, owner, before)
    assert user_doc_count(ctx, intruder) == 0
    assert http.get(f"/v1/memories/{created['id']}", headers=_auth(owner)).json()["content"] == created["content"]
    assert http.get("/v1/memories", headers=_auth(intruder)).json()["memories"] == []


# ------------------------------------------------------------------------------------ bad input
BAD_BODIES: list[tuple[str, Any, int]] = [
    ("unknown_field", {"content": "I like figs", "mood": "happy"}, 400),
    ("wrong_type", {"content": 123}, 400),
    ("wrong_type_category", {"content": "I like figs", "category": ["a"]}, 400),
    ("visibility_friends", {"content": "I like figs", "visibility": "friends"}, 400),
    ("empty_content", {"content": ""}, 400),
    ("blank_content", {"content": "   \n\t "}, 400),
    ("content_100kb", {"content": "a" * 100_000}, 400),
    ("missing_content", {}, 400),
    ("not_an_object", ["I like figs"], 400),
    ("null_body", None, 400),
    ("secret", {"content": "my online banking password is Hunter-4471"}, 400),
]


@pytest.mark.parametrize(("name", "body", "status"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_input_is_rejected_and_writes_nothing(http: httpx.Client, ctx: Context, name: str, body: Any,
                                                  status: int) -> None:
    uid = _uid()
    _create(http, uid, "I grow basil on the balcony")
    before = user_documents(ctx, uid)
    headers = _auth(uid, **JSON_TYPE)
    _assert_error(http.post("/v3/memories", content=json.dumps(body), headers=headers), status)
    _assert_error(http.post("/v3/memories/batch", content=json.dumps({"memories": [body]}), headers=headers),
                  400)
    assert_nothing_written(ctx, uid, before)


def test_malformed_json_oversized_body_and_big_batch_write_nothing(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    assert user_doc_count(ctx, uid) == 0
    headers = _auth(uid, **JSON_TYPE)
    error = _assert_error(http.post("/v3/memories", content=b'{"content": "I like figs"', headers=headers), 400)
    assert error["code"] == "malformed_json"
    _assert_error(http.post("/v3/memories", content=b"\xff\xfe garbage", headers=headers), 400)
    huge = json.dumps({"content": "b" * (2 * 1024 * 1024)})
    _assert_error(http.post("/v3/memories", content=huge, headers=headers), 413)
    batch = {"memories": [{"content": f"I know fact {n}"} for n in range(101)]}
    _assert_error(http.post("/v3/memories/batch", json=batch, headers=_auth(uid)), 400)
    _assert_error(http.post("/v3/memories/batch", json={"memories": []}, headers=_auth(uid)), 400)
    _assert_error(http.get("/v1/memories", params={"layer": "context_only"}, headers=_auth(uid)), 400)
    _assert_error(http.get("/v1/memories", params={"cursor": "%%%"}, headers=_auth(uid)), 400)
    _assert_error(http.get("/v1/memories", params={"limit": "0"}, headers=_auth(uid)), 400)
    _assert_error(http.get("/v1/memories/does-not-exist", headers=_auth(uid)), 404)
    assert user_doc_count(ctx, uid) == 0


# ------------------------------------------------------------------------------------ pagination
def test_cursor_pagination_returns_every_item_exactly_once(http: httpx.Client) -> None:
    uid = _uid()
    body = {"memories": [{"content": f"I have read book number {n}"} for n in range(13)]}
    created = http.post("/v3/memories/batch", json=body, headers=_auth(uid)).json()["memories"]
    expected = {m["id"] for m in created}
    # Visibility edits between pages move items' updated_at (one already returned, one not yet returned, on
    # every page turn); the cursor must still neither lose nor repeat a row.
    seen: list[str] = []
    cursor = None
    pages = 0
    edited: list[str] = []
    while True:
        if cursor:
            unseen = sorted(expected - set(seen) - set(edited))
            for target in ([seen[0]] if seen[0] not in edited else []) + unseen[:1]:
                # Explicit memories start private: making one public is a real change.
                response = http.patch(f"/v3/memories/{target}/visibility", params={"value": "public"},
                                      headers=_auth(uid))
                assert response.status_code == 200, response.text
                edited.append(target)
        params = {"limit": "4", **({"cursor": cursor} if cursor else {})}
        page = http.get("/v1/memories", params=params, headers=_auth(uid))
        assert page.status_code == 200, page.text
        data = page.json()
        assert len(data["memories"]) <= 4
        seen.extend(m["id"] for m in data["memories"])
        pages += 1
        cursor = data["next_cursor"]
        if not cursor:
            break
        assert pages < 10
    assert len(edited) >= 3, "the walk made edits between pages"
    assert sorted(seen) == sorted(expected)
    assert len(seen) == len(set(seen)) == 13
    everything = http.get("/v1/memories", params={"limit": "500"}, headers=_auth(uid)).json()
    assert {m["id"] for m in everything["memories"]} == expected and everything["next_cursor"] is None
    legacy = [m["id"] for offset in (0, 5, 10)
              for m in http.get("/v3/memories", params={"limit": "5", "offset": str(offset)},
                                headers=_auth(uid)).json()]
    assert sorted(legacy) == sorted(expected)


# ---------------------------------------------------------------------------- edits / flags
def test_edit_visibility_and_review_routes(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    created = _create(http, uid, "I cycle to work")
    path = f"/v3/memories/{created['id']}"
    edited = http.patch(path, params={"value": "I cycle to work every day"}, headers=_auth(uid))
    assert edited.status_code == 200, edited.text
    assert edited.json()["content"] == "I cycle to work every day" and edited.json()["edited"] is True
    assert edited.json()["layer"] == "short_term"
    _assert_error(http.patch(path, params={"value": "   "}, headers=_auth(uid)), 400)

    public = http.patch(f"{path}/visibility", params={"value": "public"}, headers=_auth(uid))
    assert public.status_code == 200 and public.json()["visibility"] == "public"
    _assert_error(http.patch(f"{path}/visibility", params={"value": "friends"}, headers=_auth(uid)), 400)

    reviewed = http.post(f"{path}/review", params={"value": "false"}, headers=_auth(uid))
    assert reviewed.status_code == 200
    assert reviewed.json()["reviewed"] is True and reviewed.json()["user_review"] is False
    _assert_error(http.post(f"{path}/review", params={"value": "maybe"}, headers=_auth(uid)), 400)

    final = http.get(f"/v1/memories/{created['id']}", headers=_auth(uid)).json()
    assert (final["content"], final["visibility"], final["user_review"]) == ("I cycle to work every day", "public",
                                                                             False)
    kinds = [c["kind"] for c in http.get(f"{path}/history".replace("/v3/", "/v1/"), headers=_auth(uid)).json()["commits"]]
    assert kinds == ["intake.explicit", "intake.process", "edit.content", "intake.process", "edit.visibility",
                     "edit.user_review"]
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)

    deleted = http.delete(path, headers=_auth(uid))
    assert deleted.status_code == 200 and created["id"] in deleted.json()["deleted"]
    _assert_error(http.get(f"/v1/memories/{created['id']}", headers=_auth(uid)), 404)
    assert http.get("/v1/memories", headers=_auth(uid)).json()["memories"] == []


# --------------------------------------------------------------------------------- device scope
def test_device_scope_filters_by_capture_device(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    ios = {"X-Device-Id-Hash": "0a1b2c3d", "X-App-Platform": "ios", "X-App-Version": "2.1.0"}
    android = {"X-Device-Id-Hash": "11223344", "X-App-Platform": "android"}
    from_ios = _create(http, uid, "I keep a journal every night", **ios)
    from_android = _create(http, uid, "I take the train to the office", **android)
    plain = _create(http, uid, "I enjoy long walks by the river")
    assert from_ios["capture_device_ids"] == ["ios_0a1b2c3d"]
    assert from_ios["evidence"][0]["client_device_id"] == "ios_0a1b2c3d"
    assert plain["capture_device_ids"] == []

    def ids_for(params: dict[str, str], headers: dict[str, str]) -> set[str]:
        response = http.get("/v1/memories", params=params, headers=_auth(uid, **headers))
        assert response.status_code == 200, response.text
        assert response.headers[SCOPE] == "true"
        return {m["id"] for m in response.json()["memories"]}

    assert ids_for({"device_scope": "current"}, ios) == {from_ios["id"]}
    assert ids_for({"device_scope": "current"}, android) == {from_android["id"]}
    assert ids_for({"device_scope": "all"}, ios) == {from_ios["id"], from_android["id"], plain["id"]}
    assert ids_for({}, {}) == {from_ios["id"], from_android["id"], plain["id"]}
    assert ids_for({"device_scope": "explicit", "device_ids": "android_11223344"}, {}) == {from_android["id"]}
    assert ids_for({"device_scope": "explicit", "device_ids": "android_11223344,ios_0a1b2c3d"}, {}) == {
        from_ios["id"], from_android["id"]}
    _assert_error(http.get("/v1/memories", params={"device_scope": "current"}, headers=_auth(uid)), 400)
    _assert_error(http.get("/v1/memories", params={"device_scope": "explicit"}, headers=_auth(uid)), 400)
    _assert_error(http.get("/v1/memories", params={"device_scope": "nearby"}, headers=_auth(uid)), 400)

    devices = all_docs(ctx, uid, "client_devices")
    assert set(devices) == {"ios_0a1b2c3d", "android_11223344"}
    assert devices["ios_0a1b2c3d"]["platform"] == "ios" and devices["ios_0a1b2c3d"]["app_version"] == "2.1.0"
    assert devices["android_11223344"]["device_class"] == "mobile"


def test_any_request_registers_its_capture_device(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    headers = {**_auth(uid), "X-Device-Id-Hash": "0a1b2c3d", "X-App-Platform": "android", "X-App-Version": "2.4.1"}
    assert http.get("/v1/memories", headers=headers).status_code == 200
    snap = ctx.paths.doc(uid, "client_devices", "android_0a1b2c3d").get()
    assert snap.exists
    device = snap.to_dict()
    assert (device["platform"], device["app_version"], device["device_class"]) == ("android", "2.4.1", "mobile")
    assert device["first_seen_at"] and device["last_seen_at"]
    # A malformed hash registers nothing and fails nothing.
    bad = {**_auth(uid), "X-Device-Id-Hash": "not-hex!", "X-App-Platform": "android"}
    assert http.get("/v1/memories", headers=bad).status_code == 200
    assert [s.id for s in ctx.paths.col(uid, "client_devices").stream()] == ["android_0a1b2c3d"]


# ----------------------------------------------------------------------- Long-term edits
def _consolidate_via_task(stack: dict[str, Any], ctx: Context, uid: str) -> None:
    """One pass the deployed way: a Cloud Task calls the consolidate function; done when the
    function has recorded that task's pass."""
    from tests.support.firestore_checks import wait_for

    task = f"api-{uuid.uuid4().hex[:12]}"
    ctx.tasks.enqueue(stack["consolidate_url"], {"uid": uid}, task_id=task)

    def ran() -> bool:
        snap = ctx.paths.doc(uid, "memory_state", "last_consolidation").get()
        trigger = ((snap.to_dict() or {}).get("trigger") or {}) if snap.exists else {}
        return str(trigger.get("task_name") or "").endswith(task)

    wait_for(ran, timeout=90, interval=0.2, what="the Cloud Task's consolidation pass")


def test_visibility_of_a_long_term_memory_can_be_changed(http: httpx.Client, ctx: Context,
                                                         stack: dict[str, Any]) -> None:
    """docs/api.md: PATCH visibility is a plain flag on any memory the user owns; a Long-term one
    stays admitted (its receipt is re-bound), it is never a 5xx."""
    uid = _uid()
    memory = _create(http, uid, "I keep a blue notebook for recipes")
    _consolidate_via_task(stack, ctx, uid)
    assert http.get(f"/v1/memories/{memory['id']}", headers=_auth(uid)).json()["layer"] == "long_term"
    response = http.patch(f"/v3/memories/{memory['id']}/visibility", params={"value": "public"}, headers=_auth(uid))
    assert response.status_code == 200, response.text
    assert response.json()["visibility"] == "public" and response.json()["layer"] == "long_term"
    assert_all_items_legal(ctx, uid)


def test_a_retried_content_edit_of_a_long_term_memory_changes_nothing(http: httpx.Client, ctx: Context,
                                                                      stack: dict[str, Any]) -> None:
    """An edit of a Long-term memory sends it back to Short-term, processed in the edit's request
    and listed with its new words until consolidation re-admits it (issue 27); the same request
    again (a client retry) must change nothing: no new commit, no change to any document."""
    from tests.support.firestore_checks import canonical_snapshot, ledger_head

    uid = _uid()
    memory = _create(http, uid, "I keep a blue notebook for recipes")
    _consolidate_via_task(stack, ctx, uid)
    edit = {"value": "I keep a red notebook for recipes"}
    first = http.patch(f"/v3/memories/{memory['id']}", params=edit, headers=_auth(uid))
    assert first.status_code == 200, first.text
    listed = http.get("/v1/memories", headers=_auth(uid)).json()["memories"]
    assert [(m["id"], m["content"], m["layer"]) for m in listed] == [
        (memory["id"], "I keep a red notebook for recipes", "short_term")]
    head, before = ledger_head(ctx, uid), canonical_snapshot(ctx, uid)
    again = http.patch(f"/v3/memories/{memory['id']}", params=edit, headers=_auth(uid))
    assert again.status_code == 200, again.text
    assert ledger_head(ctx, uid) == head
    assert canonical_snapshot(ctx, uid) == before

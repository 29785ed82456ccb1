"""A fact ends only when its owner changed it (issue 44), on the stack: each sequence goes through
the deployed path (a Firestore write the trigger captures, then the consolidate function) and is
read over HTTP. Expectations come from the issue's rule: the same subject, the same declared
attribute, a conflicting value, said later in conversation time; supersession is not lineage; an
ending can be undone and stays undone.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from core.bootstrap import Context
from tests.e2e.test_as_of import _auth, _say

pytestmark = pytest.mark.e2e


def _current(http: httpx.Client, uid: str, **params: str) -> dict[str, dict[str, Any]]:
    memories = http.get("/v1/memories", params=params, headers=_auth(uid)).json()["memories"]
    return {m["content"]: m for m in memories}


def _one(memories: dict[str, dict[str, Any]], word: str) -> dict[str, Any]:
    [found] = [m for text, m in memories.items() if word in text]
    return found


def _uid(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}"


def test_a_relatives_home_or_news_of_the_employer_ends_nothing(stack: dict[str, Any], http: httpx.Client) -> None:
    ctx, uid = Context(), _uid("ends-nothing")
    _say(ctx, stack, uid, "home", "2025-03-01", "I live in Seattle.")
    _say(ctx, stack, uid, "job", "2025-03-02", "I work at Acme as a software engineer.")
    _say(ctx, stack, uid, "sister", "2025-06-01", "My sister lives in Paris.")
    _say(ctx, stack, uid, "news", "2025-06-02", "Acme announced a new office in Berlin today.")
    _say(ctx, stack, uid, "manager", "2025-06-03", "My new manager at Acme is great.")
    current = _current(http, uid)
    assert _one(current, "Seattle")["valid_to"] is None and _one(current, "Seattle")["layer"] == "long_term"
    assert _one(current, "Acme as a software engineer")["valid_to"] is None


def test_deleting_the_old_fact_leaves_the_one_that_ended_it(stack: dict[str, Any], http: httpx.Client) -> None:
    ctx, uid = Context(), _uid("delete-old")
    _say(ctx, stack, uid, "acme", "2025-01-10", "I work at Acme.")
    old = _one(_current(http, uid), "Acme")
    _say(ctx, stack, uid, "halden", "2025-05-02", "I quit my job and I started at Halden Robotics last week.")
    halden = _one(_current(http, uid), "Halden")
    ended = http.get(f"/v1/memories/{old['id']}", headers=_auth(uid)).json()
    assert ended["superseded_by"] == halden["id"] and ended["valid_to"].startswith("2025-05-02")
    deleted = http.delete(f"/v1/memories/{old['id']}", headers=_auth(uid))
    assert deleted.status_code == 200 and deleted.json()["deleted"] == [old["id"]]
    assert http.get(f"/v1/memories/{halden['id']}", headers=_auth(uid)).status_code == 200
    assert http.get(f"/v1/memories/{old['id']}", headers=_auth(uid)).status_code == 404


def test_an_older_conversation_imported_later_is_history(stack: dict[str, Any], http: httpx.Client) -> None:
    ctx, uid = Context(), _uid("older")
    _say(ctx, stack, uid, "seattle", "2025-11-02", "I live in Seattle.")
    _say(ctx, stack, uid, "boston", "2019-03-05", "I live in Boston.")
    seattle = _one(_current(http, uid), "Seattle")
    assert seattle["valid_to"] is None
    assert "Boston" not in " ".join(_current(http, uid))  # history, not current
    assert set(_current(http, uid, as_of="2025-12-01")) == {seattle["content"]}
    assert any("Boston" in text for text in _current(http, uid, as_of="2020-01-01"))


def test_an_ending_is_undone_by_restore_and_stays_undone(stack: dict[str, Any], http: httpx.Client) -> None:
    ctx, uid = Context(), _uid("restore")
    _say(ctx, stack, uid, "volvo", "2025-01-10", "I drive a Volvo.")
    volvo = _one(_current(http, uid), "Volvo")
    _say(ctx, stack, uid, "sold", "2025-04-02", "I sold the Volvo.")
    assert http.get(f"/v1/memories/{volvo['id']}", headers=_auth(uid)).json()["valid_to"] is not None
    restored = http.post(f"/v1/memories/{volvo['id']}/restore", headers=_auth(uid))
    assert restored.status_code == 200 and restored.json()["valid_to"] is None
    again = http.post(f"/v1/memories/{volvo['id']}/restore", headers=_auth(uid))
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_ended"
    response = httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=180)  # the next pass
    assert response.status_code == 200
    assert _one(_current(http, uid), "drive")["id"] == volvo["id"]
    commits = http.get(f"/v1/memories/{volvo['id']}/history", headers=_auth(uid)).json()["commits"]
    assert [c["status"] for c in commits][-2:] == ["superseded", "active"]


def test_a_review_names_the_fact_it_would_end_and_accepting_ends_it(stack: dict[str, Any],
                                                                     http: httpx.Client) -> None:
    ctx, uid = Context(), _uid("review")
    _say(ctx, stack, uid, "one", "2025-05-01", "I live in Seattle.")
    seattle = _one(_current(http, uid), "Seattle")
    _say(ctx, stack, uid, "two", "2025-05-01", "I live in Boston.")  # the same day: the owner decides
    [entry] = http.get("/v1/review-queue", headers=_auth(uid)).json()["reviews"]
    assert entry["would_end"] == [{"id": seattle["id"], "content": seattle["content"]}]
    assert http.get(f"/v1/memories/{seattle['id']}", headers=_auth(uid)).json()["valid_to"] is None
    resolved = http.post(f"/v1/review-queue/{entry['review_id']}/resolve", json={"decision": "accept"},
                         headers=_auth(uid))
    assert resolved.status_code == 200, resolved.text
    ended = http.get(f"/v1/memories/{seattle['id']}", headers=_auth(uid)).json()
    assert ended["superseded_by"] == entry["memory_id"] and ended["valid_to"] is not None

"""Facts that stay current, on the stack (issue 32).

A user says "I drive an old blue Volvo" in one conversation and "I sold the Volvo last week, so I
take the tram everywhere" in a later one. Both go through the deployed path: a Firestore write
(the trigger captures it), then the consolidate function. Expected, from the issue's rules: the
Volvo is no longer a current memory (not in the list, not in search), it stays readable by id as
history with its valid time (from the first conversation's day until the second's) and in its
ledger history, and a list or search ``as_of`` a date between the two conversations answers the
Volvo, not the sale. Bad ``as_of`` values are a 400 that changes nothing.
"""

from __future__ import annotations

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
    wait_for,
    write_conversation,
)

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
VOLVO = "User drives an old blue Volvo"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _conversation(cid: str, day: str, line: str) -> dict[str, Any]:
    return {"status": "completed", "discarded": False, "source": "omi", "language": "en",
            "started_at": f"{day}T18:00:00+00:00", "structured": {"title": cid, "overview": ""},
            "transcript_segments": [{"id": f"{cid}-s0", "text": line, "speaker": "SPEAKER_00", "speaker_id": 0,
                                     "is_user": True, "start": 0.0, "end": 4.0}]}


def _say(ctx: Context, stack: dict[str, Any], uid: str, cid: str, day: str, line: str) -> None:
    """The conversation through the trigger, then a consolidation pass through the function."""
    write_conversation(ctx, uid, cid, _conversation(cid, day, line))
    wait_for(lambda: (all_docs(ctx, uid, "capture_runs").get(cid) or {}).get("jobs", {}).get("memories"),
             timeout=120, interval=0.25, what=f"the trigger to capture {cid}")
    response = httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=180)
    assert response.status_code == 200, response.text
    wait_for(lambda: not all_docs(ctx, uid, "memory_outbox"), timeout=120, interval=0.25,
             what="the projections to follow")


def test_a_sold_car_is_history_and_as_of_answers_what_was_true_then(stack: dict[str, Any],
                                                                    http: httpx.Client) -> None:
    ctx = Context()
    uid = f"asof-{uuid.uuid4().hex[:12]}"
    _say(ctx, stack, uid, "car", "2026-01-10", "I drive an old blue Volvo.")
    [volvo] = [m for m in http.get("/v1/memories", headers=_auth(uid)).json()["memories"] if m["content"] == VOLVO]
    assert volvo["layer"] == "long_term" and volvo["valid_from"].startswith("2026-01-10")

    _say(ctx, stack, uid, "sold", "2026-03-02", "I sold the Volvo last week, so I take the tram everywhere.")
    current = http.get("/v1/memories", headers=_auth(uid)).json()["memories"]
    assert VOLVO not in {m["content"] for m in current}
    [sold] = [m for m in current if m["content"].startswith("User sold the Volvo")]
    assert sold["valid_to"] is None
    found = http.get("/v1/memories/search", params={"q": "Volvo"}, headers=_auth(uid)).json()["memories"]
    assert VOLVO not in {m["content"] for m in found} and sold["id"] in {m["id"] for m in found}

    # History: readable by id as itself, ended on the second conversation's day, in its ledger.
    old = http.get(f"/v1/memories/{volvo['id']}", headers=_auth(uid)).json()
    assert (old["content"], old["superseded_by"]) == (VOLVO, sold["id"])
    assert old["valid_from"].startswith("2026-01-10") and old["valid_to"].startswith("2026-03-02")
    commits = http.get(f"/v1/memories/{volvo['id']}/history", headers=_auth(uid)).json()["commits"]
    assert commits[-1]["status"] == "superseded"

    # As of a day between the two conversations: the Volvo, not the sale.
    then = http.get("/v1/memories", params={"as_of": "2026-02-01"}, headers=_auth(uid)).json()["memories"]
    assert [m["id"] for m in then] == [volvo["id"]]
    for route in ("/v1/memories/search", "/v1/memories/hybrid-search"):
        hits = http.get(route, params={"q": "Volvo", "as_of": "2026-02-01"}, headers=_auth(uid)).json()["memories"]
        assert [m["id"] for m in hits] == [volvo["id"]], route
    after = http.get("/v1/memories", params={"as_of": "2026-03-03T09:00:00Z"}, headers=_auth(uid)).json()
    assert volvo["id"] not in {m["id"] for m in after["memories"]} and sold["id"] in {m["id"] for m in after["memories"]}

    # A bad as_of is refused and changes nothing.
    before = all_docs(ctx, uid, "memory_items")
    for bad in ("2026-02-30", "yesterday"):
        response = http.get("/v1/memories", params={"as_of": bad}, headers=_auth(uid))
        assert response.status_code == 400 and response.json()["error"]["code"] == "validation_error", response.text
    assert all_docs(ctx, uid, "memory_items") == before
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


def test_a_home_named_in_passing_or_a_sisters_move_ends_nothing(stack: dict[str, Any], http: httpx.Client) -> None:
    """Issue 44's rule: only the owner's own statement of a new value of where they live ends
    "lives in a flat in Croydon". A place named in passing ("the landlord of my flat in Hove")
    states no new home plainly, and someone else's move ("my sister moved into a flat in Hove") is
    not the owner's: when unsure, the fact is left alone."""
    ctx = Context()
    home = "User lives in a flat in Croydon"
    ended = f"asof-{uuid.uuid4().hex[:12]}"
    _say(ctx, stack, ended, "home", "2026-01-10", "I live in a flat in Croydon.")
    _say(ctx, stack, ended, "boiler", "2026-03-02", "The landlord of my flat in Hove finally fixed the boiler.")
    current = {m["content"] for m in http.get("/v1/memories", headers=_auth(ended)).json()["memories"]}
    assert home in current

    kept = f"asof-{uuid.uuid4().hex[:12]}"
    _say(ctx, stack, kept, "home", "2026-01-10", "I live in a flat in Croydon.")
    _say(ctx, stack, kept, "sister", "2026-03-02", "My sister moved into a flat in Hove last week.")
    current = {m["content"] for m in http.get("/v1/memories", headers=_auth(kept)).json()["memories"]}
    assert home in current
    for uid in (ended, kept):
        assert_all_items_legal(ctx, uid)
        assert_ledger_gapless(ctx, uid)

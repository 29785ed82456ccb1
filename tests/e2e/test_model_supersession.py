"""The model path on the stack, answered from committed recordings (issues 43 and 44).

A stack of this module's own runs every function with the model extractor and router on the replay
server, answering from ``strata_dev/bench/data/model_replies`` (replies a capable model wrote seeing
only each request): the blind supersession pairs (``supersession/``) and the sample conversations
(``samples/``). Twelve pairs of the tuning half go through the deployed path: the first conversation
written to Firestore (the trigger captures it), a consolidation pass, the later conversation, another
pass. The samples go through it in order for one user, a pass after each, as ``strata model-replies
dump --routing`` recorded them: every request has its recording (a changed prompt fails here, naming
what to record again), the memories are the recorded ones, each routed as its recorded reply says,
and both indexes serve what was promoted.

Expectations come from the blind labels and the spec's rule, never from the code under test: no
pair labelled ``non_update`` ends the first fact; every fact that did end was ended by a later
statement of the same subject and the same declared attribute; and the model path ends at least one
real change (it is exercised, not stubbed).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.bootstrap import Context
from strata_dev.bench import supersession
from tests.support import model_recordings
from tests.support.firestore_checks import (
    all_docs,
    all_items,
    sample_conversations,
    wait_for,
    write_conversation,
)

pytestmark = pytest.mark.e2e
DATA = Path(supersession.__file__).parent / "data"
PAIRS = json.loads((DATA / "supersession_blind_a.json").read_text(encoding="utf-8"))["pairs"]
SAMPLE_REPLIES = DATA / "model_replies" / "samples"
CHOSEN = ([p for p in PAIRS if p["label"] == "update"][:6] + [p for p in PAIRS if p["label"] == "non_update"][:6])


@pytest.fixture(scope="module")
def model_stack() -> Iterator[dict[str, Any]]:
    state_dir = Path(tempfile.mkdtemp(prefix="strata-test-model-endings-"))
    replies = state_dir / "replies"
    shutil.copytree(DATA / "model_replies" / "supersession", replies)
    shutil.copytree(SAMPLE_REPLIES, replies / "samples")
    with model_recordings.replay_stack(state_dir, replies) as info:
        yield info


def _say(ctx: Context, info: dict[str, Any], uid: str, tag: str, side: dict[str, Any], raw: bool = False) -> None:
    write_conversation(ctx, uid, tag, side if raw else supersession.conversation(side, tag))
    wait_for(lambda: (all_docs(ctx, uid, "capture_runs").get(tag) or {}).get("jobs", {}).get("memories"),
             timeout=120, interval=0.25, what=f"the trigger to capture {tag}")
    response = httpx.post(info["consolidate_url"], json={"uid": uid}, timeout=180)
    assert response.status_code == 200, response.text


def test_model_endings_pass_the_rule_and_remarks_end_nothing(model_stack: dict[str, Any]) -> None:
    ctx = Context()
    ended_updates = 0
    for pair in CHOSEN:
        uid = "u-" + pair["id"]  # the bench's user: memory ids, so the requests' item order, derive from it
        _say(ctx, model_stack, uid, "first", pair["first"])
        first = {mid for mid, item in all_items(ctx, uid).items()
                 if item["conversation_id"] == "first" and item["layer"] == "long_term" and item["status"] == "active"}
        _say(ctx, model_stack, uid, "later", pair["later"])
        items = all_items(ctx, uid)
        ended = [items[mid] for mid in first if items[mid]["status"] == "superseded"]
        if pair["label"] == "non_update":
            assert not ended, (pair["id"], [e["content"] for e in ended])
        for old in ended:
            new = items[old["superseded_by"]]
            assert new["conversation_id"] == "later" and new["slot"] and old["slot"], pair["id"]
            assert new["slot"]["attribute"] == old["slot"]["attribute"] and new["slot_key"] == old["slot_key"]
            assert new["valid_from"] > old["valid_from"] and old["valid_to"] == new["valid_from"]
        ended_updates += bool(ended) and pair["label"] == "update"
        marker = all_docs(ctx, uid, "capture_runs")["later"]
        assert marker["extractor"]["id"] == "openai" and not marker.get("fell_back"), pair["id"]
    assert ended_updates >= 1


def _recorded(name: str) -> list[dict[str, Any]]:
    return json.loads((SAMPLE_REPLIES / f"{name}.json").read_text(encoding="utf-8"))


def test_the_samples_run_the_model_path_on_their_recordings(model_stack: dict[str, Any]) -> None:
    from core.api.auth import emulator_token
    from strata_dev import model_replies

    ctx = Context()
    uid = model_replies.DUMP_UID
    samples = sample_conversations()
    extraction = {e["conversation_id"]: e for e in _recorded("extraction")}
    routing = _recorded("routing")
    assert set(extraction) == set(samples) and routing
    for conversation_id, doc in samples.items():
        _say(ctx, model_stack, uid, conversation_id, {k: v for k, v in doc.items() if k != "id"}, raw=True)
        marker = all_docs(ctx, uid, "capture_runs")[conversation_id]
        assert marker["extractor"]["id"] == "openai" and not marker.get("fell_back"), conversation_id
        captured = {i["content"] for i in all_items(ctx, uid).values() if i["conversation_id"] == conversation_id}
        assert captured == {m["content"] for m in extraction[conversation_id]["reply"]["memories"]}, conversation_id
    missing = sorted(p.name for p in Path(model_stack["model_replay"]["missing"]).glob("*.json"))
    assert not missing, f"requests without a recording (record them: strata model-replies missing): {missing}"

    # Each routed item where its recorded reply sent it: promoted ones in Long-term, archived ones
    # archived, reviewed ones in the review queue (none of these replies proposes an ending).
    items = {i["content"]: i for i in all_items(ctx, uid).values()}
    expected = {}
    for entry in routing:
        sent = {i["item_ref"]: i["content"] for i in json.loads(entry["messages"][-1]["content"])["items"]}
        for proposal in entry["reply"]["proposals"]:
            assert not proposal["supersedes"]
            expected[sent[proposal["item_ref"]]] = proposal["route"]
    assert expected and "promote" in expected.values()
    for content, route in expected.items():
        item = items[content]
        assert item["route"] == route, (content, item["route"])
        assert (item["layer"] == "long_term") == (route == "promote"), content
    with httpx.Client(base_url=model_stack["api_url"], timeout=30) as http:
        auth = {"Authorization": f"Bearer {emulator_token(uid, 'demo-strata')}"}
        queued = {row["content"] for row in http.get("/v1/review-queue", headers=auth).json().get("reviews", [])}
        assert queued >= {c for c, route in expected.items() if route == "review"}
        promoted = sorted(c for c, route in expected.items() if route == "promote")
        for route_path in ("/v1/memories/search", "/v1/memories/vector-search"):
            def found(route_path: str = route_path) -> bool:
                response = http.get(route_path, params={"q": promoted[0]}, headers=auth)
                return response.status_code == 200 and any(
                    m["content"] == promoted[0] for m in response.json().get("memories", []))

            wait_for(found, timeout=60, interval=0.5, what=f"a promoted memory in {route_path}")

"""Endings proposed by the model router pass the server's rule, on the stack (issue 44).

A stack of this module's own runs every function with the model extractor and router on the replay
server, answering from the recordings of the blind pairs (``strata_dev/bench/data/model_replies/
supersession``: replies a capable model wrote seeing only each request). Twelve pairs of the tuning
half go through the deployed path: the first conversation written to Firestore (the trigger captures
it), a consolidation pass, the later conversation, another pass.

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
from tests.support.firestore_checks import all_docs, all_items, wait_for, write_conversation

pytestmark = pytest.mark.e2e
DATA = Path(supersession.__file__).parent / "data"
PAIRS = json.loads((DATA / "supersession_blind_a.json").read_text(encoding="utf-8"))["pairs"]
CHOSEN = ([p for p in PAIRS if p["label"] == "update"][:6] + [p for p in PAIRS if p["label"] == "non_update"][:6])


@pytest.fixture(scope="module")
def model_stack() -> Iterator[dict[str, Any]]:
    state_dir = Path(tempfile.mkdtemp(prefix="strata-test-model-endings-"))
    replies = state_dir / "replies"
    shutil.copytree(DATA / "model_replies" / "supersession", replies)
    with model_recordings.replay_stack(state_dir, replies) as info:
        yield info


def _say(ctx: Context, info: dict[str, Any], uid: str, tag: str, side: dict[str, Any]) -> None:
    write_conversation(ctx, uid, tag, supersession.conversation(side, tag))
    wait_for(lambda: (all_docs(ctx, uid, "capture_runs").get(tag) or {}).get("jobs", {}).get("memories"),
             timeout=120, interval=0.25, what=f"the trigger to capture {tag}")
    response = httpx.post(info["consolidate_url"], json={"uid": uid}, timeout=180)
    assert response.status_code == 200, response.text


def test_model_endings_pass_the_rule_and_remarks_end_nothing(model_stack: dict[str, Any]) -> None:
    ctx = Context()
    ended_updates = 0
    for pair in CHOSEN:
        uid = f"model-end-{pair['id']}"
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

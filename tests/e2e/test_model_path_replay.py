"""The model path end to end on the stack, answered from recorded replies (issue 43).

This module starts a stack of its own with ``model_replay`` (``strata stack up --model-replay DIR``):
every function runs with the model extractor and router (``openai``) on the replay server of
``strata_dev/localstack/model_replay.py``. The recordings are made when the test runs from the
hand-labelled replies of ``tests/support/recordings/model_replies_fixture.json`` and the requests the
project's extractor sends now (``tests/support/model_recordings.py``).

The walk is the recording workflow itself: the app writes a conversation, the trigger captures it
with the model's (recorded) memories; a consolidation pass asks the router, whose request has no
recording yet: the replay server answers 503 and writes it to the missing folder, and
``STRATA_LLM_ON_FAILURE=fail`` leaves the items pending (consolidation retries them); the missing
request is listed by ``strata model-replies missing``, answered by a hand label, and the next pass
routes with that reply: the labelled memories reach Long-term and both indexes. Expectations come
from the labels, never from the code under test.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from strata_dev import model_replies
from tests.support import model_recordings
from tests.support.firestore_checks import all_items, sample_conversations, wait_for, write_conversation

pytestmark = pytest.mark.e2e
CONVERSATION = "c-dinner-plans"


@pytest.fixture(scope="module")
def replay_stack() -> Iterator[dict[str, Any]]:
    state_dir = Path(tempfile.mkdtemp(prefix="strata-test-replay-stack-"))
    replies = state_dir / "replies"
    docs = {CONVERSATION: sample_conversations()[CONVERSATION]}
    model_recordings.write(replies, "extraction", model_recordings.extraction_recordings(docs))
    with model_recordings.replay_stack(state_dir, replies) as info:
        yield info


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, 'demo-strata')}"}


def _consolidate(info: dict[str, Any], uid: str) -> None:
    response = httpx.post(info["consolidate_url"], json={"uid": uid}, timeout=120)
    assert response.status_code == 200, response.text


def _usage_lines(info: dict[str, Any], log_file: str, event: str, uid: str) -> list[dict[str, Any]]:
    """The function's JSON log lines of ``event`` for ``uid`` that carry model usage."""
    from core.logs import hash_uid

    lines = []
    for raw in (Path(info["state_dir"]) / "logs" / log_file).read_text().splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if line.get("message") == event and line.get("uid_hash") == hash_uid(uid) and "model_calls" in line:
            lines.append(line)
    return lines


def test_capture_and_consolidation_run_on_recorded_model_replies(replay_stack: dict[str, Any]) -> None:
    info = replay_stack
    labels = model_recordings.fixture()
    labelled = {m["content"] for m in labels["extraction"][CONVERSATION]["memories"]}
    assert info["model_replay"]["url"] and os.environ["STRATA_EXTRACTOR"] == os.environ["STRATA_ROUTER"] == "openai"
    ctx = Context()
    uid = f"replay-{uuid.uuid4().hex[:10]}"

    # Capture: the trigger's extractor is the model, answered from the recording.
    write_conversation(ctx, uid, CONVERSATION, sample_conversations()[CONVERSATION])
    items = wait_for(lambda: (found := all_items(ctx, uid)) and len(found) >= len(labelled) and found,
                     timeout=90, interval=0.25, what="the model's memories of the conversation")
    assert {i["content"] for i in items.values()} == labelled
    marker = ctx.paths.doc(uid, "capture_runs", CONVERSATION).get().to_dict() or {}
    assert marker["extractor"]["id"] == "openai" and not marker.get("fell_back")
    assert {i["layer"] for i in items.values()} == {"short_term"}

    # Consolidation: the router's request has no recording yet; it is written to the missing folder
    # and the items stay pending.
    missing_dir = Path(info["model_replay"]["missing"])
    _consolidate(info, uid)
    pending = [json.loads(p.read_text()) for p in sorted(missing_dir.glob("*.json"))]
    routing = [e for e in pending if e["schema_name"] == "strata_routes"]
    assert len(routing) == 1, [e["schema_name"] for e in pending]
    assert {i["layer"] for i in all_items(ctx, uid).values()} == {"short_term"}
    listed = model_replies.missing(None, Path(info["model_replay"]["replies"]), missing_dir)
    assert [row["key"] for row in listed] == [routing[0]["key"]]

    # Recorded; the next pass routes with the recorded reply.
    model_recordings.write(Path(info["model_replay"]["replies"]), "routing",
                           [model_recordings.routing_recording(routing[0])])
    assert model_replies.missing(None, Path(info["model_replay"]["replies"]), missing_dir) == []
    _consolidate(info, uid)
    sent = {i["content"] for i in json.loads(routing[0]["messages"][-1]["content"])["items"]}
    promoted = {c for c in sent if labels["routing"].get(c) == "promote"}
    assert promoted, "the router was sent at least one memory the labels promote"
    layers = {i["content"]: i["layer"] for i in all_items(ctx, uid).values()}
    assert {c for c, layer in layers.items() if layer == "long_term"} >= promoted
    assert all(layers[c] != "short_term" for c in sent)

    # Each capture and pass logs what the model cost it (core/metering.py; the strata/model_* metrics).
    capture_lines = _usage_lines(info, "fn_on_conversation_complete.log", "capture", uid)
    assert any(line["model_calls"] == 1 and line["model_failures"] == 0 and line["prompt_tokens"] > 0
               and line["model_fallbacks"] == 0 for line in capture_lines), capture_lines
    passes = _usage_lines(info, "fn_consolidate.log", "consolidation_pass", uid)
    assert [(p["model_calls"], p["model_failures"]) for p in passes] == [(1, 1), (1, 0)], passes

    # Both indexes serve what the model path promoted: keyword (Typesense) and vector search.
    with httpx.Client(base_url=info["api_url"], timeout=30) as http:
        for route, query in (("/v1/memories/search", "nurse Saint Mary's"),
                             ("/v1/memories/vector-search", "Tom works as a nurse at Saint Mary's")):
            def found(route: str = route, query: str = query) -> bool:
                response = http.get(route, params={"q": query}, headers=_auth(uid))
                return response.status_code == 200 and any(
                    "Saint Mary's" in m["content"] for m in response.json().get("memories", []))

            wait_for(found, timeout=60, interval=0.5, what=f"the promoted memory in {route}")


def test_dump_writes_the_routing_requests_the_model_path_makes(replay_stack: dict[str, Any],
                                                               tmp_path: Path) -> None:
    """``strata model-replies dump --routing``: the conversations captured in order on the stack with
    their recorded extraction replies, the router's request after each written as a template; a
    conversation whose extraction is not recorded is skipped and named."""
    samples = sample_conversations()
    labelled = model_recordings.fixture()["extraction"][CONVERSATION]["memories"]
    replies = tmp_path / "replies"
    model_recordings.write(replies, "extraction",
                           model_recordings.extraction_recordings({CONVERSATION: samples[CONVERSATION]}))
    docs = {CONVERSATION: samples[CONVERSATION], "c-doctor": samples["c-doctor"]}
    counts = model_replies.dump(docs, tmp_path / "out", routing_replies=replies)
    assert counts["skipped_without_extraction_replies"] == ["c-doctor"]
    assert counts["conversations"] == 2 and counts["routing_requests"] >= 1
    (request,) = json.loads((tmp_path / "out" / f"routing-{CONVERSATION}.json").read_text())
    assert request["schema_name"] == "strata_routes" and request["reply"] is None
    sent = {i["content"] for i in json.loads(request["messages"][-1]["content"])["items"]}
    assert sent and sent <= {m["content"] for m in labelled}
    assert not sent & {m["content"] for m in labelled if m["sensitivity"]}  # restricted ones stay local
    assert not (tmp_path / "out" / "routing-c-doctor.json").exists()

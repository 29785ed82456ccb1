"""One capture's trace on the stack (issue 46): the model path on the replay server, the spans read
from the stack's trace file (``STRATA_TRACE_EXPORTER=file``, ``<state_dir>/traces.jsonl``).

The app writes a conversation; the trigger captures it with the model's recorded memories. The
capture's trace holds its root span (``capture_conversation``), the model's chat request
(``model.complete_json``), its Firestore calls, and, through the Pub/Sub nudge's ``traceparent``,
the outbox drain it set off (``drain_outbox``) with the keyword index (Typesense), the embedder
and the vector index it projected to. And an API request's root span is named by its route
template and its ``api_request`` log line carries the latency.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.support import model_recordings
from tests.support.firestore_checks import all_items, sample_conversations, wait_for, write_conversation

pytestmark = pytest.mark.e2e
CONVERSATION = "c-dinner-plans"


@pytest.fixture(scope="module")
def traced_stack() -> Iterator[dict[str, Any]]:
    state_dir = Path(tempfile.mkdtemp(prefix="strata-test-traces-"))
    replies = state_dir / "replies"
    docs = {CONVERSATION: sample_conversations()[CONVERSATION]}
    model_recordings.write(replies, "extraction", model_recordings.extraction_recordings(docs))
    with model_recordings.replay_stack(state_dir, replies) as info:
        yield info


def _spans(info: dict[str, Any]) -> list[dict[str, Any]]:
    path = Path(info["trace_file"])
    if not path.exists():
        return []
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:  # a line being written
            continue
    return out


def _trace_of(info: dict[str, Any], root_name: str, uid_hash: str) -> list[dict[str, Any]]:
    """Every span of the trace whose root span is ``root_name`` for the user ``uid_hash``."""
    spans = _spans(info)
    roots = [s for s in spans if s["name"] == root_name and s["attributes"].get("strata.uid_hash") == uid_hash]
    if not roots:
        return []
    trace_id = roots[0]["trace_id"]
    return [s for s in spans if s["trace_id"] == trace_id]


def test_a_capture_trace_shows_its_firestore_index_and_model_spans(traced_stack: dict[str, Any]) -> None:
    from core.logs import hash_uid

    info = traced_stack
    ctx = Context()
    uid = f"traced-{uuid.uuid4().hex[:10]}"
    write_conversation(ctx, uid, CONVERSATION, sample_conversations()[CONVERSATION])
    wait_for(lambda: all_items(ctx, uid), timeout=90, interval=0.25, what="the capture's memories")

    wanted = {"capture_conversation", "model.complete_json", "drain_outbox", "keyword_index.upsert",
              "vector_index.upsert", "embedder.embed"}

    def complete() -> list[dict[str, Any]] | None:
        spans = _trace_of(info, "capture_conversation", hash_uid(uid))
        names = {s["name"] for s in spans}
        return spans if wanted <= names and any(n.startswith("firestore.") for n in names) else None

    spans = wait_for(complete, timeout=90, interval=0.5, what="the capture's trace with its drain")
    by_id = {s["span_id"]: s for s in spans}
    (root,) = [s for s in spans if s["parent_span_id"] is None or s["parent_span_id"] not in by_id]
    assert root["name"] == "capture_conversation"

    def ancestors(span: dict[str, Any]) -> list[str]:
        names = []
        while span["parent_span_id"] in by_id:
            span = by_id[span["parent_span_id"]]
            names.append(span["name"])
        return names

    model = [s for s in spans if s["name"] == "model.complete_json"]
    assert model and all(ancestors(s)[-1] == "capture_conversation" for s in model)
    assert model[0]["attributes"]["gen_ai.request.model"] == info["model_replay"]["model"]
    assert model[0]["attributes"]["strata.schema"]
    assert "drain_outbox" not in ancestors(model[0])  # the model call is capture's own
    capture_firestore = [s for s in spans if s["name"].startswith("firestore.") and "drain_outbox" not in ancestors(s)]
    assert capture_firestore, "capture's own Firestore calls"
    for name in ("keyword_index.upsert", "vector_index.upsert"):
        (index,) = [s for s in spans if s["name"] == name][:1]
        assert "drain_outbox" in ancestors(index) and ancestors(index)[-1] == "capture_conversation"
    for span in spans:
        assert span["status"] != "ERROR", span
        assert span["duration_ms"] >= 0


def test_an_api_request_is_a_span_named_by_its_route_and_a_line_with_its_latency(
        traced_stack: dict[str, Any]) -> None:
    info = traced_stack
    uid = f"traced-api-{uuid.uuid4().hex[:8]}"
    headers = {"Authorization": f"Bearer {emulator_token(uid, 'demo-strata')}"}
    response = httpx.get(f"{info['api_url']}/v1/memories/mem_does_not_exist", headers=headers, timeout=30)
    assert response.status_code == 404
    request_id = response.headers["X-Request-Id"]

    def root() -> dict[str, Any] | None:
        return next((s for s in _spans(info) if s["name"] == "GET /v1/memories/{memory_id}"
                     and s["attributes"].get("http.response.status_code") == 404), None)

    span = wait_for(root, timeout=30, interval=0.25, what="the api request's span")
    assert any(s["name"].startswith("firestore.") and s["trace_id"] == span["trace_id"] for s in _spans(info))

    def line() -> dict[str, Any] | None:
        for raw in (Path(info["state_dir"]) / "logs" / "fn_api.log").read_text().splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if entry.get("message") == "api_request" and entry.get("request_id") == request_id:
                return entry
        return None

    entry = wait_for(line, timeout=30, interval=0.25, what="the api_request line")
    assert entry["route"] == "/v1/memories/{memory_id}" and entry["status"] == 404
    assert isinstance(entry["latency_ms"], float) and entry["latency_ms"] > 0
    assert "mem_does_not_exist" not in json.dumps(entry)
    assert entry["logging.googleapis.com/trace"].endswith("/traces/" + span["trace_id"])

"""A model in the capture path that fails safely, and the capture status an app reads (issue 29).

The stack's own ``on_conversation_complete`` runs the rule extractor. These tests start one more
instance of that same function (functions-framework, ``functions/on_conversation_complete``) whose
settings name an OpenAI-compatible model: the local protocol server of ``tests/support``. They post
it the Firestore ``document.written`` CloudEvent as Eventarc does and, as Eventarc does, deliver the
event again whenever the function answers an error. The stored conversation document stays
``in_progress`` until that function has answered, so the stack's own trigger (rules) never races
it; completing the document afterwards fires that trigger, which finds the revision captured.

Expectations come from the settings (the bound on model calls per revision, fall back or fail)
and from the pinned rule-extractor facts of the sample conversations, never from the code under
test.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.adapters.llm import ChatClient, LLMExtractor
from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.extraction import normalize_text
from core.services import capture
from strata_dev.localstack.processes import (
    free_ports,
    gunicorn_runtime,
    http_responds,
    log_tail,
    spawn,
    stop_group,
)
from tests.e2e.test_capture import SAMPLE_FACTS
from tests.support.cloudevents import conversation_written
from tests.support.firestore_checks import all_items, relay_deliveries, sample_conversations, wait_for
from tests.support.openai_server import CHAT_PATH, OpenAIProtocolServer, Reply, chat_reply

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
REPO = Path(__file__).resolve().parents[2]
MAX_ATTEMPTS = 3
MAX_DELIVERIES = 10  # a bound for the test's own loop, far above the attempts


def _uid() -> str:
    return f"llm-{uuid.uuid4().hex[:12]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _malformed(body: Any) -> Reply:
    return chat_reply("here are the memories: {not json")


@contextlib.contextmanager
def _model_capture_function(server: OpenAIProtocolServer, tmp: Path, on_failure: str) -> Iterator[str]:
    """The capture function in a process of its own, its extractor the server's model."""
    port = free_ports(1)[0]
    with gunicorn_runtime("model-capture") as runtime:
        env = dict(os.environ, STRATA_EXTRACTOR="openai", STRATA_LLM_BASE_URL=server.base_url,
                   STRATA_LLM_MODEL="test-model", STRATA_LLM_TIMEOUT_S="10",
                   STRATA_LLM_MAX_ATTEMPTS=str(MAX_ATTEMPTS), STRATA_LLM_ON_FAILURE=on_failure, **runtime)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        proc = spawn("fn:model-capture", [
            sys.executable, "-m", "functions_framework", "--source",
            str(REPO / "functions" / "on_conversation_complete" / "main.py"), "--target", "on_conversation_complete",
            "--signature-type", "cloudevent", "--host", "127.0.0.1", "--port", str(port)],
            env=env, cwd=REPO, log=tmp / f"model-capture-{on_failure}.log", port=port)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: http_responds(url + "/robots.txt"), timeout=120, interval=0.2,
                     what=f"the model-backed capture function ({log_tail(proc.log)})")
            yield url
        finally:
            stop_group(proc)


def _deliver(url: str, uid: str, doc: dict[str, Any]) -> list[int]:
    """Eventarc's behaviour: deliver the event, again after every error answer. The statuses."""
    body, headers = conversation_written(uid, doc["id"], doc)
    statuses: list[int] = []
    while len(statuses) < MAX_DELIVERIES:
        statuses.append(httpx.post(url, content=body, headers=headers, timeout=60.0).status_code)
        if statuses[-1] < 300:
            break
    return statuses


def _acknowledged_at_once(url: str, uid: str, doc: dict[str, Any]) -> bool:
    statuses = _deliver(url, uid, doc)
    return len(statuses) == 1 and statuses[0] < 300


def _status(http: httpx.Client, uid: str, conversation_id: str) -> dict[str, Any]:
    response = http.get(f"/v1/conversations/{conversation_id}", headers=_auth(uid))
    assert response.status_code == 200, response.text
    return response.json()


def _store_in_progress(ctx: Context, uid: str, doc: dict[str, Any]) -> None:
    data = {k: v for k, v in doc.items() if k != "id"}
    ctx.paths.doc(uid, "conversations", doc["id"]).set(dict(data, status="in_progress"))


def _complete(ctx: Context, stack: dict[str, Any], uid: str, doc: dict[str, Any]) -> None:
    """The app completes the stored document; wait until the stack's own trigger answered it."""
    document = f"users/{uid}/conversations/{doc['id']}"
    delivered = relay_deliveries(stack, document)
    ctx.paths.doc(uid, "conversations", doc["id"]).update({"status": "completed"})
    wait_for(lambda: relay_deliveries(stack, document) > delivered, timeout=60, interval=0.1,
             what="the stack's trigger to answer the completed conversation")


def _contents(http: httpx.Client, uid: str, conversation_id: str) -> set[str]:
    response = http.get("/v1/memories", params={"limit": "500"}, headers=_auth(uid))
    assert response.status_code == 200, response.text
    return {m["content"] for m in response.json()["memories"] if m["conversation_id"] == conversation_id}


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIProtocolServer]:
    with OpenAIProtocolServer() as server:
        yield server


@pytest.fixture(scope="module")
def falling_back(model: OpenAIProtocolServer, stack: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[str]:
    with _model_capture_function(model, tmp_path_factory.mktemp("fn"), "fall_back") as url:
        yield url


@pytest.fixture(scope="module")
def failing(model: OpenAIProtocolServer, stack: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[str]:
    with _model_capture_function(model, tmp_path_factory.mktemp("fn"), "fail") as url:
        yield url


# ------------------------------------------------------------------------ bounded attempts
def test_a_model_that_always_answers_malformed_json_is_called_the_bound_then_the_rules_capture(
        ctx: Context, http: httpx.Client, stack: dict[str, Any], model: OpenAIProtocolServer,
        falling_back: str) -> None:
    uid = _uid()
    doc = sample_conversations()["c-doctor"]
    _store_in_progress(ctx, uid, doc)
    assert _status(http, uid, doc["id"])["state"] == "pending"
    model.chat_responder = _malformed
    calls = len(model.requests_to(CHAT_PATH))
    # The first delivery's model call fails: the function answers an error, the event comes again.
    body, headers = conversation_written(uid, doc["id"], doc)
    assert httpx.post(falling_back, content=body, headers=headers, timeout=60.0).status_code >= 500
    pending = _status(http, uid, doc["id"])
    assert (pending["state"], pending["attempts"], pending["last_error_code"]) == (
        "pending", 1, "llm_malformed_reply"), pending
    assert pending["memory_count"] == 0 and pending["last_attempt_at"] and pending["last_error_at"]
    statuses = _deliver(falling_back, uid, doc)
    # attempts 2 and 3 fail; the third ends the model's turn and the rules capture the revision
    assert [s >= 500 for s in statuses] == [True, False], statuses
    assert len(model.requests_to(CHAT_PATH)) - calls == MAX_ATTEMPTS
    # Later redeliveries of the same event (and the stack's own trigger) never call the model again.
    for _ in range(2):
        assert _acknowledged_at_once(falling_back, uid, doc)
    _complete(ctx, stack, uid, doc)
    assert len(model.requests_to(CHAT_PATH)) - calls == MAX_ATTEMPTS
    assert _contents(http, uid, doc["id"]) == SAMPLE_FACTS[doc["id"]]
    status = _status(http, uid, doc["id"])
    assert status["state"] == "fell_back", status
    assert status["extractor"]["id"] == "rules" and status["last_error_code"] == "llm_malformed_reply"
    assert status["memory_count"] == len(SAMPLE_FACTS[doc["id"]]) and status["attempts"] == MAX_ATTEMPTS
    assert status["captured_at"] and status["conversation_status"] == "completed"
    # A new revision (a reprocess token) has its own bound: three more calls, then the rules again.
    # (the stored document goes back to in_progress with it, so the stack's own trigger stays out)
    ctx.paths.doc(uid, "conversations", doc["id"]).update({"status": "in_progress", "reprocess_token": "again"})
    again = dict(doc, reprocess_token="again")
    assert [s >= 500 for s in _deliver(falling_back, uid, again)] == [True, True, False]
    assert len(model.requests_to(CHAT_PATH)) - calls == 2 * MAX_ATTEMPTS


def test_with_fail_the_revision_is_recorded_failed_after_the_bound_and_earlier_memories_stay(
        ctx: Context, http: httpx.Client, stack: dict[str, Any], model: OpenAIProtocolServer,
        failing: str) -> None:
    uid = _uid()
    doc = sample_conversations()["c-dinner-plans"]
    _store_in_progress(ctx, uid, doc)
    model.chat_responder = _malformed
    calls = len(model.requests_to(CHAT_PATH))
    statuses = _deliver(failing, uid, doc)
    assert [s >= 500 for s in statuses] == [True, True, False], statuses
    assert len(model.requests_to(CHAT_PATH)) - calls == MAX_ATTEMPTS
    assert _acknowledged_at_once(failing, uid, doc)
    _complete(ctx, stack, uid, doc)
    assert len(model.requests_to(CHAT_PATH)) - calls == MAX_ATTEMPTS
    status = _status(http, uid, doc["id"])
    assert (status["state"], status["last_error_code"], status["memory_count"]) == (
        "failed", "llm_malformed_reply", 0), status
    assert _contents(http, uid, doc["id"]) == set()


def test_a_4xx_from_the_model_is_not_silent(ctx: Context, http: httpx.Client, stack: dict[str, Any],
                                            model: OpenAIProtocolServer, falling_back: str) -> None:
    """A refusal is permanent: no retry, no further call; the revision falls back, saying why."""
    uid = _uid()
    doc = sample_conversations()["c-doctor"]
    _store_in_progress(ctx, uid, doc)
    model.chat_responder = lambda body: Reply(status=400, body={"error": {"message": "response_format unsupported"}})
    calls = len(model.requests_to(CHAT_PATH))
    assert _acknowledged_at_once(falling_back, uid, doc)
    assert len(model.requests_to(CHAT_PATH)) - calls == 1
    _complete(ctx, stack, uid, doc)
    status = _status(http, uid, doc["id"])
    assert (status["state"], status["last_error_code"], status["extractor"]["id"]) == (
        "fell_back", "llm_rejected", "rules"), status
    assert _contents(http, uid, doc["id"]) == SAMPLE_FACTS[doc["id"]]


# ----------------------------------------------------------------------------- capture status
def test_capture_status_reports_each_state_and_never_another_users(
        ctx: Context, http: httpx.Client, stack: dict[str, Any], model: OpenAIProtocolServer,
        falling_back: str) -> None:
    uid, other = _uid(), _uid()
    samples = sample_conversations()
    # captured, by the model: a well-formed reply whose quote grounds
    doc = samples["c-doctor"]
    _store_in_progress(ctx, uid, doc)
    model.chat_responder = lambda body: chat_reply({"memories": [{
        "content": "User is cutting down on coffee", "kind": "fact", "category": "lifestyle", "subject": "user",
        "subject_label": None, "quotes": ["cutting down on coffee"], "sensitivity": []}],
        "action_items": [], "goals": []})
    assert _acknowledged_at_once(falling_back, uid, doc)
    _complete(ctx, stack, uid, doc)
    captured = _status(http, uid, doc["id"])
    assert captured["state"] == "captured", captured
    assert captured["extractor"] == {"id": "openai", "version": "1:test-model"}
    assert captured["memory_count"] == 1 and captured["last_error_code"] is None and captured["attempts"] == 1
    # captured, by the stack's rule extractor (an app's ordinary write)
    ruled = samples["c-morning-standup"]
    response = http.post("/v1/conversations", json=ruled, headers=_auth(uid))
    assert response.status_code == 201, response.text
    conversation_id = response.json()["id"]
    state = wait_for(lambda: (s := _status(http, uid, conversation_id))["state"] != "pending" and s,
                     timeout=60, what="the stack's capture")
    assert state["state"] == "captured" and state["extractor"]["id"] == "rules", state
    assert state["memory_count"] == len(SAMPLE_FACTS["c-morning-standup"]) and state["attempts"] == 0
    # pending: not completed yet
    _store_in_progress(ctx, uid, dict(samples["c-bank-call"], id="later"))
    assert _status(http, uid, "later")["state"] == "pending"
    # never another user's, nor an unknown id: 404, the same answer
    for who, conversation in ((other, doc["id"]), (uid, "no-such-conversation")):
        response = http.get(f"/v1/conversations/{conversation}", headers=_auth(who))
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found", response.text
    # the route is in the OpenAPI document with its response schema
    document = http.get("/openapi.json").json()
    operation = document["paths"]["/v1/conversations/{conversation_id}"]["get"]
    assert "CaptureStatus" in operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    schema = document["components"]["schemas"]["CaptureStatus"]
    assert set(schema["properties"]["state"]["enum"]) == {"pending", "captured", "failed", "fell_back"}


# ------------------------------------------------------------------------------ long transcripts
SEGMENTS = 5_000
WINDOW = 200


def _window_memory(body: Any) -> Reply:
    """A model that states one fact per window, quoting the window's first segment verbatim."""
    user = body["messages"][-1]["content"]
    lines = re.findall(r"^\[(\d+)\] (.*)$", user, flags=re.MULTILINE)
    number, text = lines[0]
    tree = re.search(r"tree number (\d+)", text)
    assert number == "1" and tree, user[:200]
    return chat_reply({"memories": [{
        "content": f"User planted tree number {tree.group(1)}", "kind": "fact", "category": "hobbies",
        "subject": "user", "subject_label": None, "quotes": [text], "sensitivity": []}],
        "action_items": [], "goals": []})


def test_a_5000_segment_conversation_is_captured_in_windows_every_quote_in_one_segment(
        ctx: Context, model: OpenAIProtocolServer) -> None:
    uid = _uid()
    segments = [{"id": f"s{i}", "text": f"Today I planted tree number {i} in the orchard by the river.",
                 "speaker": "SPEAKER_0", "is_user": True} for i in range(SEGMENTS)]
    doc = {"status": "completed", "transcript_segments": segments}
    model.chat_responder = _window_memory
    client = ChatClient(model.base_url, "test-model", timeout_s=30)
    calls = len(model.requests_to(CHAT_PATH))
    extractor = LLMExtractor(client, window_segments=WINDOW, window_chars=1_000_000)
    result = capture.capture_conversation(Context(extractor=extractor), uid, "long", doc)
    client.close()
    assert not result.errors and not result.retry, result
    requests = model.requests_to(CHAT_PATH)[calls:]
    assert len(requests) == SEGMENTS // WINDOW
    # the windows are whole segments, in order, together every owner segment exactly once
    sent = [line for r in requests for line in re.findall(r"^\[\d+\] (.*)$", r.body["messages"][-1]["content"],
                                                          flags=re.MULTILINE)]
    assert sent == [s["text"] for s in segments]
    assert all(r.body["max_tokens"] > 0 for r in requests)
    items = all_items(ctx, uid)
    assert len(items) == SEGMENTS // WINDOW == result.created
    by_id = {s["id"]: s["text"] for s in segments}
    for item in items.values():
        (evidence,) = item["evidence"]
        assert evidence["extractor_id"] == "openai"
        for ref in evidence["quote_refs"]:
            assert normalize_text(ref["quote"]) in normalize_text(by_id[ref["segment_id"]])
            holders = [sid for sid, text in by_id.items() if normalize_text(ref["quote"]) in normalize_text(text)]
            assert holders == [ref["segment_id"]], "a quote must be in exactly one segment"

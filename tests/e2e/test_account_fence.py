"""The account-generation fence on the whole local stack (issue 20, item 3).

An account wipe (``DELETE /v1/users/delete-account``) races ten captures that are in flight
through the real Firestore trigger path (document write → emulator → relay →
``on_conversation_complete``); once the wipe has answered 200, the same ten CloudEvents are
delivered to the function again, late. Nothing of the old generation may write anything: when
every delivery has finished, the user has zero documents under ``users/{uid}`` and zero entries in
Typesense and in the vector index.

The default suite runs two rounds; ``STRATA_FENCE_RUNS=10`` runs the issue's "10 runs of 10".
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.services import capture
from tests.support import trace
from tests.support.cloudevents import conversation_written
from tests.support.firestore_checks import user_documents, wait_for, write_conversation

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
CAPTURES = 10
RUNS = int(os.environ.get("STRATA_FENCE_RUNS", "2"))
DELIVERY_TIMEOUT_S = 120.0

LINES = [
    "By the way I moved to {city} in March.",
    "I stopped eating meat about two years ago.",
    "My sister Ana lives in {city} too.",
    "I need to call the landlord about the heating tomorrow.",
]
CITIES = ["Lisbon", "Porto", "Madrid", "Seville", "Vienna", "Prague", "Oslo", "Bergen", "Dublin", "Cork"]


def _finished_deliveries(stack: dict[str, Any], uid: str) -> dict[str, dict[str, int]]:
    """Per function, per conversation of ``uid``: how many trigger deliveries reached their end
    (answered 2xx, or given up) according to the relay's log."""
    text = (Path(stack["state_dir"]) / "logs" / "relay.log").read_text(errors="replace")
    urls = {name: url.rstrip("/") for name, url in stack["function_urls"].items()}
    out: dict[str, dict[str, int]] = {name: {} for name in urls}
    pattern = re.compile(rf"(?:delivered|giving up on) \S+ users/{re.escape(uid)}/conversations/(\S+) id=\S+ to (\S+)")
    for match in pattern.finditer(text):
        for name, url in urls.items():
            if match.group(2).rstrip("/") == url:
                counts = out[name]
                counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return out


def _all_delivered(stack: dict[str, Any], uid: str, conversation_ids: list[str]) -> bool:
    """Every trigger event of the conversations has finished: the creation and the wipe's delete
    (both ``written``) at ``on_conversation_complete``, the delete at ``delete_cascade``."""
    done = _finished_deliveries(stack, uid)
    return all(done["on_conversation_complete"].get(c, 0) >= 2 and done["delete_cascade"].get(c, 0) >= 1
               for c in conversation_ids)


def _wipe(stack: dict[str, Any], uid: str) -> int:
    """Call the account wipe until it completes (503 = projection work or a provider still busy,
    call again); returns how many calls it took."""
    headers = {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}
    calls = 0
    deadline = time.monotonic() + DELIVERY_TIMEOUT_S
    while True:
        calls += 1
        response = httpx.delete(stack["api_url"] + "/v1/users/delete-account", headers=headers, timeout=60)
        if response.status_code == 200:
            assert response.json()["state"] == "completed", response.text
            return calls
        assert response.status_code == 503, response.text
        assert time.monotonic() < deadline, f"the wipe kept answering 503: {response.text}"
        time.sleep(0.2)


def _one_round(stack: dict[str, Any], ctx: Context, round_no: int) -> dict[str, Any]:
    uid = f"u-fence-{uuid.uuid4().hex[:10]}"
    docs = {f"c{i}": trace.conversation_doc(f"c{i}", [line.format(city=CITIES[i]) for line in LINES])
            for i in range(CAPTURES)}
    for conversation_id, doc in docs.items():
        write_conversation(ctx, uid, conversation_id, doc)
    # Vary how far the captures got before the wipe starts: 0-4 of them have committed.
    head_start = round_no % 5
    if head_start:
        wait_for(lambda: sum(1 for _ in ctx.paths.col(uid, "capture_runs").stream()) >= head_start,
                 timeout=DELIVERY_TIMEOUT_S, interval=0.02, what=f"{head_start} captures to commit")
    captured_before = sum(1 for _ in ctx.paths.col(uid, "capture_runs").stream())
    calls = _wipe(stack, uid)
    # Late redeliveries of the same ten CloudEvents, after the wipe answered.
    url = stack["function_urls"]["on_conversation_complete"]
    for conversation_id, doc in docs.items():
        stored = {k: v for k, v in doc.items() if k != "id"}
        body, headers = conversation_written(uid, conversation_id, stored)
        response = httpx.post(url, content=body, headers=headers, timeout=60.0)
        assert response.status_code < 300, response.text
    wait_for(lambda: _all_delivered(stack, uid, list(docs)), timeout=DELIVERY_TIMEOUT_S, interval=0.2,
             what="every trigger delivery of the ten conversations to finish")
    documents = user_documents(ctx, uid)
    keyword, vector = trace.provider_sets(ctx, uid)
    fence = ctx.paths.account_deletion(uid).get().to_dict() or {}
    return {"uid": uid, "documents": sorted(documents), "keyword": sorted(keyword), "vector": sorted(vector),
            "captured_before_wipe": captured_before, "wipe_calls": calls, "fence": fence}


def test_a_wipe_racing_ten_captures_and_their_redeliveries_leaves_nothing(stack: dict[str, Any]) -> None:
    ctx = Context()
    outcomes = [_one_round(stack, ctx, round_no) for round_no in range(RUNS)]
    summary = [(o["captured_before_wipe"], len(o["documents"]), len(o["keyword"]), len(o["vector"]))
               for o in outcomes]
    print(f"\nwipe vs {CAPTURES} captures, {RUNS} runs (captured before wipe, docs, keyword, vector): {summary}")
    for outcome in outcomes:
        assert not outcome["documents"], f"{outcome['uid']} kept documents after the wipe: {outcome['documents']}"
        assert not outcome["keyword"] and not outcome["vector"], outcome
        assert outcome["fence"].get("state") == "completed" and outcome["fence"].get("generation", 0) >= 1, outcome


class PausedExtractor:
    """The rule extractor, held at its start until the test releases it: a capture in flight."""

    def __init__(self) -> None:
        from core.adapters.rules.extractor import RuleExtractor

        self.inner = RuleExtractor()
        self.entered = threading.Event()
        self.release = threading.Event()

    def extract(self, source: Any) -> Any:
        self.entered.set()
        assert self.release.wait(60), "the test never released the extractor"
        return self.inner.extract(source)


@pytest.mark.parametrize("lines", [
    ["By the way I moved to Lisbon in March.", "I need to call the landlord about the heating tomorrow."],
    ["Hi there.", "Nice weather today."],  # nothing to remember: only the workflow/marker write is left
], ids=["memories", "marker_only"])
def test_a_capture_in_flight_during_a_wipe_writes_nothing_after_it(stack: dict[str, Any], lines: list[str]) -> None:
    """The capture read generation 0 when it started; the wipe bumps it and completes while the
    capture is extracting; the capture's apply and its workflow/marker write are then refused
    (acknowledged: no retry) and the account stays empty. The next generation works normally."""
    uid = f"u-fence-{uuid.uuid4().hex[:10]}"
    extractor = PausedExtractor()
    paused = Context(extractor=extractor)
    doc = trace.conversation_doc("c0", lines)
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(
        result=capture.capture_conversation(paused, uid, "c0", doc)))
    worker.start()
    try:
        assert extractor.entered.wait(30), "the capture never started extracting"
        _wipe(stack, uid)
    finally:
        extractor.release.set()
        worker.join(60)
    result = outcome["result"]
    assert result.skipped == "account_generation_changed" and not result.retry, result
    assert not user_documents(paused, uid)
    assert trace.provider_sets(paused, uid) == (set(), set())
    wipe = paused.paths.account_deletion(uid).get().to_dict()
    assert wipe["state"] == "completed" and wipe["generation"] == 1, wipe
    # The new generation works normally, and the control doc carries its number.
    fresh = capture.capture_conversation(Context(), uid, "c1", trace.conversation_doc("c1", ["I moved to Porto in May."]))
    assert fresh.created >= 1 and not fresh.errors, fresh
    assert paused.paths.control(uid).get().to_dict()["account_generation"] == 1


class PausedRouter:
    """The rule router, held until the test releases it: a consolidation pass in flight."""

    router_id = "rules"
    router_version = "1"

    def __init__(self) -> None:
        from core.adapters.rules import RuleRouter

        self.inner = RuleRouter()
        self.entered = threading.Event()
        self.release = threading.Event()

    def route(self, candidates: list[Any]) -> list[Any]:
        self.entered.set()
        assert self.release.wait(60), "the test never released the router"
        return self.inner.route(candidates)


def test_a_consolidation_pass_in_flight_during_a_wipe_writes_nothing_after_it(stack: dict[str, Any]) -> None:
    """The pass holds its lease and is routing when the wipe runs; its route apply is refused, it
    reports the refusal instead of failing, and neither items nor its lease document come back."""
    from core.services import consolidation

    ctx = Context()
    uid = f"u-fence-{uuid.uuid4().hex[:10]}"
    doc = trace.conversation_doc("c0", [line.format(city="Lisbon") for line in LINES[:2]])
    captured = capture.capture_conversation(ctx, uid, "c0", doc)
    assert captured.created >= 1, captured
    router = PausedRouter()
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(summary=consolidation.run_pass(ctx, uid, router=router)))
    worker.start()
    try:
        assert router.entered.wait(30), "the pass never asked the router"
        _wipe(stack, uid)
    finally:
        router.release.set()
        worker.join(60)
    summary = outcome["summary"]
    assert summary["skipped"] == "account_generation_changed" and not summary["routes"], summary
    assert not user_documents(ctx, uid)
    assert trace.provider_sets(ctx, uid) == (set(), set())


def test_no_device_registry_write_while_the_account_is_being_wiped(stack: dict[str, Any]) -> None:
    """Every authenticated request may upsert the caller's device row; while the wipe fence stands
    that write is refused like any other, so the wipe cannot be outrun by a device row."""
    ctx = Context()
    uid = f"u-fence-{uuid.uuid4().hex[:10]}"
    headers = {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}", "X-Device-Id-Hash": "0badcafe",
               "X-App-Platform": "ios", "X-App-Version": "1.2.3"}
    ctx.paths.account_deletion(uid).set({"uid": uid, "state": "fenced", "generation": 1, "steps": {}})
    response = httpx.get(stack["api_url"] + "/v1/memories", headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    assert not user_documents(ctx, uid)
    # Once the wipe is complete the new generation registers the device as usual.
    ctx.paths.account_deletion(uid).set({"state": "completed"}, merge=True)
    response = httpx.get(stack["api_url"] + "/v1/memories", headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    assert list(user_documents(ctx, uid)) == ["client_devices/ios_0badcafe"]


def test_a_drain_that_saw_due_events_before_a_wipe_leaves_nothing_after_it(stack: dict[str, Any],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The drain finds due events, then the account is wiped before it takes its drain lease. The
    lease it takes afterwards would be the only document of the wiped account: the drain reads the
    generation before looking and again once it holds the lease, removes the lease and stops."""
    from core.services import projection

    ctx = Context(publisher=trace.QuietPublisher())  # no drain function runs behind the test
    uid = f"u-fence-{uuid.uuid4().hex[:10]}"
    doc = trace.conversation_doc("c0", [line.format(city="Lisbon") for line in LINES[:2]])
    assert capture.capture_conversation(ctx, uid, "c0", doc).created >= 1
    assert trace.outbox(ctx, uid)
    real = ctx.outbox.due
    looked, release = threading.Event(), threading.Event()

    def due_then_pause(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        if not looked.is_set():
            looked.set()
            assert release.wait(60), "the test never released the drain"
        return found

    monkeypatch.setattr(ctx.outbox, "due", due_then_pause)
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(report=projection.drain_user(ctx, uid)))
    worker.start()
    try:
        assert looked.wait(30), "the drain never looked for due events"
        _wipe(stack, uid)
    finally:
        release.set()
        worker.join(60)
    report = outcome["report"]
    assert not user_documents(ctx, uid)
    assert report.skipped == "account_generation_changed" and report.upserts == 0, report
    assert trace.provider_sets(ctx, uid) == (set(), set())

"""Fenced projection acknowledgements and renewed drain leases (issue 27, point 12), on the stack.

The spec: keyword and vector indexes are outbox-retried projections of canonical state, and a
reclaimed expired-processing event repairs current authoritative provider state before
acknowledgement. So once a user's outbox is empty, every index row of a memory holds the memory's
current text, however two drains interleaved.

* A drain that outlives its lease: drain A reads a memory's first text and stalls in the keyword
  write; meanwhile (A's drain lease and event lease expired: drain B runs on a clock ten minutes
  on) the memory is edited and drain B projects and acknowledges the new text. Then A's stale write
  lands. A must not acknowledge as if all were well: once the outbox is empty again (the drain
  A nudges, over Pub/Sub, to the ``outbox_drain`` function), Typesense holds the new text.
* A drain of many rounds keeps its lease: after each round its lease runs a full lease past the
  round, so a second drain cannot take it over halfway.

Memories are written with a publisher that drops the nudge (as a lost Pub/Sub message would), so
the stack's own push drain does not take the events before the drains under test do.
"""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest

from core.adapters.typesense_index import TypesenseIndex
from core.bootstrap import Context
from core.domain import paths
from core.ports import Publisher
from core.services import edits, intake, projection
from tests.support import trace
from tests.support.firestore_checks import wait_for
from tests.support.seed import take_lease

pytestmark = pytest.mark.e2e
FIRST, SECOND = "I keep my bicycle in the hallway", "I keep my bicycle in the garden shed"


class LostNudge(Publisher):
    """A publisher whose messages are lost (the sweep's case): no push drain starts."""

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        return None


class StalledTypesense(TypesenseIndex):
    """The real Typesense index, whose next upsert waits until the test lets it go."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.entered, self.go = threading.Event(), threading.Event()

    def upsert(self, docs: Any) -> None:
        self.entered.set()
        assert self.go.wait(120), "the stalled upsert was never released"
        super().upsert(docs)


def _typesense_content(ctx: Context, uid: str, memory_id: str) -> list[str]:
    return [d["content"] for d in trace.typesense_docs(ctx, uid) if d.get("memory_id") == memory_id]


def test_a_drain_that_lost_its_lease_leaves_current_state_in_the_index(stack: dict[str, Any]) -> None:
    uid = f"fence-{uuid.uuid4().hex[:12]}"
    quiet = Context(publisher=LostNudge())
    [memory] = intake.create_explicit(quiet, uid, [intake.ExplicitMemory(content=FIRST)])
    assert trace.outbox(quiet, uid), "the create left its outbox events"

    settings = quiet.settings
    stalled = StalledTypesense(settings.typesense_url, settings.typesense_api_key, settings.typesense_collection)
    drain_a = Context(keyword_index=stalled)  # its nudges reach the stack's Pub/Sub push drain
    result: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: result.update(a=projection.drain_user(drain_a, uid)))
    worker.start()
    try:
        assert stalled.entered.wait(60), "drain A never reached its keyword write"
        # A holds the events it read with the first text. The memory changes, and a drain whose
        # clock is past both of A's leases takes the user over and projects the new text.
        edits.edit_content(quiet, uid, memory.id, SECOND)
        later = Context(publisher=LostNudge(), clock=lambda: quiet.now() + timedelta(minutes=10))
        report_b = projection.drain_user(later, uid)
        assert report_b.acknowledged >= 2 and report_b.skipped is None, report_b
        assert _typesense_content(quiet, uid, memory.id) == [SECOND]
    finally:
        stalled.go.set()  # A's write of the first text lands now, after B's
        worker.join(120)
    assert not worker.is_alive()
    wait_for(lambda: not trace.outbox(quiet, uid), timeout=90, interval=0.2, what="the outbox to drain")
    assert _typesense_content(quiet, uid, memory.id) == [SECOND], "a stale write was left with no event to repair it"
    trace.assert_converged(quiet, uid)
    report_a = result["a"]
    assert report_a.acknowledged == 0 and report_a.skipped == "lease_lost", report_a


def test_a_long_drain_renews_its_lease_every_round(stack: dict[str, Any]) -> None:
    uid = f"renew-{uuid.uuid4().hex[:12]}"
    quiet = Context(publisher=LostNudge())
    contents = [f"I labelled jar number {n} in the pantry" for n in range(projection.BATCH + 1)]
    for start in range(0, len(contents), 100):
        intake.create_explicit(quiet, uid, [intake.ExplicitMemory(content=c) for c in contents[start:start + 100]])
    clock = {"now": quiet.now()}
    drain = Context(publisher=LostNudge(), clock=lambda: clock["now"])
    lease = paths.doc(uid, "memory_state", "projection_lease")
    taken_over: list[bool] = []

    def after_round(report: Any) -> None:
        # Each round takes most of a lease (the clock moves on 100 s); another drain then tries.
        clock["now"] += projection.DRAIN_LEASE - timedelta(seconds=20)
        other = Context(publisher=LostNudge(), clock=lambda: clock["now"])
        taken_over.append(take_lease(other.store, lease, "another-drain", projection.DRAIN_LEASE))

    report = projection.drain_user(drain, uid, progress=after_round)
    assert len(taken_over) >= 2, f"expected several rounds, got {len(taken_over)}"
    assert not any(taken_over), f"another drain took the lease over after round(s) {taken_over}"
    assert report.skipped is None and report.acknowledged > projection.BATCH, report
    assert not trace.outbox(quiet, uid)
    trace.assert_converged(quiet, uid)

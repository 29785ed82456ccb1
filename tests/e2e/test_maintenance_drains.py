"""Maintenance drains the outbox before it parses rows and after (issue 27, point 11), on the stack.

The spec: "Maintenance drains existing outbox work before parsing rows and drains new commit events
afterward." The maintenance passes are a consolidation pass, the doctor and a rebuild. Each test
leaves a user's outbox holding undelivered work (the writes go through a publisher that drops the
nudge, as a lost Pub/Sub message would, so no push drain runs behind the test), runs one pass on
the real emulators, Typesense and the vector index, and checks what the rule implies: the pass read
projected state (the doctor reports no drift the outbox was about to fix), and when it returns its
own events are delivered too — the outbox is empty and both indexes hold exactly the projectable
memories, with their current layer.
"""

from __future__ import annotations

import uuid

import pytest

from core.bootstrap import Context
from core.services import consolidation, doctor, intake, rebuild
from tests.support import trace

pytestmark = pytest.mark.e2e
TEXTS = ("I water the ficus every Thursday", "I keep a blue notebook for recipes")


def _user_with_undelivered_work(prefix: str) -> tuple[Context, str]:
    ctx = Context(publisher=trace.QuietPublisher())
    uid = f"{prefix}-{uuid.uuid4().hex[:12]}"
    intake.create_explicit(ctx, uid, [intake.ExplicitMemory(content=t) for t in TEXTS])
    assert trace.outbox(ctx, uid), "the writes left undelivered outbox events"
    return ctx, uid


def _delivered(ctx: Context, uid: str) -> None:
    assert trace.outbox(ctx, uid) == [], "the pass left outbox work undelivered"
    trace.assert_converged(ctx, uid)


def test_a_consolidation_pass_drains_before_and_after(stack: object) -> None:
    ctx, uid = _user_with_undelivered_work("mnt-pass")
    summary = consolidation.run_pass(ctx, uid)
    assert summary["routes"] == {"promote": len(TEXTS)}, summary
    _delivered(ctx, uid)
    layers = {d["memory_id"]: d["layer"] for d in trace.typesense_docs(ctx, uid)}
    assert sorted(layers.values()) == ["long_term"] * len(TEXTS), "the index holds the promoted state"


def test_the_doctor_drains_before_it_reads_and_after_a_repair(stack: object) -> None:
    ctx, uid = _user_with_undelivered_work("mnt-doc")
    report = doctor.run(ctx, uid)
    assert report.findings == [], "undelivered outbox work was reported as drift"
    _delivered(ctx, uid)
    # A real drift (a row removed behind the outbox's back): the repair's events are delivered too.
    victim = sorted(trace.items(ctx, uid))[0]
    ctx.keyword_index.delete(uid, [victim])
    found = doctor.run(ctx, uid)
    assert {(f.provider, f.kind, f.memory_id) for f in found.findings} == {("typesense", "missing", victim)}
    doctor.repair(ctx, found)
    _delivered(ctx, uid)


def test_a_rebuild_drains_before_its_walk_and_after(stack: object) -> None:
    ctx, uid = _user_with_undelivered_work("mnt-reb")
    report = rebuild.rebuild(ctx, "typesense", [uid])
    assert report.users == 1 and report.enqueued == 1 + len(TEXTS), report
    _delivered(ctx, uid)

"""Operations on the real stack: dead-lettered events and their redrive, and the doctor.

Typesense is SIGSTOPped (its port accepts connections, nothing answers) while one user creates,
consolidates and deletes a memory and another deletes all. The drains run in this process with a
Typesense client whose timeout is one second, and each runs with a clock moved past the previous
backoff, so the attempt budget is spent in seconds rather than the backoff ladder's hours. Then
Typesense resumes, ``strata outbox list --dead`` shows every event, ``strata outbox redrive``
re-queues them with a fresh budget, a second redrive changes nothing, and the providers converge on
the canonical state (checked by the spec's reference model, not the projection code). ``strata
doctor`` reports the drift before the redrive and none after.

Stray rows written straight into Typesense (another user's id under this uid, a memory no one has,
a uid no user owns) are reported by the doctor and removed by ``--repair`` through the drain.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from core.adapters.typesense_index import TypesenseIndex
from core.bootstrap import Context
from core.domain import ids
from core.services import consolidation, deletion, doctor, projection, rebuild, redrive
from strata_dev.cli import main as cli
from strata_dev.localstack import faults
from tests.support import trace

pytestmark = pytest.mark.integration

A_LINES = ["I live in Lisbon with my partner.", "My favourite food is grilled sardines.",
           "I work as a nurse at the city hospital."]
B_LINES = ["I play the cello in an amateur orchestra.", "My sister lives in Porto."]


def _frozen_typesense_context(clock: Any = None, keyword: TypesenseIndex | None = None) -> Context:
    s = Context().settings
    keyword = keyword or TypesenseIndex(s.typesense_url, s.typesense_api_key, s.typesense_collection,
                                        timeout_s=0.5, num_retries=0)
    return Context(publisher=trace.QuietPublisher(), keyword_index=keyword, clock=clock)


def _exhaust(uid: str) -> None:
    """Drain ``uid`` once per attempt of the budget, each time past the previous backoff."""
    start = datetime.now(UTC)
    keyword = _frozen_typesense_context().keyword_index
    for attempt in range(1, projection.MAX_ATTEMPTS + 1):
        moment = start + attempt * timedelta(seconds=projection.BACKOFF_MAX_S + 60)
        report = projection.drain_user(_frozen_typesense_context(lambda m=moment: m, keyword), uid)
        assert report.skipped is None and report.acknowledged == 0, report.as_dict()
        assert report.leased >= 1


def _cli(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert cli.main([*argv, "--json"]) == code
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _doctor(capsys: pytest.CaptureFixture[str], uid: str, *extra: str, code: int) -> dict[str, Any]:
    [report] = _cli(capsys, "doctor", "--uid", uid, "--json", *extra, code=code)
    return report


def test_dead_events_are_listed_redriven_once_and_converge(stack: dict[str, Any],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    a, b = f"u-redrive-{uuid.uuid4().hex[:8]}", f"u-redrive-{uuid.uuid4().hex[:8]}"
    with faults.paused(stack["state_dir"], "typesense"):
        ctx = _frozen_typesense_context()
        trace.capture_now(ctx, a, "ca", trace.conversation_doc("ca", A_LINES), write_doc=False)
        assert consolidation.run_pass(ctx, a)["routes"].get("promote", 0) >= 1
        items = trace.items(ctx, a)
        gone = next(m for m in items.values() if "sardines" in m.content)
        deletion.delete_memory(ctx, a, gone.id)
        trace.capture_now(ctx, b, "cb", trace.conversation_doc("cb", B_LINES), write_doc=False)
        deletion.delete_all(ctx, b)
        for uid in (a, b):
            _exhaust(uid)
            events = [e for _, e in trace.outbox(ctx, uid)]
            assert events and all(e["state"] == "dead" and e["attempts"] == projection.MAX_ATTEMPTS
                                  for e in events), events
            assert all("typesense" in e["last_error"].casefold() for e in events)
    dead = {uid: {s.id for s, _ in trace.outbox(ctx, uid)} for uid in (a, b)}
    # Typesense is back but nothing reached it: the doctor sees what the reference model expects.
    expected = {ids.provider_id(a, m.id): m.id for m in trace.items(ctx, a).values()
                if ids.provider_id(a, m.id) in trace.expected_provider_ids(ctx, a)}
    report = _doctor(capsys, a, code=1)
    missing = {f["memory_id"] for f in report["findings"] if f["provider"] == "typesense" and f["kind"] == "missing"}
    assert expected and missing == set(expected.values())
    assert report["drift"]["vector"] == {"missing": 0, "extra": 0, "stale": 0}  # the vector index never failed
    assert report["drift"]["graph"]["missing"] >= 1  # graph writes wait for every provider's acknowledgement

    listed = _cli(capsys, "outbox", "list", "--dead", "--uid", a)
    assert {row["event_id"] for row in listed[:-1]} == dead[a] and listed[-1] == {"dead": len(dead[a])}
    assert all(row["uid"] == a and row["attempts"] == projection.MAX_ATTEMPTS for row in listed[:-1])
    # Across users (the collection-group listing) both users' events appear.
    everyone = {(row["uid"], row["event_id"]) for row in _cli(capsys, "outbox", "list", "--dead")[:-1]}
    assert {(uid, e) for uid in (a, b) for e in dead[uid]} <= everyone
    # --since after every dead_at selects nothing, and a redrive with it moves nothing.
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    assert _cli(capsys, "outbox", "list", "--dead", "--uid", a, "--since", later) == [{"dead": 0}]
    assert _cli(capsys, "outbox", "redrive", "--uid", a, "--since", later)[0]["redriven"] == 0

    quiet = Context(publisher=trace.QuietPublisher())
    for uid in (a, b):
        report = redrive.redrive(quiet, uid)
        assert report.redriven == len(dead[uid]) and report.uids == [uid]
        events = [e for _, e in trace.outbox(quiet, uid)]
        assert all(e["state"] == "pending" and e["attempts"] == 0 and e["redrives"] == 1 for e in events)
        assert redrive.redrive(quiet, uid).redriven == 0  # idempotent: nothing is dead any more
    assert [uid for _, message in quiet.publisher.messages for uid in [message["uid"]]] == [a, b]

    for uid in (a, b):
        trace.converge(quiet, uid)
        trace.assert_converged(quiet, uid)
    trace.assert_forgotten(quiet, a, [gone.id], [gone.content])
    assert trace.expected_provider_ids(quiet, b) == set()
    for uid in (a, b):
        assert _doctor(capsys, uid, code=0)["drift"] == {p: {"missing": 0, "extra": 0, "stale": 0}
                                                         for p in doctor.PROVIDERS}


def _stray(ctx: Context, **doc: Any) -> None:
    url, headers, collection = trace._ts(ctx)
    row = {"layer": "long_term", "revision": 1, "category": "interesting", "updated_at": 0.0, **doc}
    answer = httpx.post(f"{url}/collections/{collection}/documents", headers=headers, json=row, timeout=30,
                        params={"action": "upsert"})
    assert answer.status_code in (200, 201), answer.text


def test_stray_typesense_rows_are_reported_and_repaired_through_the_drain(
        stack: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    ctx = Context(publisher=trace.QuietPublisher())
    owner, nobody = f"u-doctor-{uuid.uuid4().hex[:8]}", f"u-nobody-{uuid.uuid4().hex[:8]}"
    trace.capture_now(ctx, owner, "c1", trace.conversation_doc("c1", A_LINES[:2]), write_doc=False)
    trace.converge(ctx, owner)
    assert _doctor(capsys, owner, code=0)["findings"] == []
    real = sorted(trace.items(ctx, owner))[0]
    stale = sorted(trace.items(ctx, owner))[1]
    # Another user's id for a real memory, a memory nobody has, a uid no user owns, a stale revision.
    _stray(ctx, id=ids.provider_id("someone-else", real), uid=owner, memory_id=real, content="planted")
    _stray(ctx, id=ids.provider_id(owner, "mem-ghost"), uid=owner, memory_id="mem-ghost", content="ghost text")
    _stray(ctx, id=ids.provider_id(nobody, real), uid=nobody, memory_id=real, content="planted elsewhere")
    item = trace.items(ctx, owner)[stale]
    _stray(ctx, id=ids.provider_id(owner, stale), uid=owner, memory_id=stale, content=item.content,
           revision=item.revision + 7, layer=item.layer)  # overwrites the real row: a stale revision
    found = {(f["kind"], f["memory_id"], f["reason"]) for f in _doctor(capsys, owner, code=1)["findings"]}
    assert found == {("extra", real, "foreign_id"), ("extra", "mem-ghost", "orphan"),
                     ("stale", stale, f"revision {item.revision + 7} != {item.revision}")}
    assert {(f["kind"], f["reason"]) for f in _doctor(capsys, nobody, code=1)["findings"]} == {("extra", "orphan")}
    # Across users: the row of the uid that owns nothing is reported as such.
    report = doctor.DoctorReport()
    doctor.ownerless(ctx, {owner}, report, ("typesense",))
    assert (nobody, real, "no_canonical_owner") in {(f.uid, f.memory_id, f.reason) for f in report.findings}

    repaired = _doctor(capsys, owner, "--repair", code=1)
    assert repaired["repairs"] == 3
    assert _doctor(capsys, nobody, "--repair", code=1)["repairs"] == 1  # one purge_user event
    # The repair's own events are drained before the doctor returns (maintenance drains afterwards).
    assert trace.outbox(ctx, nobody) == [] and trace.typesense_docs(ctx, nobody) == []
    for uid in (owner, nobody):
        trace.converge(ctx, uid)
        assert _doctor(capsys, uid, code=0)["findings"] == []
    assert trace.typesense_docs(ctx, nobody) == []
    trace.assert_converged(ctx, owner)


class _Interrupted(Exception):
    pass


def test_rebuild_after_the_collection_is_dropped_resumes_and_keeps_concurrent_deletes_deleted(
        stack: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    ctx = Context(publisher=trace.QuietPublisher())
    first, second = f"u-rebuild-{uuid.uuid4().hex[:8]}", f"u-rebuild-{uuid.uuid4().hex[:8]}"
    trace.capture_now(ctx, first, "c1", trace.conversation_doc("c1", A_LINES), write_doc=False)
    trace.capture_now(ctx, second, "c2", trace.conversation_doc("c2", B_LINES), write_doc=False)
    assert consolidation.run_pass(ctx, second)["routes"].get("promote", 0) >= 1
    for uid in (first, second):
        trace.converge(ctx, uid)
    edges_before = sorted(s.id for s in ctx.paths.col(second, "knowledge_edges").stream())
    assert edges_before
    url, headers, collection = trace._ts(ctx)
    assert httpx.delete(f"{url}/collections/{collection}", headers=headers, timeout=30).status_code == 200
    fresh = Context(publisher=trace.QuietPublisher())  # its Typesense client creates the collection again
    drift = _doctor(capsys, first, code=1)["drift"]["typesense"]
    assert drift["missing"] == len(trace.expected_provider_ids(ctx, first)) == 4  # A_LINES make four memories

    walked = sorted(trace.items(ctx, first))
    deleted: list[str] = []

    def meanwhile(count: int) -> None:
        if not deleted:  # after the first page: one memory already enqueued, the ones not yet walked
            for memory_id in (walked[0], *walked[2:]):
                deletion.delete_memory(fresh, first, memory_id)
                deleted.append(memory_id)
        else:
            raise _Interrupted  # the operator's Ctrl-C after the second page

    report = rebuild.RebuildReport("typesense")
    with pytest.raises(_Interrupted):
        rebuild.rebuild_user(fresh, first, "typesense", "run-one", report, page=1, after_page=meanwhile)
    resumed = rebuild.rebuild(fresh, "typesense", [first], page=1)
    assert resumed.resumed_users == 1 and resumed.enqueued == 0  # the last items were deleted before their walk
    state = fresh.paths.doc(first, "memory_state", "rebuild_typesense").get().to_dict()
    assert state["run_id"] == "run-one" and state["done"] is True and state["cursor"] == walked[-1]
    [row] = _cli(capsys, "rebuild", "--provider", "typesense", "--uid", second)
    assert row["users"] == 1 and row["enqueued"] == 1 + len(trace.expected_provider_ids(ctx, second))
    [row] = _cli(capsys, "rebuild", "--provider", "graph", "--uid", second)
    assert row["enqueued"] == 1 + len(edges_before)

    contents = {m: trace.items(ctx, first)[m] for m in deleted}
    for uid in (first, second):
        trace.converge(fresh, uid)
        assert _doctor(capsys, uid, code=0)["findings"] == []
        trace.assert_converged(fresh, uid)
    assert sorted(s.id for s in ctx.paths.col(second, "knowledge_edges").stream()) == edges_before
    trace.assert_forgotten(fresh, first, deleted, [])
    assert {d["memory_id"] for d in trace.typesense_docs(fresh, first)} == {walked[1]}
    assert all(item.content == "" for item in contents.values())  # tombstoned, content cleared


def test_an_interrupted_rebuild_of_every_user_resumes_without_redoing_finished_users(
        stack: dict[str, Any]) -> None:
    ctx = Context(publisher=trace.QuietPublisher())
    done, left = f"u-rball-{uuid.uuid4().hex[:8]}", f"u-rball-{uuid.uuid4().hex[:8]}"
    for uid in (done, left):
        trace.capture_now(ctx, uid, "c1", trace.conversation_doc("c1", B_LINES), write_doc=False)
        trace.converge(ctx, uid)

    def population(_: Context) -> list[str]:
        return [done, left]  # the session's other users stay out of this run

    def stop_after_first(report: rebuild.RebuildReport) -> None:
        raise _Interrupted

    with pytest.raises(_Interrupted):
        rebuild.rebuild(ctx, "vector", progress=stop_after_first, population=population)
    first_run = ctx.client.collection("projection_rebuilds").document("vector").get().to_dict()
    assert first_run["done"] is False
    resumed = rebuild.rebuild(ctx, "vector", population=population)
    assert resumed.run_id == first_run["run_id"] and resumed.skipped_users == 1 and resumed.users == 1
    assert ctx.client.collection("projection_rebuilds").document("vector").get().to_dict()["done"] is True
    again = rebuild.rebuild(ctx, "vector", population=population)  # a finished run: a new one, every user
    assert again.run_id != first_run["run_id"] and again.users == 2
    for uid in (done, left):
        trace.converge(ctx, uid)
        trace.assert_converged(ctx, uid)

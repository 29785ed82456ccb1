"""The outbox's rules (:mod:`core.domain.outbox`) as plain data: what a lease take or release
decides, which events a round leases and how, what an acknowledgement and a failure commit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.domain import outbox, paths
from core.domain.documents import OutboxEvent
from core.ports import Write

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TTL = timedelta(seconds=60)
UID = "u-rules"


def _entry(n: int, **fields: object) -> outbox.Entry:
    path = paths.outbox_event(UID, f"e{n}")
    return outbox.Entry(path, OutboxEvent(event_id=f"e{n}", uid=UID, memory_id=f"m{n}", action="upsert",
                                          due_at=NOW, **fields), version=n)  # type: ignore[arg-type]


def test_a_live_lease_is_not_taken_and_gets_one_note() -> None:
    held = {"holder": "a", "expires_at": NOW + TTL, "dirty": False, "epoch": 3}
    assert outbox.take(held, "b", NOW, TTL) == (False, None)
    assert outbox.take(held, "b", NOW, TTL, mark_dirty=True) == (False, {"dirty": True})
    assert outbox.take({**held, "dirty": True}, "b", NOW, TTL, mark_dirty=True) == (False, None)
    expired = {**held, "expires_at": NOW - TTL}
    assert outbox.take(expired, "b", NOW, TTL) == (True, {"holder": "b", "expires_at": NOW + TTL, "dirty": False,
                                                          "epoch": 4})


def test_a_release_honours_a_note_once_and_never_releases_another_holder() -> None:
    noted = {"holder": "a", "expires_at": NOW + TTL, "dirty": True}
    assert outbox.release(noted, "a", NOW, TTL, honour_dirty=True) == (True, {"dirty": False, "expires_at": NOW + TTL})
    assert outbox.release(noted, "a", NOW, TTL) == (False, {"holder": None, "expires_at": None, "dirty": False})
    assert outbox.release(noted, "b", NOW, TTL, honour_dirty=True) == (False, None)


def test_a_round_leases_the_free_events_at_the_next_epoch_and_renews_the_drain_lease() -> None:
    taken = _entry(1, state="leased", lease_epoch=2, attempts=1, lease_expires_at=NOW + TTL)  # someone's live lease
    expired = _entry(2, state="leased", lease_epoch=4, attempts=2, lease_expires_at=NOW - TTL)
    due = outbox.Due([taken, expired, _entry(3)], {"holder": "h"}, lease_version="v")
    batch, commit = outbox.leasing(UID, "h", due, NOW)
    assert [e.path for e in batch.entries] == [expired.path, _entry(3).path] and batch.repaired == 1
    assert [(e.event.lease_epoch, e.event.attempts) for e in batch.entries] == [(5, 3), (1, 1)]
    assert commit.guards[outbox.drain_lease(UID)] == outbox.Guard("h")
    assert commit.guards[expired.path] == outbox.Guard(state="leased", epoch=4)
    assert commit.writes[-1] == Write("update", outbox.drain_lease(UID), {"expires_at": NOW + outbox.DRAIN_LEASE})
    assert commit.expected == {outbox.drain_lease(UID): "v", expired.path: 2, _entry(3).path: 3}
    assert not due.lost("h") and due.lost("other")


def test_an_acknowledgement_deletes_only_events_still_at_the_batch_epoch() -> None:
    batch = outbox.Batch(UID, "h", [_entry(1, state="leased", lease_epoch=7)], versions={"x": 1})
    [commit] = outbox.acknowledgement(batch, [Write("set", "users/u-rules/knowledge_edges/e", {})], NOW)
    assert commit.writes[-1] == Write("delete", _entry(1).path)
    assert commit.guards[_entry(1).path].holds({"state": "leased", "lease_epoch": 7})
    assert not commit.guards[_entry(1).path].holds({"state": "leased", "lease_epoch": 8})
    assert commit.renewal and commit.expected is not None


def test_a_failure_backs_off_then_dead_letters() -> None:
    batch = outbox.Batch(UID, "h", [_entry(1, attempts=1, lease_epoch=1), _entry(2, attempts=outbox.MAX_ATTEMPTS)])
    outcome = outbox.failure(batch, "boom", ["vector"], NOW)
    kind, commit = outcome[_entry(1).path]
    assert kind == "retried" and commit.writes[0].data["due_at"] == NOW + outbox.backoff(1)  # type: ignore[index]
    assert outcome[_entry(2).path][0] == "dead"
    assert outbox.backoff(50) == timedelta(seconds=outbox.BACKOFF_MAX_S)


def test_repair_events_are_fenced_by_the_account_generation() -> None:
    batch = outbox.Batch(UID, "h", [_entry(1), _entry(1)])  # one memory, twice
    closing = outbox.closing(batch, outbox.Outcome(), 2, NOW)
    assert list(closing.repairs) == ["m1"] and closing.repairs["m1"].op == "set"
    [guard] = closing.account.values()
    assert guard.holds({"generation": 2, "state": "completed"})
    assert not guard.holds({"generation": 2, "state": "fenced"}) and not guard.holds(None)


def test_closing_a_batch_is_decided_at_once() -> None:
    batch = outbox.Batch(UID, "h", [_entry(1, state="leased", lease_epoch=3, attempts=1), _entry(2, lease_epoch=1)])
    failed = outbox.closing(batch, outbox.Outcome(error="boom", confirmed=["typesense"]), 2, NOW)
    assert failed.together is not None and set(failed.together.guards) == {_entry(1).path, _entry(2).path}
    assert not failed.acknowledgement and not failed.repairs
    done = outbox.closing(batch, outbox.Outcome([Write("set", "users/u-rules/knowledge_edges/e", {})]), 2, NOW)
    assert done.together is None and len(done.acknowledgement) == 1 and done.nudge == outbox.nudge(UID)
    assert [memory_id for memory_id, _ in done.requeues] == ["m1", "m2"] and sorted(done.repairs) == ["m1", "m2"]
    [guard] = done.account.values()
    assert guard.holds({"generation": 2, "state": "completed"}) and not guard.holds({"generation": 3, "state": "completed"})


def test_a_lost_drain_lease_leases_nothing_and_a_refused_lease_says_whether_it_moved_on() -> None:
    due = outbox.Due([_entry(1)], {"holder": "other"})
    batch, commit = outbox.leasing(UID, "h", due, NOW)
    assert batch.lost and not batch.entries and not commit.writes
    refused = outbox.lease_refused(outbox.Batch(UID, "h", []), {"holder": "other"})
    assert refused.lost and refused.more
    assert not outbox.lease_refused(outbox.Batch(UID, "h", []), {"holder": "h"}).lost


def test_a_drain_drops_only_the_lease_it_holds() -> None:
    commit = outbox.dropping("u-rules", "h1")
    lease = outbox.drain_lease("u-rules")
    assert commit.writes == [Write("delete", lease)] and list(commit.guards) == [lease]
    guard = commit.guards[lease]
    assert guard.holds({"holder": "h1"}) and not guard.holds({"holder": "h2"}) and not guard.holds(None)

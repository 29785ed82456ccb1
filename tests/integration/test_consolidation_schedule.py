"""Per-user consolidation scheduling on the local stack (issue 18).

Each test runs in a Firestore project of its own on the stack's emulator (its schedule registry and
walk cursor hold only its users), with a simulated clock and a 60-second interval (what
``STRATA_TICK_SECONDS=60`` sets). Writes go through the real apply path; the outbox drain runs in
this process as a write's nudge would run it, and creates the named tasks on a paused queue of the
real Tasks emulator; :class:`~strata_dev.bench.schedule.Dispatcher` is the scheduler and the task
dispatch: a tick advances the clock one interval, runs the safety-net walk, then every due task's
pass. The oracle is the spec: every pending item settles through exactly one route, once.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.domain.records import MemoryItem
from core.errors import ProviderUnavailable
from core.services import consolidation, projection, scheduling
from core.services.intake import ExplicitMemory, create_explicit
from strata_dev.bench.schedule import Dispatcher, project_context
from tests.support.firestore_checks import assert_ledger_gapless, ledger_head

pytestmark = pytest.mark.integration

INTERVAL = 60.0


class Clock:
    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


class Schedule:
    """One test's deployment: context, clock and dispatcher."""

    def __init__(self, **settings: Any) -> None:
        self.clock = Clock()
        settings.setdefault("tick_seconds", INTERVAL)
        self.ctx = project_context("sched-test", self.clock, **settings)
        self.dispatcher = Dispatcher(self.ctx, self.clock)

    def write(self, uid: str, count: int, tag: str = "") -> list[str]:
        """``count`` pending items for ``uid``, then the drain the commit's nudge triggers."""
        created = create_explicit(self.ctx, uid, [
            ExplicitMemory(content=f"My note {tag}{n} for {uid} is kept in drawer {n}", category="system")
            for n in range(count)])
        projection.drain_user(self.ctx, uid)
        return [i.id for i in created]

    def tick(self) -> dict[str, Any]:
        self.clock.advance(INTERVAL)
        return self.dispatcher.tick()

    def item(self, uid: str, memory_id: str) -> MemoryItem:
        return MemoryItem.from_store(self.ctx.paths.doc(uid, "memory_items", memory_id).get().to_dict())

    def pending(self, uid: str) -> int:
        return len(consolidation.select_pending(self.ctx, uid, 1000))

    def assert_routed_once(self, uid: str, memory_ids: list[str]) -> None:
        """Every item holds a route and the passes routed as many items as there are: each exactly
        once (a pass routes only items still pending at the revision it selected)."""
        assert all(self.item(uid, mid).route for mid in memory_ids)
        routed = sum(sum(p["routes"].values()) for p in self.dispatcher.passes if p["uid"] == uid)
        assert routed == len(memory_ids)
        assert_ledger_gapless(self.ctx, uid)

    def set_disabled(self, on: bool) -> None:
        self.ctx.paths.global_controls().set({"consolidation_disabled": on}, merge=True)


def _uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def test_the_user_that_sorts_last_is_routed_within_two_ticks(stack: dict[str, Any]) -> None:
    run = Schedule(consolidation_pass_limit=20)
    first = [_uid(f"a{n}") for n in range(3)]
    last = _uid("zz")
    written = {uid: run.write(uid, 60) for uid in first}
    run.clock.advance(INTERVAL / 2)
    (late,) = run.write(last, 1)
    tasks = run.dispatcher.tasks()
    assert len(tasks) == 4  # one named task per user and window, due one interval after the write
    assert {t.name.rsplit("/", 1)[-1] for t in tasks} == (
        {scheduling.task_id(uid, "write", scheduling.window(run.ctx, run.clock() - timedelta(seconds=30)))
         for uid in first} | {scheduling.task_id(last, "write", scheduling.window(run.ctx, run.clock()))})

    ticks = 0
    while not run.item(last, late).route:
        ticks += 1
        assert ticks <= 2, "the last user's item waited more than two ticks"
        run.tick()
    # The pass limit (20) made each first user's pass overflow; the continuations ran at once.
    for uid, ids in {**written, last: [late]}.items():
        assert run.pending(uid) == 0
        run.assert_routed_once(uid, ids)
    more = [p for p in run.dispatcher.passes if p["overflow"]]
    assert len(more) == 6  # 60 items / 20 per pass: two overflowing passes per first user


def test_a_duplicate_task_changes_nothing(stack: dict[str, Any]) -> None:
    run = Schedule()
    uid = _uid("dup")
    (memory_id,) = run.write(uid, 1)
    (task,) = run.dispatcher.tasks()
    name = task.name.rsplit("/", 1)[-1]
    # The same named task delivered twice (the emulator, unlike Cloud Tasks, accepts the name again).
    run.ctx.tasks.enqueue(run.ctx.settings.consolidate_url, {"uid": uid}, task_id=name,
                          schedule_at=task.schedule_time)
    passes = run.tick()["passes"]
    assert [sum(p["routes"].values()) for p in passes] == [1, 0]
    head = ledger_head(run.ctx, uid)
    run.assert_routed_once(uid, [memory_id])
    run.ctx.tasks.enqueue(run.ctx.settings.consolidate_url, {"uid": uid}, task_id=name, schedule_at=run.clock())
    assert sum(run.dispatcher.run_due()[0]["routes"].values()) == 0
    assert ledger_head(run.ctx, uid) == head
    # Done, and not marked since: the walk leaves the user alone.
    assert run.tick()["walk"]["users"] == 0


def test_a_deleted_task_is_repaired_by_the_next_walk(stack: dict[str, Any]) -> None:
    run = Schedule()
    uid = _uid("lost")
    (memory_id,) = run.write(uid, 1)
    assert run.dispatcher.purge() == 1  # the task is gone before it ran
    result = run.tick()
    assert result["walk"] == {"users": 1, "enqueued": 1, "wrapped": True}
    run.assert_routed_once(uid, [memory_id])


class FailingFirst:
    """The rules router, failing its first ``failures`` calls (an LLM outage, say)."""

    router_id, router_version = "failing-first", "1"

    def __init__(self, inner: Any, failures: int) -> None:
        self.inner, self.failures = inner, failures

    def route(self, candidates: Any) -> Any:
        if self.failures:
            self.failures -= 1
            raise ProviderUnavailable("router down")
        return self.inner.route(candidates)


def test_a_failed_pass_is_retried_by_the_next_walk(stack: dict[str, Any]) -> None:
    run = Schedule()
    run.ctx = project_context("sched-test", run.clock, router=FailingFirst(run.ctx.router, 2),
                              tick_seconds=INTERVAL)
    run.dispatcher = Dispatcher(run.ctx, run.clock)
    uid = _uid("fail")
    (memory_id,) = run.write(uid, 1)
    first = run.tick()
    # The write's task ran and its pass routed nothing; the user stayed marked with its task past
    # due, so the walk of the same tick enqueued another pass, which failed as well.
    assert [p["retries"] for p in first["passes"]] == [1, 1]
    assert first["walk"]["enqueued"] == 1 and run.pending(uid) == 1
    second = run.tick()
    assert second["walk"]["enqueued"] == 1  # and again, at every walk, until a pass succeeds
    run.assert_routed_once(uid, [memory_id])


def test_disabled_then_enabled_loses_no_user_and_the_walk_is_bounded(stack: dict[str, Any]) -> None:
    run = Schedule(walk_page_size=2, walk_pages=1)
    early = _uid("early")
    early_items = run.write(early, 1)  # its task exists before the switch
    run.set_disabled(True)
    later = sorted(_uid(f"u{n}") for n in range(3))
    written = {early: early_items, **{uid: run.write(uid, 2) for uid in later}}
    assert len(run.dispatcher.tasks()) == 1  # disabled: nothing more is enqueued
    result = run.tick()
    assert result["walk"]["skipped"] == "consolidation_disabled"
    assert [p["skipped"] for p in result["passes"]] == ["consolidation_disabled"]
    assert all(run.pending(uid) for uid in written)

    run.set_disabled(False)
    walks = []
    for _ in range(2):  # four users, two per walk: the cursor carries the walk round
        walks.append(run.tick()["walk"])
    assert [w["users"] for w in walks] == [2, 2]
    assert [w["wrapped"] for w in walks] == [False, True]
    for uid, ids in written.items():
        assert run.pending(uid) == 0
        run.assert_routed_once(uid, ids)

"""schedule: time until every pending item of N users is routed, with the tasks and reads it took.

Each size runs in a Firestore project of its own on the stack's emulator (so the registry and the
walk cursor hold only its users) with a one-second consolidation interval. Setup (not measured):
N users each get one pending item through the real apply path (projection nudges dropped).
Measured, through an RPC-counting client: the outbox drain of those writes (which enqueues each
user's named task on a paused queue of the Tasks emulator), then a :class:`Dispatcher` that runs
every due task's pass in this process and the safety-net walk once per interval, until nothing is
pending. Reported per N: seconds, tasks created, passes run, Firestore reads in all and per routed
item (the drain's projection reads included), and, as the baseline, the reads one tick of the old
global fan-out (a collection-group scan over pending items) made on the same data.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from core.domain import paths
from strata_dev.bench import harness

SIZES = (10, 100, 1000)
QUICK_SIZES = (10, 100)


class Dispatcher:
    """Cloud Tasks' dispatch and Cloud Scheduler, driven by the caller: the context's queue is
    created paused in the Tasks emulator (tasks are really created there, named and scheduled, but
    the emulator never runs them); :meth:`run_due` runs each due task's pass in this process and
    :meth:`tick` adds the scheduler's walk first. ``clock`` is the time tasks are due against."""

    def __init__(self, ctx: Any, clock: Callable[[], datetime]) -> None:
        import grpc
        from google.cloud import tasks_v2
        from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

        settings = ctx.settings
        self.ctx, self.clock = ctx, clock
        channel = grpc.insecure_channel(settings.tasks_emulator_host)
        self._client = tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
        self.queue = self._client.queue_path(settings.project_id, settings.region, settings.tasks_queue)
        self._client.create_queue(parent=self.queue.rsplit("/queues/", 1)[0], queue=tasks_v2.Queue(name=self.queue))
        self._client.pause_queue(name=self.queue)
        self._done: set[int] = set()
        self.passes: list[dict[str, Any]] = []

    def tasks(self) -> list[Any]:
        """Every task created on the queue since the last purge (the emulator keeps run ones too)."""
        return list(self._client.list_tasks(parent=self.queue))

    def purge(self) -> int:
        """Delete every task not yet run (as if the queue lost them); returns how many."""
        lost = len(self.tasks()) - len(self._done)
        self._client.purge_queue(name=self.queue)
        self._done.clear()
        return lost

    def run_due(self) -> list[dict[str, Any]]:
        """Run every due task once, in creation order, until no due task is left (a pass that
        overflows enqueues a continuation that is due at once)."""
        from core.services import consolidation

        ran: list[dict[str, Any]] = []
        while True:
            now = self.clock()
            due = [(i, t) for i, t in enumerate(self.tasks()) if i not in self._done
                   and (not t.schedule_time or t.schedule_time <= now)]
            if not due:
                return ran
            for index, task in due:
                self._done.add(index)
                uid = json.loads(task.http_request.body)["uid"]
                summary = consolidation.run_pass(self.ctx, uid)
                ran.append({**summary, "task": task.name.rsplit("/", 1)[-1]})
            self.passes.extend(ran[-len(due):])

    def tick(self) -> dict[str, Any]:
        """One scheduler tick: the tasks due by now run (as Cloud Tasks runs them when due), then
        the safety-net walk, then the repairs it enqueued."""
        from core.services import consolidation

        ran = self.run_due()
        walked = consolidation.fan_out(self.ctx)
        return {"walk": walked, "passes": ran + self.run_due()}


def project_context(label: str, clock: Callable[[], datetime] | None = None, counted: bool = False,
                    router: Any = None, **settings: Any) -> Any:
    """A Context on a fresh Firestore project of the stack's emulator, with ``settings`` replaced
    (projection nudges dropped: the caller drains) and, if given, its ``router``."""
    from core import config

    base = config.load(project_id=f"demo-{label}-{uuid.uuid4().hex[:8]}", consolidation_on_write=True, **settings)
    overrides: dict[str, Any] = {"publisher": harness.NullPublisher()}
    if clock is not None:
        overrides["clock"] = clock
    if router is not None:
        overrides["router"] = router
    if counted:
        from strata_dev.bench.counting import counting_client

        overrides["client"] = counting_client(base.project_id)
    from core.bootstrap import Context

    return Context(base, **overrides)


def measure(users: int) -> dict[str, Any]:
    from datetime import UTC

    from core.services import consolidation, intake, projection
    from core.services.intake import ExplicitMemory

    ctx = project_context("bench-schedule", counted=True, tick_seconds=1.0)
    dispatcher = Dispatcher(ctx, lambda: datetime.now(UTC))
    uids = [f"u{n:05d}-{uuid.uuid4().hex[:6]}" for n in range(users)]
    for n, uid in enumerate(uids):
        intake.create_explicit(ctx, uid, [ExplicitMemory(content=f"I keep bench note {n} in the blue folder",
                                                         category="system")])
    counts = ctx.client.counts
    counts.reset()
    consolidation.users_with_pending(ctx)  # the baseline: one tick of the old global fan-out
    baseline_reads = counts.snapshot()["reads"]
    counts.reset()
    started = time.monotonic()
    for uid in uids:  # what each write's nudge does: the drain enqueues the user's task
        projection.drain_user(ctx, uid)
    drained = time.monotonic()
    walks = 0
    next_walk = started + 1.0
    deadline = started + 600 + users
    while sum(sum(p["routes"].values()) for p in dispatcher.passes) < len(uids):  # one item each
        if time.monotonic() > deadline:
            raise RuntimeError(f"not every item was routed within {deadline - started:.0f} s")
        dispatcher.run_due()
        if time.monotonic() >= next_walk:
            dispatcher.tick()
            walks, next_walk = walks + 1, next_walk + 1.0
        time.sleep(0.05)
    seconds = time.monotonic() - started
    reads = counts.snapshot()["reads"]
    routed = sum(sum(p["routes"].values()) for p in dispatcher.passes)
    return {"users": users, "routed": routed, "seconds": round(seconds, 2),
            "drain_seconds": round(drained - started, 2), "tasks": len(dispatcher.tasks()),
            "passes": len(dispatcher.passes), "walks": walks, "reads": reads,
            "reads_per_routed_item": round(reads / routed, 2) if routed else None,
            "baseline_scan_reads": baseline_reads}


class _Clock:
    def __init__(self) -> None:
        from datetime import UTC

        self.at = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at


def sorts_last(items: int = 1000, interval: float = 60.0) -> dict[str, Any]:
    """Three users whose ids sort first hold ``items`` pending items each; a user whose id sorts last
    writes one item half an interval later. Simulated clock, ticks of ``interval`` seconds: how many
    ticks after its write until that item is routed (the old global fan-out needed about one tick
    per 500 items pending ahead of it)."""
    from datetime import timedelta

    from core.services import intake, projection
    from core.services.intake import ExplicitMemory

    clock = _Clock()
    ctx = project_context("bench-sorts-last", clock, tick_seconds=interval)
    dispatcher = Dispatcher(ctx, clock)
    first = [f"a{n}-{uuid.uuid4().hex[:6]}" for n in range(3)]
    for uid in first:
        for start in range(0, items, 100):
            intake.create_explicit(ctx, uid, [ExplicitMemory(content=f"Shelf {n} of {uid} holds box {n}",
                                                             category="system")
                                              for n in range(start, min(items, start + 100))])
        projection.drain_user(ctx, uid)
    clock.at += timedelta(seconds=interval / 2)
    last = f"zz-{uuid.uuid4().hex[:6]}"
    (item,) = intake.create_explicit(ctx, last, [ExplicitMemory(content="My last note is on the door",
                                                                category="system")])
    projection.drain_user(ctx, last)
    ref = ctx.paths.doc(last, paths.MEMORY_ITEMS, item.id)
    ticks = 0
    while ticks < 20 and not (ref.get().to_dict() or {}).get("route"):
        clock.at += timedelta(seconds=interval)
        dispatcher.tick()
        ticks += 1
    routed = sum(sum(p["routes"].values()) for p in dispatcher.passes)
    return {"users_first": len(first), "items_each": items, "interval_s": interval,
            "ticks_until_last_routed": ticks, "routed": routed, "passes": len(dispatcher.passes),
            "tasks": len(dispatcher.tasks())}


def run(args: Any) -> dict[str, Any]:
    sizes = (args.size,) if args.size else (QUICK_SIZES if args.quick else SIZES)
    out: dict[str, Any] = {"sizes": [measure(n) for n in sizes]}
    out["sorts_last"] = sorts_last(items=(args.size or 20) if args.quick else (args.size or 1000))
    return out

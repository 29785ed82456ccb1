"""Consolidation scheduling: each user's pass is scheduled by that user's own work.

* **On write.** An apply that makes an item of a user pending (new, or not pending before) carries
  one extra outbox event, ``schedule_consolidation`` (added by ``core.domain.unit_of_work.compose``, which
  wraps every planner; the apply transaction itself is unchanged). The outbox drain turns it into
  a named Cloud Task for the user, due one interval after the write. The name is derived from the
  uid and the interval window of the write, so every write of a window shares one task, and the
  task runs after the window ends: no write of the window is left behind by it.
* **Overflow.** A pass that leaves more than it may select enqueues its own continuation at once.
* **Safety net.** The scheduler job walks the per-user registry ``consolidation_schedule/{uid}``
  (``pending``, ``due_at``, ``marked_at``), never items: a persisted cursor, at most
  ``walk_pages`` pages of ``walk_page_size`` users per invocation, wrapping round. A pending user
  whose task should have run by now (lost, deleted, failed, or skipped while consolidation was
  disabled) gets a repair task. A pass that finds nothing more to do clears ``pending`` unless the
  user was marked again after the pass started.

With ``STRATA_CONSOLIDATION_ON_WRITE=0`` the drain only marks the user and the walk alone schedules
(the test suite's shared stack runs so: its tick is a day, and a day-delayed task per test user
would pile up in the Tasks emulator, which rescans its whole queue ten times a second).

``consolidation_disabled`` stops both the enqueueing and the passes; the registry keeps marking
users meanwhile, so the first walk after it is lifted schedules every one of them. The interval is
``Settings.schedule_interval_s`` (``STRATA_TICK_SECONDS`` on the local stack).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from core.domain import ids, paths
from core.domain.changes import Change
from core.domain.documents import OutboxEvent, ScheduleEntry, WalkCursor
from core.ports import Write
from core.services import controls

REGISTRY = paths.CONSOLIDATION_SCHEDULE
# The look for items left pending runs beside the registry row's read (leaf reads only).
# bench pools --rtt-ms 8, sequential -> pooled: a pass of 24, 11 -> 10 round trips, p50 245 -> 217 ms.
_READS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="schedule-reads")


# ------------------------------------------------------------------------------------ task names
def window(ctx: Any, at: datetime) -> int:
    return int(at.timestamp() // ctx.settings.schedule_interval_s)


def task_id(uid: str, source: str, key: int) -> str:
    """``source``: ``write`` (keyed by window), ``walk`` (window) or ``more`` (ledger sequence)."""
    return "consolidate-" + ids.contract_hash("consolidation-task", [uid, source, key])[:32]


def _registry(uid: str) -> str:
    return paths.schedule_entry(uid)


def _enqueue(ctx: Any, uid: str, name: str, at: datetime) -> None:
    ctx.tasks.enqueue(ctx.settings.consolidate_url, {"uid": uid}, task_id=name, schedule_at=at)


# ----------------------------------------------------------------------------------- the drain
def enqueue_for(ctx: Any, uid: str, events: list[OutboxEvent], row: ScheduleEntry,
                consolidation_disabled: bool) -> tuple[ScheduleEntry, int]:
    """The drained ``schedule_consolidation`` events of ``uid``: one task per window not yet covered,
    given what the drain read for it — the user's registry ``row`` and whether the
    ``consolidation_disabled`` switch is on — and leaving the registry write to the caller (merged
    into the user's registry row, after the enqueues: the drain commits it with its acknowledgement).
    Returns that update and the number of tasks enqueued; an enqueue failure raises."""
    interval = timedelta(seconds=ctx.settings.schedule_interval_s)
    first_write = min(e.created_at or ctx.now() for e in events)
    last_write = max(e.created_at or ctx.now() for e in events)
    now = ctx.now()
    update = ScheduleEntry(uid=uid, pending=True, marked_at=now)
    enqueued = 0
    covered = -1 if row.write_window is None else row.write_window
    if ctx.settings.consolidation_on_write and not consolidation_disabled:
        # Each window's first write names its task; a later window's task runs after every write
        # of the earlier ones, so only windows beyond the one already covered need a task.
        for at in sorted({first_write, last_write}):
            w = window(ctx, at)
            if w <= covered:
                continue
            due = max(at + interval, now)
            _enqueue(ctx, uid, task_id(uid, "write", w), due)
            covered, enqueued = w, enqueued + 1
            update = update.but(write_window=w, due_at=due)
    return update, enqueued


# ------------------------------------------------------------------------------ after a pass
def after_pass(ctx: Any, uid: str, started: datetime, overflow: bool, *,
               alongside: Callable[[], None] | None = None) -> None:
    """Continue an overflowing pass at once (named by the ledger head it left, so a second
    delivery of the same pass adds no second continuation); otherwise the user is done when
    nothing is pending any more, unless marked again since the pass started. ``alongside`` is
    called once, when the reads are in and before any write (the pass releases its lease there,
    so that write and this one run at once)."""
    ref = _registry(uid)
    now = ctx.now()
    done = alongside or (lambda: None)
    if overflow:
        head = ctx.store.head_sequence(uid)
        done()
        _enqueue(ctx, uid, task_id(uid, "more", head), now)
        ctx.store.write(Change("schedule.pass_continue", [Write("set", ref, ScheduleEntry(
            uid=uid, pending=True, marked_at=now, due_at=now).to_store(), merge=True)]))
        return

    # Items the pass left pending (a router failure records a retry and moves on) keep the user
    # marked: its task is now past due, so the next walk enqueues another pass. That look and the
    # registry row are read at once; the row is cleared only if it has not moved since (else it is
    # read and decided on again).
    left = _READS.submit(ctx.store.query, "pending_route_items", {"pending_route": True},
                         parent=paths.user(uid), limit=1, keys_only=True)
    row = ctx.store.get_all_versioned([ref])[ref]
    pending = left.result()
    done()
    if pending:
        return

    clear = ScheduleEntry(pending=False, cleared_at=now).to_store()
    if row is None or not ScheduleEntry.from_store(row.data).unmarked_since(started):
        return  # marked again since the pass started (a mark only moves ``marked_at`` on), or gone
    ctx.store.swap(ref, lambda data: (True, clear) if ScheduleEntry.from_store(data).unmarked_since(started)
                   else (False, None), seen=row, exhausted=False)


# --------------------------------------------------------------------------------- the walk
def walk(ctx: Any) -> dict[str, Any]:
    """The periodic safety net: one bounded, round-robin stretch of the pending users."""
    if controls.is_on(ctx, controls.CONSOLIDATION):
        return {"users": 0, "enqueued": 0, "skipped": "consolidation_disabled"}
    settings = ctx.settings
    state = paths.WALK_CURSOR
    after = WalkCursor.from_store(ctx.store.get(state)).after
    now = ctx.now()
    w = window(ctx, now)
    users = enqueued = 0
    wrapped = False
    for _ in range(max(1, settings.walk_pages)):
        start = {"__name__": after} if after else None
        page = ctx.store.query("scheduled_users_pending", {"pending": True}, limit=settings.walk_page_size + 1,
                               start_after=start)
        more = len(page) > settings.walk_page_size
        for user in page[:settings.walk_page_size]:
            users += 1
            due = ScheduleEntry.from_store(user.data).due_at
            if due is None or due <= now:  # its task should have run by now: repair it
                _enqueue(ctx, user.id, task_id(user.id, "walk", w), now)
                ctx.store.write(Change("schedule.walk_repair", [
                    Write("update", user.path, ScheduleEntry(due_at=now).to_store())]))
                enqueued += 1
            after = user.id
        if not more:
            after, wrapped = None, True  # the end: the next invocation starts over
            break
    ctx.store.write(Change("schedule.walk_cursor", [Write("set", state, WalkCursor(
        after=after, walked_at=now, wrapped=wrapped).to_store())]))
    return {"users": users, "enqueued": enqueued, "wrapped": wrapped}


def pending_users(ctx: Any, page: int = 500) -> list[str]:
    """Every user the registry holds as pending, in id order (for the manual CLI pass)."""
    out: list[str] = []
    after: str | None = None
    while True:
        start = {"__name__": after} if after else None
        rows = ctx.store.query("scheduled_users_pending", {"pending": True}, limit=page, start_after=start)
        out.extend(r.id for r in rows)
        if len(rows) < page:
            return out
        after = rows[-1].id

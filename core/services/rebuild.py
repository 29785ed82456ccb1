"""Rebuild one projection from canonical state, through the outbox.

For each user the rebuild writes one ``purge_user`` event naming the provider, then walks the
user's items in pages (by document id) and writes one ``rebuild`` event per projectable item. The
drain does every provider write: it takes events in ``due_at`` order, so the purge (due first) runs
before or with the items' events, and each event projects its memory's *current* state. A memory
deleted while the rebuild runs is therefore deleted by whichever of its events comes last, never
resurrected; a memory that becomes projectable after the walk brings its own upsert event, due
after the purge. Like every maintenance pass, a user's rebuild drains its due outbox work before the
walk and the events it enqueued afterwards (through the drain, which does every provider write).

Resumable: ``users/{uid}/memory_state/rebuild_{provider}`` keeps the run id and the last item id
enqueued, and ``projection_rebuilds/{provider}`` the run of ``--all``; a rebuild that stopped
part-way (Ctrl-C, a crash) continues where it left off when run again, and users an interrupted
``--all`` finished are not redone. Accounts being wiped are skipped (the wipe purges them).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from core.domain import fence, ids, paths
from core.domain.changes import Change
from core.domain.documents import RebuildMarker, RebuildRun
from core.domain.plan import is_projectable
from core.domain.records import MemoryItem
from core.errors import GenerationChanged, WritesBlocked
from core.ports import Ports, Write
from core.services import graph, projection
from core.services.doctor import users

PAGE = 200
PROVIDERS = ("typesense", "vector", "graph")


@dataclass
class RebuildReport:
    provider: str
    run_id: str = ""
    users: int = 0
    resumed_users: int = 0
    enqueued: int = 0
    skipped_users: int = 0  # finished earlier in the same run, or being wiped

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _state_ref(ctx: Ports, uid: str, provider: str) -> str:
    return paths.rebuild_marker(uid, provider)


def _run_ref(ctx: Ports, provider: str) -> str:
    return paths.rebuild_run(provider)


def _event(uid: str, run_id: str, memory_id: str | None, action: str, provider: str, now: Any) -> tuple[str, dict[str, Any]]:
    event_id = ids.outbox_event_id(f"rebuild:{run_id}", memory_id or "", action)
    return event_id, {
        "event_id": event_id, "uid": uid, "memory_id": memory_id, "action": action, "provider": provider,
        "revision": None, "content_hash": None, "reason": "rebuild", "commit_id": None, "sequence": None,
        "state": "pending", "attempts": 0, "due_at": now, "lease_expires_at": None, "lease_epoch": 0,
        "created_at": now, "last_error": None}


def _after(now: datetime, purge_due: datetime) -> datetime:
    """An item event's due time: strictly after the purge's, so no drain round takes it first."""
    return max(now, purge_due + timedelta(milliseconds=1))


def _wanted(item: MemoryItem, provider: str) -> bool:
    return graph.is_fact(item) if provider == "graph" else is_projectable(item)


def rebuild_user(ctx: Ports, uid: str, provider: str, run_id: str, report: RebuildReport, *,
                 page: int = PAGE, after_page: Callable[[int], None] | None = None) -> None:
    """Enqueue ``uid``'s purge and re-projection for ``provider`` (resuming an unfinished run).

    Every write is fenced by the account generation read first: a wipe that begins meanwhile stops
    the user's rebuild (the wipe purges the providers itself) instead of leaving events behind it."""
    state_ref = _state_ref(ctx, uid, provider)
    state = RebuildMarker.from_store(ctx.store.get(state_ref))
    if state.run_id == run_id and state.done:
        report.skipped_users += 1
        return
    account = ctx.store.read_fence(uid)
    if account.deleting:
        report.skipped_users += 1
        return
    projection.settle(ctx, uid)  # existing outbox work first, before the walk parses the items
    try:
        with fence.expect(uid, account.generation):
            _rebuild_user(ctx, uid, provider, run_id, report, state_ref, state, page, after_page)
    except (GenerationChanged, WritesBlocked):
        report.skipped_users += 1


def _rebuild_user(ctx: Ports, uid: str, provider: str, run_id: str, report: RebuildReport, state_ref: str,
                  state: RebuildMarker, page: int, after_page: Callable[[int], None] | None) -> None:
    report.users += 1
    if state.run_id and not state.done and state.purge_due_at is not None:
        # An interrupted rebuild of this user: its purge is queued (or done), continue the walk.
        run_id, cursor, purge_due = state.run_id, state.cursor, state.purge_due_at
        report.resumed_users += 1
    else:
        cursor, purge_due = None, ctx.now()
        event_id, event = _event(uid, run_id, None, "purge_user", provider, purge_due)
        ctx.store.write(Change("rebuild.user_start", [
            Write("set", paths.outbox_event(uid, event_id), event),
            Write("set", state_ref, RebuildMarker.start(run_id, provider, purge_due).to_store())], fenced=uid))
        report.enqueued += 1
    while True:
        snaps = ctx.store.scan(paths.col(uid, paths.MEMORY_ITEMS), limit=page, after=cursor or None)
        if not snaps:
            break
        writes, now, count = [], _after(ctx.now(), purge_due), 0
        for snap in snaps:
            if _wanted(MemoryItem.from_store(snap.data), provider):
                event_id, event = _event(uid, run_id, snap.id, "rebuild", provider, now)
                writes.append(Write("set", paths.outbox_event(uid, event_id), event))
                count += 1
        cursor = snaps[-1].id
        # the events and the cursor land together
        writes.append(Write("set", state_ref, RebuildMarker(cursor=cursor).to_store(), merge=True))
        ctx.store.write(Change("rebuild.user_page", writes, fenced=uid))
        report.enqueued += count
        if after_page is not None:
            after_page(count)
        if len(snaps) < page:
            break
    finished = RebuildMarker(done=True, finished_at=ctx.now())
    ctx.store.write(Change("rebuild.user_done", [Write("set", state_ref, finished.to_store(), True)], fenced=uid))
    ctx.outbox.nudge(uid)
    projection.settle(ctx, uid)  # and the purge and re-projection it enqueued


def rebuild(ctx: Ports, provider: str, uids: Iterable[str] | None = None, *, page: int = PAGE,
            progress: Callable[[RebuildReport], None] | None = None,
            population: Callable[[Ports], Iterable[str]] = users) -> RebuildReport:
    """Rebuild ``provider`` for ``uids``, or for every user (``population``) when None, resuming
    an unfinished ``--all`` run: users it finished are skipped, a user it left part-way resumes."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    report = RebuildReport(provider)
    if uids is None:
        run = RebuildRun.from_store(ctx.store.get(_run_ref(ctx, provider)))
        report.run_id = run.run_id if run.run_id and not run.done else uuid.uuid4().hex[:16]
        started = RebuildRun(run_id=report.run_id, done=False, started_at=ctx.now())
        ctx.store.write(Change("rebuild.run_start", [Write("set", _run_ref(ctx, provider), started.to_store(),
                                                           merge=True)]))
        for uid in population(ctx):
            rebuild_user(ctx, uid, provider, report.run_id, report, page=page)
            if progress is not None:
                progress(report)
        finished = RebuildRun(done=True, finished_at=ctx.now())
        ctx.store.write(Change("rebuild.run_done", [Write("set", _run_ref(ctx, provider), finished.to_store(),
                                                          merge=True)]))
        return report
    report.run_id = uuid.uuid4().hex[:16]
    for uid in uids:
        rebuild_user(ctx, uid, provider, report.run_id, report, page=page)
        if progress is not None:
            progress(report)
    return report


__all__ = ["PAGE", "PROVIDERS", "RebuildReport", "rebuild", "rebuild_user"]

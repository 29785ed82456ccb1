"""The drain's handlers, one per kind of work: **schedule** consolidation, **project** (the keyword and
the vector index, one handler each), **graph** and **purge user** (an account wipe's keyword purge,
asked for by its own message). A leased batch's state is read once (:func:`read`) into the
:class:`Work` every handler of it is handed; :func:`run` hands it to each handler that wants it,
at once, and returns what they came to (:class:`core.domain.outbox.Outcome`) for the drain to
acknowledge with. Delete-only while the account is fenced or no longer at the drain's generation.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.domain import fence, outbox, paths
from core.domain import projection as plans
from core.domain.documents import (
    AccountDeletion,
    GraphAssertion,
    KeywordPurgeError,
    OutboxEvent,
    ScheduleEntry,
)
from core.domain.plan import SCHEDULE_ACTION
from core.domain.records import MemoryItem
from core.errors import StrataError
from core.ports import Ports, Write
from core.services import controls, graph, indexing, scheduling

log = logging.getLogger(__name__)

# Shared by the drains of one process (the handlers, and a round's read of the incident switch);
# its threads start on first use.
POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="projection")


@dataclass(frozen=True)
class Work:
    """One leased batch as its handlers see it: its events, the state read for them once, and the
    projection's plan (:mod:`core.domain.projection`)."""

    uid: str
    events: list[OutboxEvent]
    memory_ids: list[str]
    fenced: bool  # being wiped, or no longer at the drain's generation: delete-only
    items: dict[str, MemoryItem]
    assertions: dict[str, GraphAssertion]  # the graph assertions of the items that are facts now
    plan: plans.Projection
    registry: ScheduleEntry = field(default_factory=ScheduleEntry)  # the consolidation schedule's row
    consolidation_disabled: bool = False

    @property
    def schedule(self) -> list[OutboxEvent]:
        return [e for e in self.events if e.action == SCHEDULE_ACTION]


@dataclass(frozen=True)
class Done:
    """A handler's result: the writes to acknowledge with, the provider calls it made, and whether
    it is an index that confirmed the batch (recorded on a failed batch's events)."""

    writes: list[Write] = field(default_factory=list)
    calls: int = 0
    confirmed: bool = False


class Handler(Protocol):
    name: str
    pooled: bool  # runs in the drain's pool; else in the drain's own thread (under its fence)

    def wanted(self, work: Work) -> bool: ...

    def run(self, ctx: Ports, work: Work) -> Done: ...


class Schedule:
    """Enqueue the consolidation tasks the batch's scheduling events ask for; the registry row rides
    in the acknowledgement."""

    name, pooled = "schedule", True

    def wanted(self, work: Work) -> bool:
        return bool(work.schedule) and not work.fenced

    def run(self, ctx: Ports, work: Work) -> Done:
        update, _ = scheduling.enqueue_for(ctx, work.uid, work.schedule, work.registry, work.consolidation_disabled)
        return Done([Write("set", paths.schedule_entry(work.uid), update.to_store(), True)])


class Keyword:
    """Project the plan on the keyword index (Typesense)."""

    name, pooled = "typesense", True

    def wanted(self, work: Work) -> bool:
        return True

    def run(self, ctx: Ports, work: Work) -> Done:
        return Done(calls=indexing.sync_keyword(ctx.keyword_index, work.uid, work.plan), confirmed=True)


class Vector:
    """Project the plan on the vector index (Pinecone), embedding the upserts."""

    name, pooled = "vector", True

    def wanted(self, work: Work) -> bool:
        return True

    def run(self, ctx: Ports, work: Work) -> Done:
        return Done(calls=indexing.sync_vector(ctx.vector_index, ctx.embedder, work.uid, work.plan), confirmed=True)


class Graph:
    """Purge the user's graph when the batch asks, then the writes that make it match the batch's
    memories (they ride in the acknowledgement). Its purge is a write: it runs in the drain's thread."""

    name, pooled = "graph", False

    def wanted(self, work: Work) -> bool:
        return True

    def run(self, ctx: Ports, work: Work) -> Done:
        if "graph" in work.plan.purged:
            graph.purge(ctx, work.uid)  # before the plan reads the edges: the plan then only rewrites facts
        if not work.memory_ids:
            return Done()
        return Done(graph.plan(ctx, work.uid, work.memory_ids, work.items, work.assertions, work.fenced).ops)


# In the order their failures are reported and their writes acknowledged.
HANDLERS: tuple[Handler, ...] = (Schedule(), Keyword(), Vector(), Graph())


def run(ctx: Ports, batch: outbox.Batch, generation: int) -> outbox.Outcome:
    """Read the batch's state, hand it to every handler that wants it (the pooled ones at once, the
    others here meanwhile) and, once all finished, what they came to: their writes in handler order,
    or the first failure in that order, with the indexes that confirmed."""
    try:
        work = read(ctx, batch, generation)
        _ = (ctx.keyword_index, ctx.vector_index, ctx.embedder)  # the lazy providers are built here, not in a worker
    except Exception as exc:  # noqa: BLE001 - nothing ran: the batch failed
        return outbox.Outcome(error=_message(exc))
    wanted = [handler for handler in HANDLERS if handler.wanted(work)]
    running: dict[str, Future[Done]] = {h.name: POOL.submit(h.run, ctx, work) for h in wanted if h.pooled}
    here = {h.name: _attempt(h, ctx, work) for h in wanted if not h.pooled}
    writes, confirmed, calls, failures = [], [], 0, []
    for handler in wanted:
        done = here[handler.name] if handler.name in here else _result(running[handler.name])
        if isinstance(done, Exception):
            failures.append(done)
            continue
        writes.extend(done.writes)
        calls += done.calls
        confirmed.extend([handler.name] if done.confirmed else [])
    if failures:
        return outbox.Outcome(error=_message(failures[0]), confirmed=confirmed, calls=calls)
    return outbox.Outcome(writes, confirmed=confirmed, calls=calls, upserts=len(work.plan.upserts),
                          deletes=len(work.plan.deletes))


def _attempt(handler: Handler, ctx: Ports, work: Work) -> Done | Exception:
    try:
        return handler.run(ctx, work)
    except Exception as exc:  # noqa: BLE001 - reported once every handler has finished
        return exc


def _result(future: Future[Done]) -> Done | Exception:
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - reported once every handler has finished
        return exc


def _message(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def read(ctx: Ports, batch: outbox.Batch, generation: int) -> Work:
    """The batch's state in one batched lookup: the account fence and the items (with scheduling
    events, the user's consolidation registry row and the incident switches too), then the graph
    assertions of the items that are graph facts now (the only ones the graph reads one for)."""
    uid, events = batch.uid, batch.events
    memory_ids = plans.memory_ids(events)
    fence_ref, registry_ref = paths.account_deletion(uid), paths.schedule_entry(uid)
    with_schedule = any(e.action == SCHEDULE_ACTION for e in events)
    schedule_refs = [registry_ref, paths.CONTROLS_GLOBAL] if with_schedule else []
    found = ctx.store.get_all([fence_ref, *schedule_refs, *(paths.memory_item(uid, mid) for mid in memory_ids)])
    registry = ScheduleEntry.from_store(found.pop(registry_ref, None))
    switches = found.pop(paths.CONTROLS_GLOBAL, None) or {}
    record = found.pop(fence_ref, None)
    fenced = record is not None and not fence.of(record).admits(generation)
    items = {paths.doc_id(path): MemoryItem.from_store(data) for path, data in found.items() if data is not None}
    assertions = {} if fenced else graph.fact_assertions(ctx, uid, memory_ids, items)
    disabled = bool(ctx.settings.consolidation_on_write and switches.get(controls.CONSOLIDATION))
    plan = plans.plan(uid, events, items, fenced, sensitivity=ctx.sensitivity)
    return Work(uid, events, memory_ids, fenced, items, assertions, plan, registry, disabled)


# ------------------------------------------------------------------------------------ purge user
def purge_keyword_index(ctx: Ports, uid: str, generation: int, requested: str = "") -> str:
    """An account wipe's keyword purge, asked for by its own message (only the drain holds the
    keyword index's write key): purge ``uid``'s rows and record ``keyword_purged`` on the wipe
    record, only while wipe ``generation`` is still in progress (a late or repeated request does
    nothing). A provider failure is recorded as ``keyword_purge_error`` for the waiting api, which
    answers 503; calling again asks again. Returns what happened (logged by the caller)."""
    record_path = paths.account_deletion(uid)

    def current(record: dict[str, Any] | None) -> bool:
        state = fence.of(record)
        return state.deleting and state.generation == generation

    record = ctx.store.get(record_path)
    if not current(record):
        return "stale"
    if AccountDeletion.from_store(record).keyword_purged == generation:
        return "already_purged"
    try:
        ctx.keyword_index.purge_user(uid)
    except Exception as exc:  # noqa: BLE001 - any failure is reported to the waiting api
        message = exc.message if isinstance(exc, StrataError) else f"{type(exc).__name__}: {exc}"
        failure = AccountDeletion(keyword_purge_error=KeywordPurgeError(
            generation=generation, requested=requested, error=str(message)[:500], at=ctx.now())).to_store()
        ctx.store.swap(record_path, lambda d: (True, failure) if current(d) else (False, None), exhausted=False)
        log.warning("account wipe keyword purge failed for generation %s: %s", generation, message)
        return "failed"
    purged = AccountDeletion(keyword_purged=generation).to_store()
    ctx.store.swap(record_path, lambda d: (True, purged) if current(d) else (False, None), exhausted=False)
    return "purged"

"""The unit of work: the one algorithm by which canonical memory state changes.

A canonical mutation is one store transaction. :class:`UnitOfWork` decides everything in it and
does no I/O of its own: it reads through :class:`TransactionReads` (the transaction's reads, which
the store supplies) and returns what the transaction must write, as :class:`Write` rows the store
commits together with those reads — or nothing, when a step raises. Every store implementation
(:class:`core.ports.Store`) therefore runs this same code; it keeps only the mechanics.

The steps, in order (:meth:`UnitOfWork.run`):

1. **read** — the item queries (a cursor page, or the whole cohort up to the item limit) and the
   lineage they reference, then in one read the control doc (``memory_state/apply_control``: head
   commit, gapless sequence, account generation, ``writes_blocked``), the global incident switches,
   the account-deletion fence, the operation doc and every named item and document;
2. **replay** — an operation already journaled returns its journaled result and writes nothing;
3. **fence** — work of an older account generation (:mod:`core.domain.fence`), the incident switch,
   an account being deleted and a blocked account write nothing;
4. **plan** — the planner (composed with this deployment's additions, :func:`compose`) sees a
   read-only :class:`ApplyView`; it may run more than once when the store retries on contention;
5. **stamp and settle** — every written item, read in this transaction and of this user, gets its
   next revision, its times and this commit, then settles (derived fields, legality);
6. **validate** — every validator (:data:`VALIDATORS`: admission receipts) may refuse an item;
7. **outbox** — one upsert (projectable) or delete per written item, then the plan's own events;
8. **commit** — the items, the plan's documents, the outbox events, the commit, the new head and
   the operation journal. An empty plan journals a no-op instead (unless the account has no head).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from core.domain import credentials, fence, ids, paths
from core.domain.admission import admission_validator
from core.domain.documents import ApplyControl, IncidentSwitches, LedgerChange, LedgerCommit, OperationJournal
from core.domain.outbox import outbox_event
from core.domain.plan import (
    MAX_ITEMS_PER_APPLY,
    ApplyResult,
    ApplyView,
    ItemQuery,
    ItemValidator,
    OutboxAction,
    Plan,
    Planner,
    Write,
    is_projectable,
    split_doc_path,
    with_schedule_event,
)
from core.domain.records import MemoryItem
from core.domain.review_queue import with_review_reissue
from core.errors import Conflict, StrataError, WritesBlocked, WritesDisabled

__all__ = ["VALIDATORS", "Chain", "Mutation", "Step", "TransactionReads", "UnitOfWork", "compose"]

# Every item an apply writes passes these: no active Long-term item without its admission receipt
# and graph assertion in the same transaction (docs/architecture.md, atomic admission).
VALIDATORS: tuple[ItemValidator, ...] = (admission_validator,)
def compose(planner: Planner) -> Planner:
    """``planner`` with what every plan of this deployment carries: the re-issued review entry of a
    revised item in review (:func:`core.domain.review_queue.with_review_reissue`) and one
    ``schedule_consolidation`` outbox event when it makes an item pending
    (:func:`core.domain.plan.with_schedule_event`), each in the same commit."""
    return with_schedule_event(with_review_reissue(planner))


class TransactionReads(Protocol):
    """The reads of one store transaction (what a store gives :meth:`UnitOfWork.run`)."""

    def get_all(self, paths: Sequence[str]) -> Mapping[str, dict[str, Any] | None]:
        """Each document's data (None when absent), by slash path, in one round trip."""

    def query(self, name: str, params: Mapping[str, Any], *, parent: str, limit: int,
              after: str | None) -> list[tuple[str, dict[str, Any]]]:
        """(path, data) of named query ``name`` under ``parent``, at most ``limit``, after document
        id ``after``."""


@dataclass(frozen=True)
class Mutation:
    """One apply's arguments, normalised (what every step reads)."""

    uid: str
    kind: str
    op_id: str
    item_ids: list[str]
    doc_paths: list[str]
    actor: str = "system"
    bypass_account_fence: bool = False
    now: datetime | None = None
    item_queries: Mapping[str, ItemQuery] = field(default_factory=dict)
    follow_lineage: bool = False

    @classmethod
    def of(cls, uid: str, kind: str, key: Any, *, item_ids: Iterable[str] = (), doc_paths: Iterable[str] = (),
           actor: str = "system", bypass_account_fence: bool = False, now: datetime | None = None,
           item_queries: Mapping[str, ItemQuery] | None = None, follow_lineage: bool = False) -> Mutation:
        """The mutation of operation (``kind``, ``key``); a :class:`Conflict` when it names more
        items than one apply may touch."""
        named = sorted(set(item_ids))
        if len(named) > MAX_ITEMS_PER_APPLY:
            raise Conflict(f"an apply may touch at most {MAX_ITEMS_PER_APPLY} items", code="too_many_items")
        return cls(uid=uid, kind=kind, op_id=ids.operation_id(uid, kind, key), item_ids=named,
                   doc_paths=sorted(set(doc_paths)), actor=actor, bypass_account_fence=bypass_account_fence,
                   now=now, item_queries=item_queries or {}, follow_lineage=follow_lineage)

    @property
    def control_path(self) -> str:
        return paths.control(self.uid)

    @property
    def op_path(self) -> str:
        return paths.operation(self.uid, self.op_id)

    def item_path(self, memory_id: str) -> str:
        return paths.memory_item(self.uid, memory_id)

    def doc_path(self, plan_path: str) -> str:
        return paths.doc(self.uid, *split_doc_path(plan_path))


@dataclass
class _Read:
    """What the read step fetched, by slash path."""

    data: dict[str, dict[str, Any] | None]
    item_paths: dict[str, str]  # memory id → path: named items, queried items and their lineage
    queried: dict[str, list[str]]
    more: dict[str, bool]


class UnitOfWork:
    """One apply: ``run`` turns what its transaction read into what it writes."""

    def __init__(self, mutation: Mutation, planner: Planner, *, clock: Callable[[], datetime],
                 validators: Sequence[ItemValidator] = VALIDATORS) -> None:
        self.mutation = mutation
        self.planner = compose(planner)
        self.clock = clock
        self.validators = validators

    def run(self, reads: TransactionReads) -> tuple[ApplyResult, list[Write]]:
        """The result of this apply and the writes that commit it (none for a replay)."""
        m = self.mutation
        moment = m.now or self.clock()
        read = self._read(reads)
        if (stored_op := read.data.get(m.op_path)) is not None:  # a replay: the journaled result, nothing written
            op = OperationJournal.from_store(stored_op)
            return ApplyResult(m.op_id, op.commit_id, op.sequence, True, list(op.changed_ids), dict(op.summary),
                               int(op.outbox_events or 0)), []
        stored_control = read.data.get(m.control_path)
        control = ApplyControl.from_store(stored_control)
        deletion = self._fence(read, control)
        sequence = control.sequence + 1
        view = ApplyView(
            uid=m.uid, now=moment, control=control,
            items={mid: (MemoryItem.from_store(d) if (d := read.data.get(p)) else None)
                   for mid, p in read.item_paths.items()},
            docs={p: read.data.get(m.doc_path(p)) for p in m.doc_paths},
            sequence=sequence, commit_id=ids.commit_id(m.uid, sequence, m.op_id), operation_id=m.op_id,
            queried=read.queried, more=read.more,
        )
        plan = self.planner(view)
        if plan.empty:
            return self._noop(plan, moment, journal=stored_control is not None)
        changes = [self._change(item, read, view, plan, moment) for item in plan.items]
        outbox = [OutboxAction(item.id, "upsert" if is_projectable(item) else "delete", m.kind)
                  for item in plan.items] + list(plan.outbox)
        return self._commit(view, plan, changes, outbox, deletion, moment)

    def named_paths(self) -> list[str]:
        """The documents the read step reads by path whatever its queries find: the control doc,
        the switches, the wipe record, the operation doc, the named items and documents."""
        m = self.mutation
        fixed = [m.control_path, paths.CONTROLS_GLOBAL, paths.account_deletion(m.uid), m.op_path]
        return list(dict.fromkeys([*fixed, *map(m.item_path, m.item_ids), *map(m.doc_path, m.doc_paths)]))

    # ------------------------------------------------------------------ steps
    def _read(self, reads: TransactionReads) -> _Read:
        m = self.mutation
        queried: dict[str, list[str]] = {}
        more: dict[str, bool] = {}
        found: dict[str, dict[str, Any] | None] = {}
        for label, spec in m.item_queries.items():
            rows = self._query(reads, label, spec, more)
            queried[label] = [paths.doc_id(path) for path, _ in rows]
            found.update(rows)
        item_paths = {mid: m.item_path(mid) for mid in m.item_ids}
        for path in found:
            item_paths.setdefault(paths.doc_id(path), path)
        if m.follow_lineage:
            for mid in sorted(_lineage(found.values()) - set(item_paths)):
                item_paths[mid] = m.item_path(mid)
        wanted = [p for p in dict.fromkeys([*self.named_paths(), *item_paths.values()]) if p not in found]
        data = dict(found)  # the queried items were read by their queries
        data.update(reads.get_all(wanted))
        return _Read(data, item_paths, queried, more)

    def _query(self, reads: TransactionReads, label: str, spec: ItemQuery,
               more: dict[str, bool]) -> list[tuple[str, dict[str, Any]]]:
        """One item query: a cursor page (``more[label]``: items follow), or the whole cohort,
        refused when it exceeds the apply's item limit."""
        parent = paths.user(self.mutation.uid)
        page = spec[2] if len(spec) > 2 else None  # type: ignore[misc]
        if page is not None:
            size = max(1, min(page.size, MAX_ITEMS_PER_APPLY))
            rows = reads.query(spec[0], spec[1], parent=parent, limit=size + 1, after=page.after)
            more[label] = len(rows) > size
            return rows[:size]
        rows = reads.query(spec[0], spec[1], parent=parent, limit=MAX_ITEMS_PER_APPLY + 1, after=None)
        if len(rows) > MAX_ITEMS_PER_APPLY:
            raise Conflict(f"more than {MAX_ITEMS_PER_APPLY} items match; this operation must be split",
                           code="too_many_items")
        return rows

    def _fence(self, read: _Read, control: ApplyControl) -> dict[str, Any] | None:
        """Work of an older account generation, the incident switch, an account being deleted and
        a blocked account write nothing. Returns the account-deletion record."""
        m = self.mutation
        deletion = read.data.get(paths.account_deletion(m.uid))
        fence.check(m.uid, deletion)
        if IncidentSwitches.from_store(read.data.get(paths.CONTROLS_GLOBAL)).writes_disabled:
            raise WritesDisabled("writes are disabled by an incident switch; try again later")
        if not m.bypass_account_fence:
            fence.admit(m.uid, deletion)
            if control.writes_blocked:
                raise WritesBlocked("writes are blocked for this account")
        return deletion

    def _noop(self, plan: Plan, moment: datetime, *, journal: bool) -> tuple[ApplyResult, list[Write]]:
        """An empty plan journals a no-op (so a replay repeats nothing) — unless nothing was ever
        committed for this account: journaling would create the first document under users/{uid}
        (e.g. a late delete trigger of a wiped conversation), and there is nothing to repeat."""
        m = self.mutation
        writes = [Write("set", m.op_path, OperationJournal(
            operation_id=m.op_id, kind=m.kind, summary=plan.summary, created_at=moment, noop=True,
        ).to_store())] if journal else []
        return ApplyResult(m.op_id, None, None, False, [], plan.summary, notes=plan.notes), writes

    def _change(self, item: MemoryItem, read: _Read, view: ApplyView, plan: Plan,
                moment: datetime) -> LedgerChange:
        """Stamp, settle and validate one written item; its entry in the commit's ``changes``."""
        if item.id not in read.item_paths:  # every written item was read in this transaction
            raise StrataError(f"planner wrote item {item.id} it did not declare as read")
        if item.uid != self.mutation.uid:
            raise StrataError("planner wrote an item of another user")
        previous = view.items.get(item.id)
        item.revision = view.next_revision(item.id)
        item.created_at = previous.created_at if previous and previous.created_at else (item.created_at or moment)
        item.updated_at = moment
        item.ledger_commit_id = view.commit_id
        item.ledger_sequence = view.sequence
        item.settle()
        for validate in self.validators:
            validate(item, view, plan)
        return LedgerChange(memory_id=item.id, revision=item.revision, layer=item.layer, status=item.status,
                            processing_state=item.processing_state, content_hash=item.content_hash,
                            action="create" if previous is None else "update")

    def _commit(self, view: ApplyView, plan: Plan, changes: list[LedgerChange], outbox: list[OutboxAction],
                deletion: dict[str, Any] | None, moment: datetime) -> tuple[ApplyResult, list[Write]]:
        """The items, the plan's documents, the outbox events, the commit, the new head and the
        operation journal."""
        m, commit, sequence = self.mutation, view.commit_id, view.sequence
        writes = [Write("set", m.item_path(item.id), item.to_store()) for item in plan.items]
        writes.extend(Write("delete", m.doc_path(p)) if payload is None else Write("set", m.doc_path(p), payload)
                      for p, payload in plan.docs.items())
        items_by_id = {i.id: i for i in plan.items}
        for action in outbox:
            event_id, event = outbox_event(m.uid, commit, sequence, action, items_by_id.get(action.memory_id),
                                           m.kind, moment)
            writes.append(Write("set", paths.outbox_event(m.uid, event_id), event))
        changed_ids = [i.id for i in plan.items]
        writes.append(Write("set", paths.commit(m.uid, commit), LedgerCommit(
            commit_id=commit, sequence=sequence, parent_commit_id=view.control.head_commit_id,
            operation_id=m.op_id, kind=m.kind, actor=m.actor, changes=tuple(changes),
            doc_writes=tuple(sorted(plan.docs)), created_at=moment, memory_ids=tuple(changed_ids),
            credential=credentials.current() or None,
        ).to_store()))
        writes.append(Write("set", m.control_path, ApplyControl(
            sequence=sequence, head_commit_id=commit, updated_at=moment,
            account_generation=fence.of(deletion).generation, writes_blocked=view.control.writes_blocked,
        ).to_store()))
        writes.append(Write("set", m.op_path, OperationJournal(
            operation_id=m.op_id, kind=m.kind, commit_id=commit, sequence=sequence, changed_ids=tuple(changed_ids),
            summary=plan.summary, created_at=moment, outbox_events=len(outbox),
        ).to_store()))
        return ApplyResult(m.op_id, commit, sequence, False, changed_ids, plan.summary, len(outbox),
                           plan.notes), writes


@dataclass(frozen=True)
class Step:
    """One apply of a :class:`Chain`: its unit of work, and whether it runs after the results of the
    steps before it (``when``; always when None)."""

    work: UnitOfWork
    when: Callable[[list[ApplyResult]], bool] | None = None

    @classmethod
    def of(cls, uid: str, kind: str, key: Any, planner: Planner, *, clock: Callable[[], datetime],
           item_ids: Iterable[str] = (), doc_paths: Iterable[str] = (), actor: str = "system",
           when: Callable[[list[ApplyResult]], bool] | None = None) -> Step:
        """The apply :meth:`core.ports.Store.apply` would run with these arguments, as a step run
        only when ``when`` holds for the results of the steps before it."""
        mutation = Mutation.of(uid, kind, key, item_ids=item_ids, doc_paths=doc_paths, actor=actor)
        return cls(UnitOfWork(mutation, planner, clock=clock), when)


class Chain:
    """Several applies in one store transaction: each is its own ledger commit (sequence, operation
    journal, outbox events), exactly as if it ran alone right after the one before — it reads the
    documents as the earlier steps left them — but all of them commit together or not at all, and
    every document any step names is read in the transaction's first read (the steps must not
    query). ``read_back`` documents are returned as the last step left them."""

    def __init__(self, steps: Sequence[Step], *, read_back: Sequence[str] = ()) -> None:
        if any(step.work.mutation.item_queries for step in steps[1:]):
            raise StrataError("only the first step of a chain may query")
        self.steps = steps
        self.read_back = list(read_back)

    def run(self, reads: TransactionReads) -> tuple[tuple[list[ApplyResult | None], dict[str, dict[str, Any] | None]],
                                                   list[Write]]:
        prefetch = [p for step in self.steps for p in step.work.named_paths()] + self.read_back
        overlay = _Overlay(reads, prefetch)
        results: list[ApplyResult | None] = []
        writes: list[Write] = []
        for step in self.steps:
            done = [r for r in results if r is not None]
            if step.when is not None and not step.when(done):
                results.append(None)
                continue
            result, written = step.work.run(overlay)
            overlay.written(written)
            writes.extend(written)
            results.append(result)
        return (results, overlay.get_all(self.read_back)), writes


class _Overlay(TransactionReads):
    """A transaction's reads as the writes staged so far left them: the first read fetches
    ``prefetch`` too, and a document fetched or written once is answered from here."""

    def __init__(self, reads: TransactionReads, prefetch: Sequence[str]) -> None:
        self.reads, self.prefetch = reads, list(prefetch)
        self.known: dict[str, dict[str, Any] | None] = {}

    def get_all(self, paths: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        missing = [p for p in dict.fromkeys([*paths, *self.prefetch]) if p not in self.known]
        self.prefetch = []
        if missing:
            self.known.update(self.reads.get_all(missing))
        return {p: _copy(self.known[p]) for p in paths}

    def query(self, name: str, params: Mapping[str, Any], *, parent: str, limit: int,
              after: str | None) -> list[tuple[str, dict[str, Any]]]:
        return self.reads.query(name, params, parent=parent, limit=limit, after=after)  # first step only

    def written(self, writes: Sequence[Write]) -> None:
        for write in writes:
            if write.op == "delete":
                self.known[write.path] = None
            elif write.op == "set" and not write.merge:
                self.known[write.path] = _copy(write.data or {})
            else:
                raise StrataError(f"a chain cannot follow a {write.op} of {write.path}")


def _copy(data: dict[str, Any] | None) -> dict[str, Any] | None:
    import copy

    return None if data is None else copy.deepcopy(data)


def _lineage(found: Iterable[dict[str, Any] | None]) -> set[str]:
    """The items queried items reference through ``supersedes`` / ``canonical_memory_id``."""
    linked: set[str] = set()
    for fields in found:
        fields = fields or {}
        linked.update(fields.get("supersedes") or [])
        if fields.get("canonical_memory_id"):
            linked.add(fields["canonical_memory_id"])
    return linked

"""Reconcile: do Typesense, the vector index and the knowledge graph hold what Firestore says?

For one user the doctor streams the canonical items in pages and derives what each projection must
hold with the drain's own rules (``apply.is_projectable`` for the indexes, ``graph.is_fact`` plus the
item's active assertion for the graph; nothing while the account is being wiped). It then streams
each provider's rows for that user in pages and reports:

* ``missing``: a projectable memory (or graph fact) with no row (no edge citing it);
* ``extra``: a row that should not exist, with its reason: ``orphan`` (no such memory),
  ``restricted``, ``deleted``, ``not_visible`` (hidden, superseded, pending, archived),
  ``account_deleting``, ``foreign_id`` (the row's id is not this user's id for the memory: another
  user's row filed under this uid, or a legacy id form), ``duplicate``, ``not_a_fact`` (graph),
  ``no_canonical_owner`` (``--all``: a row whose uid has no user at all);
* ``stale``: the row's revision, or its content's hash, differs from the item's.

Memory is bounded by one user's expected keys (a few short strings per memory); provider rows and
canonical items are only ever held a page at a time. ``repair`` writes no provider itself: it
enqueues one outbox event per drifted memory (the drain then projects that memory's current state)
and a ``purge_user`` event for a uid with no canonical items, then drains them. Like every
maintenance pass, the check drains the user's due outbox work before it reads anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from core.domain import fence, ids, paths
from core.domain.changes import Change
from core.domain.documents import GraphAssertion, KnowledgeEdge
from core.domain.plan import is_projectable
from core.domain.records import MemoryItem
from core.domain.states import HIDDEN, Status
from core.errors import GenerationChanged, WritesBlocked
from core.ports import KeywordIndex, Ports, ProviderRecord, StoredDoc, VectorIndex, Write
from core.services import graph, projection

PAGE = 500
FENCED_BATCH = 400  # repair events per fenced transaction (with the wipe record it reads, under 500)
PROVIDERS = ("typesense", "vector", "graph")


@dataclass(frozen=True)
class Drift:
    provider: str
    kind: str  # missing | extra | stale
    uid: str
    memory_id: str
    provider_id: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class DoctorReport:
    users: int = 0
    canonical: int = 0  # projectable memories
    facts: int = 0  # memories the graph must cite
    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PROVIDERS, 0))
    findings: list[Drift] = field(default_factory=list)
    repairs: int = 0
    skipped_repairs: list[str] = field(default_factory=list)  # uids being wiped: nothing enqueued

    def counts(self) -> dict[str, dict[str, int]]:
        out = {p: {"missing": 0, "extra": 0, "stale": 0} for p in PROVIDERS}
        for f in self.findings:
            out[f.provider][f.kind] += 1
        return out

    @property
    def drift(self) -> bool:
        return bool(self.findings)

    def as_dict(self) -> dict[str, Any]:
        return {"users": self.users, "canonical": self.canonical, "facts": self.facts, "rows": self.rows,
                "drift": self.counts(), "findings": [f.as_dict() for f in self.findings],
                "repairs": self.repairs, "skipped_repairs": self.skipped_repairs}


@dataclass(frozen=True)
class _Expected:
    revision: int
    content_hash: str


@dataclass
class _Canonical:
    fenced: bool = False
    items: int = 0
    expected: dict[str, _Expected] = field(default_factory=dict)  # projectable memory id → key
    other: dict[str, str] = field(default_factory=dict)  # present, not projectable → reason
    edges: dict[str, str] = field(default_factory=dict)  # graph fact memory id → its edge id


def _reason(item: MemoryItem) -> str:
    if item.record_status == Status.TOMBSTONED and item.status != HIDDEN:
        return "deleted"
    if item.restricted:
        return "restricted"
    return "not_visible"


def _pages(ctx: Ports, collection: str) -> Iterator[list[StoredDoc]]:
    """The collection (a slash path) in id order, :data:`PAGE` documents at a time."""
    cursor = None
    while True:
        page = ctx.store.scan(collection, limit=PAGE, after=cursor)
        if page:
            yield page
        if len(page) < PAGE:
            return
        cursor = page[-1].id


def _canonical(ctx: Ports, uid: str) -> _Canonical:
    state = _Canonical(fenced=ctx.store.read_fence(uid).deleting)
    assertion_of: dict[str, str] = {}  # graph fact → the assertion its admission bound
    for page in _pages(ctx, paths.col(uid, paths.MEMORY_ITEMS)):
        for snap in page:
            item = MemoryItem.from_store(snap.data)
            state.items += 1
            if state.fenced:
                state.other[item.id] = "account_deleting"
            elif is_projectable(item):
                state.expected[item.id] = _Expected(item.revision, item.content_hash)
            else:
                state.other[item.id] = _reason(item)
            if not state.fenced and graph.is_fact(item) and item.graph_assertion_id:
                assertion_of[item.id] = item.graph_assertion_id
    if assertion_of:
        for page in _pages(ctx, paths.col(uid, paths.GRAPH_ASSERTIONS)):
            for snap in page:
                assertion = GraphAssertion.from_store(snap.data)
                if (assertion.status == "active" and snap.id in assertion_of
                        and assertion.assertion_id == assertion_of[snap.id] and assertion.edge_id):
                    state.edges[snap.id] = assertion.edge_id
    return state


def _judge(row: ProviderRecord, uid: str, state: _Canonical, seen: set[str]) -> tuple[str, str] | None:
    """(kind, reason) of a drifted row, or None when it is exactly what canonical state wants."""
    expected = state.expected.get(row.memory_id)
    if expected is None:
        return "extra", state.other.get(row.memory_id, "orphan")
    if row.provider_id != ids.provider_id(uid, row.memory_id):
        return "extra", "foreign_id"
    if row.memory_id in seen:
        return "extra", "duplicate"
    if row.revision != expected.revision:
        return "stale", f"revision {row.revision} != {expected.revision}"
    if row.content is not None and ids.content_hash(row.content) != expected.content_hash:
        return "stale", "content hash"
    return None


def _check_index(name: str, index: KeywordIndex | VectorIndex, uid: str, state: _Canonical,
                 report: DoctorReport) -> None:
    seen: set[str] = set()  # memories with their own row (current or stale)
    for page in index.records(uid):
        report.rows[name] += len(page)
        for row in page:
            verdict = _judge(row, uid, state, seen)
            if verdict is None or verdict[0] == "stale":
                seen.add(row.memory_id)
            if verdict is not None:
                report.findings.append(Drift(name, verdict[0], uid, row.memory_id, row.provider_id, verdict[1]))
    for memory_id in sorted(set(state.expected) - seen):
        report.findings.append(Drift(name, "missing", uid, memory_id, ids.provider_id(uid, memory_id), "not indexed"))


def _check_graph(ctx: Ports, uid: str, state: _Canonical, report: DoctorReport) -> None:
    cited: set[str] = set()
    for page in _pages(ctx, paths.col(uid, paths.KNOWLEDGE_EDGES)):
        report.rows["graph"] += len(page)
        for snap in page:
            for memory_id in KnowledgeEdge.from_store(snap.data).memory_ids:
                edge = state.edges.get(memory_id)
                if edge == snap.id:
                    cited.add(memory_id)
                    continue
                if edge:
                    reason = "stale_edge"  # a fact, cited by an edge its assertion does not name
                elif memory_id in state.expected:
                    reason = "not_a_fact"  # indexed, but not an active Long-term fact
                else:
                    reason = state.other.get(memory_id, "orphan")
                report.findings.append(Drift("graph", "extra", uid, memory_id, snap.id, reason))
    for memory_id in sorted(set(state.edges) - cited):
        report.findings.append(Drift("graph", "missing", uid, memory_id, state.edges[memory_id], "no edge cites it"))


def check_user(ctx: Ports, uid: str, report: DoctorReport, providers: tuple[str, ...] = PROVIDERS) -> _Canonical:
    """Compare one user's canonical state with each provider; findings are added to ``report``.
    The user's due outbox work is drained first (maintenance reads projected state), so what the
    outbox is about to deliver is not reported as drift."""
    projection.settle(ctx, uid)
    state = _canonical(ctx, uid)
    report.users += 1
    report.canonical += len(state.expected)
    report.facts += len(state.edges)
    if "typesense" in providers:
        _check_index("typesense", ctx.keyword_index, uid, state, report)
    if "vector" in providers:
        _check_index("vector", ctx.vector_index, uid, state, report)
    if "graph" in providers:
        _check_graph(ctx, uid, state, report)
    return state


def users(ctx: Ports) -> Iterator[str]:
    """Every user with any document under the user's root ``users/{uid}`` (the root document may not
    exist)."""
    yield from ctx.store.children(paths.users_collection())


def ownerless(ctx: Ports, known: set[str], report: DoctorReport, providers: tuple[str, ...]) -> None:
    """Index rows whose uid is no user's at all."""
    indexes = [(n, i) for n, i in (("typesense", ctx.keyword_index), ("vector", ctx.vector_index)) if n in providers]
    for name, index in indexes:
        for page in index.records(None):
            for row in page:
                if row.uid not in known:
                    report.findings.append(Drift(name, "extra", row.uid, row.memory_id, row.provider_id,
                                                 "no_canonical_owner"))


def run(ctx: Ports, uid: str | None, *, providers: tuple[str, ...] = PROVIDERS,
        progress: Callable[[str, DoctorReport], None] | None = None) -> DoctorReport:
    """Check one user, or (``uid`` None) every user and then rows of uids no user owns."""
    report = DoctorReport()
    if uid is not None:
        check_user(ctx, uid, report, providers)
        return report
    known: set[str] = set()
    for each in users(ctx):
        known.add(each)
        check_user(ctx, each, report, providers)
        if progress is not None:
            progress(each, report)
    ownerless(ctx, known, report, providers)
    return report


def repair(ctx: Ports, report: DoctorReport) -> DoctorReport:
    """Enqueue the outbox events that converge every drifted memory; nudge each user's drain.

    A user with canonical items gets one event per drifted memory (the drain projects that memory's
    current state: upsert, delete, graph rewrite or prune). A uid with no canonical item gets one
    ``purge_user`` event. Nothing is enqueued for an account being wiped (the wipe purges it).
    """
    by_uid: dict[str, set[str]] = {}
    for finding in report.findings:
        by_uid.setdefault(finding.uid, set()).add(finding.memory_id)
    for uid, memory_ids in sorted(by_uid.items()):
        account = ctx.store.read_fence(uid)
        if account.deleting:
            report.skipped_repairs.append(uid)
            continue
        try:
            with fence.expect(uid, account.generation):
                _enqueue_repairs(ctx, uid, memory_ids, report)
        except (GenerationChanged, WritesBlocked):  # a wipe began meanwhile: it purges the providers itself
            report.skipped_repairs.append(uid)
        projection.settle(ctx, uid)  # the repair events are drained before the doctor returns
    return report


def _enqueue_repairs(ctx: Ports, uid: str, memory_ids: set[str], report: DoctorReport) -> None:
    """One user's repair events, in fenced batches (none lands once a wipe of the account began)."""
    owned = ctx.store.scan(paths.col(uid, paths.MEMORY_ITEMS), limit=1, keys_only=True)
    targets = [(m, "repair") for m in sorted(memory_ids) if m] if owned else [("", "purge_user")]
    batch: list[Write] = []
    now = ctx.now()
    for memory_id, action in targets:
        event_id = ids.outbox_event_id("doctor", memory_id, action)
        batch.append(Write("set", paths.outbox_event(uid, event_id), {
            "event_id": event_id, "uid": uid, "memory_id": memory_id or None, "action": action,
            "revision": None, "content_hash": None, "reason": "doctor", "commit_id": None, "sequence": None,
            "state": "pending", "attempts": 0, "due_at": now, "lease_expires_at": None, "lease_epoch": 0,
            "created_at": now, "last_error": None}))
        if len(batch) == FENCED_BATCH:
            _fenced(ctx, uid, batch)
            batch = []
    if batch:
        _fenced(ctx, uid, batch)
    report.repairs += len(targets)
    ctx.outbox.nudge(uid)


def _fenced(ctx: Ports, uid: str, writes: list[Write]) -> None:
    ctx.store.write(Change("doctor.repair_events", writes, fenced=uid))


__all__ = ["PROVIDERS", "DoctorReport", "Drift", "check_user", "ownerless", "repair", "run", "users"]

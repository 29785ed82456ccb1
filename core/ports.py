"""The small abstract ports between Strata's services and the outside world.

Services depend only on these, through :class:`Ports` (what a service may use); :mod:`core.bootstrap`,
the composition root imported only by the entry points, wires real adapters (or fakes in unit tests).
Adapters raise :class:`core.errors.RetryableError` subclasses for transient provider failures and
:class:`core.errors.PermanentError` for refusals, never raw SDK exceptions.
"""

from __future__ import annotations

import logging
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from core.config import Settings
from core.domain import fence, outbox, paths
from core.domain.changes import Change, Written
from core.domain.extraction import ExtractionResult, ExtractionSource
from core.domain.fence import AccountFence
from core.domain.plan import ApplyResult, ItemQuery, Planner
from core.domain.plan import Write as Write
from core.domain.projection import ProjectionDoc as ProjectionDoc
from core.domain.unit_of_work import Chain, Mutation, Step, TransactionReads, UnitOfWork

if TYPE_CHECKING:
    from core.domain.records import Sensitivity
    from core.domain.routing import RouteCandidate, RouteProposal
    from core.domain.slots import Slot

log = logging.getLogger(__name__)
T = TypeVar("T")
SWAP_ATTEMPTS = 20  # a swap's reads and conditional writes before it answers its ``exhausted``


# --------------------------------------------------------------------------- projections
@dataclass(frozen=True)
class ProviderRecord:
    """One stored row as a provider holds it (what the doctor compares with canonical state)."""

    provider_id: str
    uid: str
    memory_id: str
    revision: int | None
    content: str | None = None  # None where the provider keeps no text (the vector index)


@dataclass(frozen=True)
class Hit:
    """A provider candidate; services hydrate it from Firestore before returning it."""

    memory_id: str
    score: float
    provider_id: str = ""


class KeywordIndex(ABC):
    """Typesense (or compatible) keyword index over ProjectionDocs."""

    @abstractmethod
    def ensure_ready(self) -> None: ...

    @abstractmethod
    def upsert(self, docs: Sequence[ProjectionDoc]) -> None:
        """Replace each doc's row; rows matching (uid, memory_id) are deleted first."""

    @abstractmethod
    def delete(self, uid: str, memory_ids: Sequence[str]) -> None:
        """Delete every row of these memories (by (uid, memory_id) metadata, any id form)."""

    @abstractmethod
    def purge_user(self, uid: str) -> None: ...

    @abstractmethod
    def search(self, uid: str, query: str, *, layers: Sequence[str], limit: int,
               devices: Sequence[str] | None = None) -> list[Hit]:
        """Candidates for ``query`` among the user's rows of ``layers`` (and, with ``devices``, of
        rows captured on one of them)."""

    @abstractmethod
    def provider_ids(self, uid: str) -> set[str]:
        """Every stored id for the user (trace checks, convergence tests)."""

    @abstractmethod
    def records(self, uid: str | None) -> Iterator[list[ProviderRecord]]:
        """The user's rows (every row when ``uid`` is None), streamed in bounded pages."""


class VectorIndex(ABC):
    """Pinecone (or the local compatible endpoint) over ProjectionDocs with vectors."""

    @abstractmethod
    def ensure_ready(self) -> None: ...

    @abstractmethod
    def upsert(self, docs: Sequence[ProjectionDoc], vectors: Sequence[Sequence[float]]) -> None: ...

    @abstractmethod
    def delete(self, uid: str, memory_ids: Sequence[str]) -> None: ...

    @abstractmethod
    def purge_user(self, uid: str) -> None: ...

    def purge_account(self, uid: str) -> None:
        """The account wipe's purge: :meth:`purge_user`, plus whatever an index keeps of the user
        beside this deployment's projection (a rebuild's purge leaves that alone)."""
        self.purge_user(uid)

    @abstractmethod
    def search(self, uid: str, vector: Sequence[float], *, layers: Sequence[str], limit: int,
               devices: Sequence[str] | None = None) -> list[Hit]:
        """Nearest rows of the user's ``layers`` (and, with ``devices``, captured on one of them)."""

    @abstractmethod
    def provider_ids(self, uid: str) -> set[str]: ...

    @abstractmethod
    def records(self, uid: str | None) -> Iterator[list[ProviderRecord]]:
        """The user's rows (every row carrying a uid when ``uid`` is None), in bounded pages."""


class Embedder(ABC):
    """Text → vectors. ``dim`` must equal the vector index dimension."""

    dim: int
    name: str

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


# --------------------------------------------------------------------------- models
class Extractor(Protocol):
    """The extractor port: a pure function of the source, identified for evidence provenance
    (the rules in ``core.adapters.rules.extractor``, a model in ``core.adapters.llm``)."""

    extractor_id: str
    extractor_version: str

    def extract(self, source: ExtractionSource) -> ExtractionResult: ...


class Router(Protocol):
    """The router port: a proposal per pending item, which the server validates and judges
    (the rules in ``core.adapters.rules.router``, a model in ``core.adapters.llm``)."""

    router_id: str
    router_version: str

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]: ...


# --------------------------------------------------------------------------- messaging
class Publisher(ABC):
    @abstractmethod
    def publish(self, topic: str, data: dict[str, Any]) -> None:
        """Best-effort nudge; a lost message is recovered by the scheduled sweep."""


class TaskQueue(ABC):
    @abstractmethod
    def enqueue(self, url: str, payload: dict[str, Any], *, task_id: str | None = None,
                queue: str | None = None, schedule_at: datetime | None = None) -> None:
        """Create an HTTP task calling ``url`` with ``payload`` on ``queue`` (default: the
        consolidation queue), run at ``schedule_at`` (default: now); a ``task_id`` already used is
        a no-op."""


class WebhookSender(ABC):
    """Outbound developer-webhook HTTP. The service checks every resolved address before posting,
    and the sender connects to that checked address only (no second lookup, no redirects)."""

    @abstractmethod
    def resolve(self, host: str, port: int) -> list[str]:
        """The host's addresses (an IP literal resolves to itself); [] when it does not resolve."""

    @abstractmethod
    def post(self, url: str, address: str, body: bytes, *, timeout_s: float) -> int:
        """POST ``body`` (JSON) to ``url``, connecting to ``address``; the answer's status code.
        Raises :class:`core.errors.RetryableError` on a timeout or a connection failure."""


class Clock(ABC):
    @abstractmethod
    def now(self) -> datetime: ...


# --------------------------------------------------------------------------- canonical store
class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()  # the version of a document a read found missing (:meth:`StoredDoc.absent`)


@dataclass(frozen=True)
class StoredDoc:
    """One document a store read returned: its slash path, its data and an opaque version (what
    :meth:`Store.swap` compares)."""

    path: str
    data: dict[str, Any]
    version: Any = None

    @classmethod
    def absent(cls, path: str) -> StoredDoc:
        """``path`` as a versioned read found it: missing (a :meth:`Store.swap` decided on it
        writes only by creating the document)."""
        return cls(path, {}, ABSENT)

    @property
    def id(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def owner(self) -> str:
        """The uid of a document under ``users/{uid}/`` ('' elsewhere)."""
        return paths.owner(self.path) or ""


Cursor = StoredDoc | Mapping[str, Any]


class Store(ABC):
    """The canonical document store the services read and write (Firestore in production).

    Documents are named by slash paths (:mod:`core.domain.paths`). Every canonical memory change
    goes through :meth:`apply`, which runs the one apply algorithm
    (:class:`core.domain.unit_of_work.UnitOfWork`: replay, fences, planner, stamping, validators,
    outbox, commit, head, journal) on this store's :meth:`_transact`, the only apply mechanics an
    implementation provides. Every other document changes through one named
    :class:`core.domain.changes.Change` (:meth:`write`) or a compare-and-swap on one document
    (:meth:`swap`); the drain's events go through :class:`Outbox`. Queries are named
    (:data:`core.domain.queries.QUERIES`); nothing builds an ad-hoc filter.
    """

    # ------------------------------------------------------------------ reads
    @abstractmethod
    def get(self, path: str) -> dict[str, Any] | None:
        """The document's data, None when it does not exist."""

    @abstractmethod
    def get_all(self, paths: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        """Every path's data (None when absent), in one round trip."""

    @abstractmethod
    def query(self, name: str, params: Mapping[str, Any], *, parent: str = "", limit: int | None = None,
              start_after: Cursor | None = None, keys_only: bool = False) -> list[StoredDoc]:
        """Run named query ``name`` over the collection it names under ``parent`` (a document path;
        '' for the root; ignored by collection-group queries). ``start_after`` is the last document
        of the previous page, or the ordered fields' values (``__name__``: a document id, or the
        full path in a collection-group query). ``keys_only`` returns documents without data."""

    @abstractmethod
    def scan(self, collection: str, *, limit: int, after: str | None = None,
             keys_only: bool = False) -> list[StoredDoc]:
        """One page of a collection (a slash path) in document-id order, after id ``after``."""

    @abstractmethod
    def children(self, path: str) -> Iterator[str]:
        """The ids one level below ``path``: a collection's document ids (those that exist only as
        parents of subcollections included), or a document's subcollection ids that hold a document
        (one round trip)."""

    # ------------------------------------------------------------------ writes
    @abstractmethod
    def write(self, change: Change) -> Written:
        """Commit ``change``: a plain batch when it is neither fenced nor guarded; else one
        transaction that reads the account fence (``fenced``: :func:`core.domain.fence.admit`
        raises :class:`core.errors.GenerationChanged` / :class:`core.errors.WritesBlocked`) and the
        guard (``refuse`` true: Written(False)) before writing. A ``create`` of an existing document
        refuses the batch (Written(False), nothing written); an ``update`` of a missing document
        raises :class:`core.errors.NotFound`, nothing written; a ``purge`` deletes the document or
        collection and everything below it. An :class:`core.domain.changes.Increment` value is
        added on the store's side and its new value is in :attr:`Written.counts`."""

    @abstractmethod
    def swap(self, path: str, decide: Callable[[dict[str, Any] | None], tuple[T, dict[str, Any] | None]], *,
             seen: StoredDoc | None = None, exhausted: T) -> T:
        """Compare-and-swap on one document: ``decide(its data or None)`` answers (value, fields to
        merge or None for no write); the write is conditional on the document being exactly as read
        (its version, or its absence: a create), and a lost race reads and decides again (up to
        :data:`SWAP_ATTEMPTS` times, then ``exhausted``). ``seen``: the document as the caller
        already read it with its version (:meth:`get_all_versioned`; :meth:`StoredDoc.absent` when
        that read found none), decided on instead of a first read; ``seen=None``, or a ``seen``
        without a version, reads. Returns the value."""

    # ------------------------------------------------------------------ the account fence
    def read_fence(self, uid: str) -> AccountFence:
        """The account's fence: its wipe record (generation, a wipe in progress), in one read."""
        return fence.of(self.get(paths.account_deletion(uid)))

    def get_all_versioned(self, paths: Sequence[str]) -> dict[str, StoredDoc | None]:
        """:meth:`get_all` with each document's version, in one round trip (the default knows no
        versions, so a conditional write never applies to what it returns)."""
        return {p: None if d is None else StoredDoc(p, d) for p, d in self.get_all(paths).items()}

    # ------------------------------------------------------------------ the apply transaction
    clock: Callable[[], datetime]  # the time an apply stamps when its caller gives none
    publisher: Publisher | None = None  # where an apply that wrote outbox events nudges the drain
    topic: str = ""  # the projection topic

    @abstractmethod
    def _transact(self, uid: str, body: Callable[[TransactionReads], tuple[T, Sequence[Write]]], *,
                  what: str = "apply") -> T:
        """Run ``body`` in one transaction over ``uid``'s documents and return its value: what it
        reads through :class:`core.domain.unit_of_work.TransactionReads` is read in the
        transaction, and the writes it returns commit with those reads, all or nothing (nothing when
        it raises). ``body`` may run more than once (contention); a transaction the store gave up on
        raises :class:`core.errors.RetryableError` (naming ``what``)."""

    def apply(self, uid: str, kind: str, key: Any, planner: Planner, *, item_ids: Iterable[str] = (),
              doc_paths: Iterable[str] = (), actor: str = "system", bypass_account_fence: bool = False,
              now: datetime | None = None, item_queries: Mapping[str, ItemQuery] | None = None,
              follow_lineage: bool = False) -> ApplyResult:
        """Run ``planner`` in one transaction and commit what it returns: the
        :class:`core.domain.unit_of_work.UnitOfWork` of operation (``kind``, ``key``), on
        :meth:`_transact`. ``item_queries`` (label → (query name, params[, page])) run inside the
        transaction, so the cohort a planner sees cannot change under it; with ``follow_lineage``
        the items those reference are read too; other documents are read only when named in
        ``doc_paths``."""
        mutation = Mutation.of(uid, kind, key, item_ids=item_ids, doc_paths=doc_paths, actor=actor,
                               bypass_account_fence=bypass_account_fence, now=now, item_queries=item_queries,
                               follow_lineage=follow_lineage)
        result = self._transact(uid, UnitOfWork(mutation, planner, clock=self.clock).run, what=kind)
        if not result.replayed and result.commit_id is not None:
            self._committed(uid, result)
        return result

    def apply_steps(self, uid: str, steps: Sequence[Step], *,
                    read_back: Sequence[str] = ()) -> tuple[list[ApplyResult | None], dict[str, dict[str, Any] | None]]:
        """Several applies (:meth:`core.domain.unit_of_work.Step.of`) in one transaction
        (:class:`core.domain.unit_of_work.Chain`): each its own ledger commit, all committed
        together. The result of each step (None: its ``when`` said no)
        and the ``read_back`` documents as the last step left them."""
        results, docs = self._transact(uid, Chain(steps, read_back=read_back).run,
                                       what=steps[0].work.mutation.kind)
        for result in results:
            if result is not None and not result.replayed and result.commit_id is not None:
                self._committed(uid, result)
        return results, docs

    def _committed(self, uid: str, result: ApplyResult) -> None:
        """After an apply committed: the projection nudge when it wrote outbox events, published by
        the store that committed them. A lost nudge is recovered by the scheduled sweep, so a
        failing one is logged, never raised."""
        if result.outbox_events and self.publisher is not None:
            try:
                self.publisher.publish(self.topic, outbox.nudge(uid, result.sequence or 0))
            except Exception:
                log.warning("projection nudge for %s failed; the sweep will pick it up", uid, exc_info=True)

    def head_sequence(self, uid: str) -> int:
        """The user's current ledger sequence (0 before the first commit)."""
        return int((self.get(paths.control(uid)) or {}).get("sequence", 0))


# --------------------------------------------------------------------------- the outbox
class Outbox(ABC):
    """Each user's outbox (``users/{uid}/memory_outbox``) and drain lease, as the drain uses them:
    open a drain (the account's generation read, the drain lease taken), lease batches of due
    events and conclude each (acknowledge it with the writes that carry its effect, or record its
    failure, or requeue it), then close the drain. Who may write what (the lease and its dirty note,
    epochs, backoff, dead letters) is :mod:`core.domain.outbox`'s rules; an implementation gives the
    reads and the guarded commit (Firestore on its transactions, the fake on its lock).
    """

    store: Store  # the database the outbox lives in
    publisher: Publisher | None = None  # where a drain is nudged
    topic: str = ""  # the projection topic

    def open(self, uid: str) -> outbox.Drain:
        """Open a drain of ``uid`` when an event is due: read the account's generation, then take the
        drain lease. A lease another drain holds is not taken (``drain_in_progress``); that drain
        finds a note to go round once more. The generation is read first and again once the lease
        is held: a wipe completing in between would leave the lease in the wiped account, so the
        lease is dropped again (``account_generation_changed``), and a drain that outlives a wipe it
        did not see may only delete from the providers."""
        account = self.store.read_fence(uid)
        drain = outbox.Drain(uid, account.generation)
        if not self.due(uid, self.store.clock(), limit=1).entries:
            return drain  # nothing to do: no lease document is written (a wiped account stays empty)
        holder = uuid.uuid4().hex
        if not self.store.swap(outbox.drain_lease(uid),
                               lambda d: outbox.take(d, holder, self.store.clock(), outbox.DRAIN_LEASE, mark_dirty=True),
                               exhausted=False):
            return replace(drain, skipped="drain_in_progress")
        if self.store.read_fence(uid).generation != account.generation:
            self.commit(outbox.dropping(uid, holder))
            return replace(drain, skipped="account_generation_changed")
        return replace(drain, holder=holder)

    def close(self, drain: outbox.Drain, *, honour_dirty: bool = True) -> bool:
        """Let ``drain``'s lease go; True (kept, renewed, the note cleared) when ``honour_dirty`` and
        a note asks for one more round."""
        holder = drain.holder
        if holder is None:
            return False  # not opened: nothing to let go
        return self.store.swap(outbox.drain_lease(drain.uid),
                               lambda d: outbox.release(d, holder, self.store.clock(), outbox.DRAIN_LEASE,
                                                        honour_dirty=honour_dirty),
                               exhausted=honour_dirty)

    @abstractmethod
    def due(self, uid: str, now: datetime, *, holder: str | None = None, limit: int = outbox.SCAN) -> outbox.Due:
        """The user's due events (pending or leased, due by ``now``) and, with ``holder``, the drain
        lease with its version, read at once."""

    @abstractmethod
    def commit(self, commit: outbox.Commit) -> tuple[bool, dict[str, Any] | None]:
        """Write ``commit`` while its guards hold: (written, the new versions by path when it was
        the one-write form, else None)."""

    def lease(self, drain: outbox.Drain, due: outbox.Due, now: datetime) -> outbox.Batch:
        """Lease a batch of ``due`` for ``drain`` (:func:`core.domain.outbox.leasing`); empty when
        nothing was due, or when the drain lease moved on (``lost``) or the leasing commit was refused."""
        batch, commit = outbox.leasing(drain.uid, drain.holder, due, now)
        if not batch.entries:
            return batch
        written, versions = self.commit(commit)
        if not written:
            lease = self.store.get(outbox.drain_lease(drain.uid)) if drain.holder is not None else None
            return outbox.lease_refused(batch, lease)
        return replace(batch, versions=versions)

    def conclude(self, batch: outbox.Batch, outcome: outbox.Outcome, generation: int, now: datetime) -> dict[str, int]:
        """Close ``batch`` as :func:`core.domain.outbox.closing` decides. After a failure: each event
        still at the batch's epoch backs off or is dead, all in one commit, or one by one when one
        was taken over meanwhile (counts ``retried``, ``dead``). Else the handlers' writes commit
        and the events go (``acknowledged``); when a guard refuses that (the drain lease, or an
        event's epoch, moved on: ``requeued``), each event still at its epoch is back to pending, a
        ``repair`` event is written for each memory whose event another drain took, while the
        account is still at ``generation``, and a drain is nudged to project the current state."""
        closing = outbox.closing(batch, outcome, generation, now)
        if closing.together is not None:
            done = (list(closing.failed) if self.commit(closing.together)[0]
                    else [path for path, (_, commit) in closing.failed.items() if self.commit(commit)[0]])
            return dict(Counter(closing.failed[path][0] for path in done))
        if all(self.commit(commit)[0] for commit in closing.acknowledgement):
            return {"acknowledged": len(batch.entries)}
        orphaned = {memory_id for memory_id, commit in closing.requeues if not self.commit(commit)[0] and memory_id}
        repairs = [write for memory_id, write in closing.repairs.items() if memory_id in orphaned]
        if repairs and not self.commit(outbox.Commit(closing.account, repairs))[0]:
            log.info("repair events for %s dropped: the account is being deleted", batch.uid)
        else:
            self.publish(closing.nudge)
        return {"requeued": len(batch.entries)}

    def nudge(self, uid: str) -> None:
        """Ask for a drain of ``uid`` once its outbox was written outside an apply (an apply's store
        publishes its own); a lost nudge is the scheduled sweep's."""
        self.publish(outbox.nudge(uid))

    def publish(self, message: dict[str, Any]) -> None:
        """Publish a drain's ``message`` on the projection topic, best effort."""
        try:
            if self.publisher is not None:
                self.publisher.publish(self.topic, message)
        except Exception:  # noqa: BLE001 - the sweep recovers it
            log.warning("projection nudge for %s failed; the sweep will pick it up", message.get("uid"), exc_info=True)


# --------------------------------------------------------------------------- what a service may use
class Ports(Protocol):
    """What a service may use, and all it may use: the settings, the time, the canonical store and
    the other ports. No SDK client, no path builder: a service names documents by slash path and
    reads the account fence through :meth:`Store.read_fence`. :class:`core.bootstrap.Context`
    implements it for the entry points; unit tests hand services one wired to in-memory fakes."""

    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> Store: ...

    @property
    def clock(self) -> Clock: ...

    def now(self) -> datetime: ...

    @property
    def keyword_index(self) -> KeywordIndex: ...

    @property
    def vector_index(self) -> VectorIndex: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def extractor(self) -> Extractor: ...

    @property
    def router(self) -> Router: ...

    @property
    def fallback_extractor(self) -> Extractor:
        """The offline extractor a capture falls back to when the model gives up (the rules)."""
        ...

    def read_slot(self, text: str) -> Slot | None:
        """The declared attribute the owner's own typed words state (an explicit memory, an edit),
        as the rules read it; None when they state none."""
        ...

    def keyword_terms(self, query: str) -> str:
        """A question's content words, what a keyword index matches (the query when it has none)."""
        ...

    def owner_voice(self, query: str, name: str | None) -> str:
        """The question with the owner's display name ``name`` put in the first person."""
        ...

    @property
    def sensitivity(self) -> Sensitivity:
        """The secret detector every planner that labels or stores text is handed."""
        ...

    @property
    def content_words(self) -> Callable[[str], frozenset[str]]:
        """The words :attr:`similarity` compares (stop words out)."""
        ...

    @property
    def similarity(self) -> Callable[[str, str], float]:
        """How alike two statements read, from 0 to 1.0 (the same statement)."""
        ...

    @property
    def publisher(self) -> Publisher: ...

    @property
    def tasks(self) -> TaskQueue: ...

    @property
    def webhook_sender(self) -> WebhookSender: ...

    @property
    def outbox(self) -> Outbox: ...

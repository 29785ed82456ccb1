"""Typed documents: what the services read and write besides memory items, one frozen dataclass per
stored shape (docs/data-model.md, *Firestore layout*), each with its own mapping to and from the
store, as :class:`core.domain.records.MemoryItem` has.

The mapping keeps the stored bytes: ``from_store(data).to_store() == data`` for every stored
document. A field the type does not name is kept in ``extra`` and written back as it was; a named
field that was absent stays absent (its value reads as the field's default) and one stored as null
is written as null again (``nulls``). A new document built in code writes every named field that is
set, null ones only where the type says the shape always carries them (``_ALWAYS``): a field that a
shape may lack defaults to None.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from core.domain import ids

D = TypeVar("D", bound="Document")

_BOOK = frozenset({"extra", "nulls", "absent"})


@dataclass(frozen=True)
class Document:
    """The mapping every typed document shares; subclasses declare their fields."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset()  # written even when None
    _LISTS: ClassVar[frozenset[str]] = frozenset()  # stored as arrays, read as tuples
    _MAPS: ClassVar[Mapping[str, type[Document]]] = {}  # stored as maps (or arrays of them), read as that type

    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True, repr=False, compare=False)
    nulls: frozenset[str] = field(default=frozenset(), kw_only=True, repr=False, compare=False)
    absent: frozenset[str] = field(default=frozenset(), kw_only=True, repr=False, compare=False)

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return _fields(cls)[0]

    @classmethod
    def from_store(cls: type[D], data: Mapping[str, Any] | None) -> D:
        """The document as stored (None: an empty one, every field at its default)."""
        data = data or {}
        names = cls._names()
        values = {name: cls._decode(name, data[name]) for name in names if data.get(name) is not None}
        return cls(**values, extra={k: v for k, v in data.items() if k not in _fields(cls)[1]},
                   nulls=frozenset(n for n in names if n in data and data[n] is None),
                   absent=frozenset(n for n in names if n not in data))

    @classmethod
    def _decode(cls, name: str, value: Any) -> Any:
        kind = cls._MAPS.get(name)
        if name in cls._LISTS:
            return tuple(kind.from_store(v) for v in value) if kind is not None else tuple(value)
        return kind.from_store(value) if kind is not None and isinstance(value, Mapping) else value

    @staticmethod
    def _encode(value: Any) -> Any:
        if isinstance(value, tuple):
            return [Document._encode(v) for v in value]
        return value.to_store() if isinstance(value, Document) else value

    def to_store(self) -> dict[str, Any]:
        """The stored document: named fields (as read, or all of a new one) plus ``extra``."""
        out: dict[str, Any] = {}
        for name in self._names():
            value = getattr(self, name)
            if name in self.nulls and (value is None or value == self._default(name)):
                out[name] = None  # stored as null, still unset (a default that is not None reads in its place)
            elif value is None:
                if name in self._ALWAYS and name not in self.absent:
                    out[name] = None
            elif name not in self.absent or value != self._default(name):
                out[name] = self._encode(value)
        out.update(self.extra)
        return out

    @classmethod
    def _default(cls, name: str) -> Any:
        spec = cls.__dataclass_fields__[name]
        if spec.default is not dataclasses.MISSING:
            return spec.default
        if spec.default_factory is not dataclasses.MISSING:
            return spec.default_factory()
        return dataclasses.MISSING

    def but(self: D, **changes: Any) -> D:
        """A copy with ``changes``; a changed field is written even if it was absent."""
        return dataclasses.replace(self, **changes, absent=self.absent - set(changes),
                                   nulls=self.nulls - {k for k, v in changes.items() if v is not None})


_FIELDS: dict[type, tuple[tuple[str, ...], frozenset[str]]] = {}


def _fields(cls: type) -> tuple[tuple[str, ...], frozenset[str]]:
    """A document type's stored fields in order, and as a set (read once per type: every mapping
    walks them)."""
    if cls not in _FIELDS:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _BOOK)
        _FIELDS[cls] = names, frozenset(names)
    return _FIELDS[cls]


# ---------------------------------------------------------------------------------- apply control
@dataclass(frozen=True)
class ApplyControl(Document):
    """``users/{uid}/memory_state/apply_control``: the ledger head the apply moves."""

    sequence: int = 0
    head_commit_id: str | None = None
    updated_at: datetime | None = None
    account_generation: int = 0
    writes_blocked: bool = False


# ---------------------------------------------------------------------- ledger commit, journal entry
@dataclass(frozen=True)
class LedgerChange(Document):
    """One entry of :attr:`LedgerCommit.changes`: a memory item the commit wrote, as written."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset(
        {"memory_id", "revision", "layer", "status", "processing_state", "content_hash", "action"})

    memory_id: str | None = None
    revision: int | None = None
    layer: str | None = None
    status: str | None = None
    processing_state: str | None = None
    content_hash: str | None = None
    action: str | None = None  # create | update


@dataclass(frozen=True)
class LedgerCommit(Document):
    """``users/{uid}/memory_commits/{commit_id}``: one applied change, written by the apply with the
    new head (:mod:`core.domain.unit_of_work`); ``credential`` only for a commit an API request made."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset(
        {"commit_id", "sequence", "parent_commit_id", "operation_id", "kind", "actor", "changes", "doc_writes",
         "created_at", "memory_ids"})

    commit_id: str | None = None
    sequence: int | None = None
    parent_commit_id: str | None = None  # null for the account's first commit
    operation_id: str | None = None
    kind: str | None = None
    actor: str | None = None
    changes: tuple[LedgerChange, ...] = ()
    doc_writes: tuple[str, ...] = ()
    created_at: datetime | None = None
    memory_ids: tuple[str, ...] = ()
    credential: Mapping[str, Any] | None = None

    _LISTS: ClassVar[frozenset[str]] = frozenset({"changes", "doc_writes", "memory_ids"})
    _MAPS: ClassVar[Mapping[str, type[Document]]] = {"changes": LedgerChange}

    def change_of(self, memory_id: str) -> LedgerChange:
        """The commit's change of ``memory_id`` (an empty one when it wrote no such item)."""
        return next((c for c in self.changes if c.memory_id == memory_id), LedgerChange())


@dataclass(frozen=True)
class OperationJournal(Document):
    """``users/{uid}/memory_operations/{operation_id}``: what an operation did, so its replay answers
    the same and writes nothing. A commit's entry has ``outbox_events``; a no-op's has null
    ``commit_id`` and ``sequence`` and ``noop: true``."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset(
        {"operation_id", "kind", "commit_id", "sequence", "changed_ids", "summary", "created_at"})

    operation_id: str | None = None
    kind: str | None = None
    commit_id: str | None = None
    sequence: int | None = None
    changed_ids: tuple[str, ...] = ()
    summary: Mapping[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    outbox_events: int | None = None
    noop: bool | None = None

    _LISTS: ClassVar[frozenset[str]] = frozenset({"changed_ids"})


@dataclass(frozen=True)
class IncidentSwitches(Document):
    """``memory_controls/global``: the operator's incident switches (:mod:`core.services.controls`);
    one that is absent or null is off."""

    writes_disabled: bool | None = None
    consolidation_disabled: bool | None = None
    projection_disabled: bool | None = None


# ------------------------------------------------------------------------------------ outbox event
@dataclass(frozen=True)
class OutboxEvent(Document):
    """``users/{uid}/memory_outbox/{event_id}``: one piece of projection work."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset({"revision", "content_hash", "lease_expires_at", "last_error"})

    event_id: str = ""
    uid: str = ""
    memory_id: str = ""
    action: str = ""  # upsert | delete | purge_user | schedule_consolidation
    revision: int | None = None
    content_hash: str | None = None
    reason: str = ""
    commit_id: str = ""
    sequence: int = 0
    state: str = "pending"  # pending | leased | dead
    attempts: int = 0
    due_at: datetime | None = None
    lease_expires_at: datetime | None = None
    lease_epoch: int = 0
    created_at: datetime | None = None
    last_error: str | None = None
    confirmed_providers: tuple[str, ...] | None = None  # after a failed attempt: who did confirm it
    dead_at: datetime | None = None
    provider: str | None = None  # a purge_user event of a rebuild: the one provider it purges

    def lease_live(self, now: datetime) -> bool:
        """Leased by a drain whose lease on it has not expired."""
        return self.lease_expires_at is not None and self.lease_expires_at > now

    @property
    def ledger_sequence(self) -> int | None:
        """The ledger sequence of the commit that wrote the event; None for one no commit wrote (a
        rebuild's or a repair's, stored with a null ``sequence``)."""
        return None if "sequence" in self.nulls | self.absent else self.sequence

    _LISTS: ClassVar[frozenset[str]] = frozenset({"confirmed_providers"})


# ------------------------------------------------------------------------------------------- lease
@dataclass(frozen=True)
class Lease(Document):
    """``users/{uid}/memory_state/{projection,consolidation}_lease``: who works for a user, until when,
    and whether more work arrived meanwhile (``dirty``)."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset({"holder", "expires_at"})

    holder: str | None = None
    expires_at: datetime | None = None
    dirty: bool = False

    def held(self, now: datetime) -> bool:
        return bool(self.holder) and self.expires_at is not None and self.expires_at > now


# ----------------------------------------------------------------------------- capture and cascade
@dataclass(frozen=True)
class CascadeProgress(Document):
    """``capture_runs/{conversation_id}.cascade``: a conversation delete's progress."""

    state: str = ""  # running | done
    intent: str = ""
    pages: int = 0
    summary: Mapping[str, int] = field(default_factory=dict)

    @property
    def started(self) -> bool:
        return self.state in ("running", "done")

    def total(self, name: str) -> int:
        return int(self.summary.get(name, 0))


@dataclass(frozen=True)
class ModelAttempts(Document):
    """``capture_runs/{conversation_id}.attempts``: the model calls reserved for one revision (count),
    the first and the last one, and the last one's error. A record built in code writes all six
    fields, unset ones as null."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset({"revision", "last_error", "last_error_at", "first_at", "last_at"})

    revision: str | None = None
    count: int = 0
    last_error: str | None = None
    last_error_at: datetime | None = None
    first_at: datetime | None = None
    last_at: datetime | None = None


@dataclass(frozen=True)
class FellBack(Document):
    """``capture_runs/{conversation_id}.fell_back``: the model's turn ended (``reason``, its error
    code, after ``attempts`` calls) and the rule extractor captured the revision ``at``."""

    reason: str | None = None
    attempts: int = 0
    at: datetime | None = None


@dataclass(frozen=True)
class CaptureRun(Document):
    """``users/{uid}/capture_runs/{conversation_id}``: the capture marker (the revision captured,
    each job's state, errors, the capture count, the model's attempts) and, once a delete of the
    conversation began, its progress (``cascade``; ``False`` after a delete without cascade)."""

    revision: str | None = None
    jobs: Mapping[str, Any] | None = None
    updated_at: datetime | None = None
    errors: Mapping[str, Any] | None = None
    captures: int | None = None
    extractor: Mapping[str, Any] | None = None
    attempts: ModelAttempts | None = None
    fell_back: FellBack | None = None
    cascade: CascadeProgress | bool | None = None

    _MAPS: ClassVar[Mapping[str, type[Document]]] = {"attempts": ModelAttempts, "fell_back": FellBack,
                                                  "cascade": CascadeProgress}

    @property
    def progress(self) -> CascadeProgress:
        """The delete's progress (an empty one when no cascade ran)."""
        return self.cascade if isinstance(self.cascade, CascadeProgress) else CascadeProgress()

    @property
    def deleting(self) -> bool:
        """A delete of the conversation began: no capture may write."""
        return self.progress.started

    @property
    def cascade_declined(self) -> bool:
        """The conversation was deleted without its memories (``cascade: false``)."""
        return self.cascade is False

    @property
    def applied(self) -> bool:
        """Something beyond the model's attempt counter was written (a capture committed)."""
        return bool(set(self.to_store()) - {"attempts"})

    @property
    def capture_count(self) -> int:
        return int(self.captures or 0)

    def jobs_done(self, revision: str) -> dict[str, Any]:
        """The jobs recorded for ``revision`` (none when the marker is of another revision)."""
        return dict(self.jobs or {}) if self.revision == revision else {}


JOBS = ("memories", "action_items", "goals")  # a capture's jobs, each remembered in CaptureRun.jobs


def conversation_revision(doc: Mapping[str, Any]) -> str:
    """The revision of a conversation document a capture records (``CaptureRun.revision``): what
    extraction depends on; unrelated edits (title, overview, app results) leave it unchanged."""
    segments = [{"id": s.get("id"), "text": s.get("text"), "is_user": bool(s.get("is_user")),
                 "speaker": s.get("speaker")} for s in doc.get("transcript_segments") or [] if isinstance(s, dict)]
    external = doc.get("external_data") or {}
    return ids.contract_hash("conversation.revision", {
        "segments": segments, "external": external.get("text") if isinstance(external, dict) else None,
        "reprocess_token": doc.get("reprocess_token"),
    })[:32]


def attempts_of(run: CaptureRun | Mapping[str, Any] | None, revision: str) -> ModelAttempts:
    """The marker's model-attempt record for ``revision`` (a fresh one for any other revision),
    as a record built in code: its six fields only, each written (unset ones as null)."""
    stored = (run if isinstance(run, CaptureRun) else CaptureRun.from_store(run)).attempts
    if isinstance(stored, ModelAttempts) and stored.revision == revision:
        return ModelAttempts(revision=revision, count=int(stored.count or 0), last_error=stored.last_error,
                             last_error_at=stored.last_error_at, first_at=stored.first_at, last_at=stored.last_at)
    return ModelAttempts(revision=revision)


# ----------------------------------------------------------------------------------- workflow rows
@dataclass(frozen=True)
class WorkflowRow(Document):
    """``users/{uid}/{action_items,goals}/{id}``: what a capture writes of an action item or a goal
    (the id derives from the description; ``quote`` and ``due`` are written even when null)."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset({"quote", "due"})

    id: str = ""
    conversation_id: str = ""
    description: str = ""
    quote: str | None = None
    due: str | None = None
    created_at: datetime | None = None
    source: str = "conversation"
    revision: str | None = None


@dataclass(frozen=True)
class ActionItem(WorkflowRow):
    """``users/{uid}/action_items/{id}``."""

    completed: bool = False


@dataclass(frozen=True)
class Goal(WorkflowRow):
    """``users/{uid}/goals/{id}``: its title is its description."""

    status: str = "active"
    title: str = ""


# -------------------------------------------------------------------------------------- review row
@dataclass(frozen=True)
class ReviewRow(Document):
    """``users/{uid}/memory_review_queue/{review_id}``: a memory consolidation sent to the user."""

    review_id: str | None = None
    memory_id: str | None = None
    revision: int | None = None
    commit_id: str | None = None
    content_hash: str | None = None
    content: str | None = None
    conflicting: tuple[str, ...] | None = None
    would_end: tuple[str, ...] | None = None
    reason: str | None = None
    status: str | None = None  # open | resolved | expired | redacted | superseded
    created_at: datetime | None = None
    expires_at: datetime | None = None
    decision: str | None = None
    resolved_at: datetime | None = None
    expired_at: datetime | None = None
    redacted_at: datetime | None = None
    superseded_by: str | None = None
    closed_at: datetime | None = None

    _LISTS: ClassVar[frozenset[str]] = frozenset({"conflicting", "would_end"})

    def past_deadline(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def closed(self, status: str, stamp: str, now: datetime, **more: Any) -> ReviewRow:
        """The row closed as ``status`` at ``now`` (recorded as ``stamp``): it keeps no text."""
        return self.but(content="", conflicting=(), would_end=None, status=status, **{stamp: now}, **more)


# --------------------------------------------------------------------------------- knowledge graph
@dataclass(frozen=True)
class GraphAssertion(Document):
    """``users/{uid}/memory_graph_assertions/{memory_id}``: the graph statement (subject, predicate,
    object) of an admitted Long-term fact, bound to its revision; written by the apply with the
    admission (:func:`core.domain.admission.admit`), read by the graph projection."""

    assertion_id: str | None = None  # matched against the item's graph_assertion_id, which may be None
    memory_id: str = ""
    uid: str = ""
    revision: int | None = None
    content_hash: str = ""
    plan_hash: str = ""
    status: str = ""  # active
    subject: str = ""  # "user", or the third party the fact is about
    subject_entity_id: str = ""
    predicate: str = ""
    object: str = ""
    object_entity_id: str = ""
    edge_id: str = ""
    source_commit_id: str = ""
    created_at: datetime | None = None


@dataclass(frozen=True)
class KnowledgeNode(Document):
    """``users/{uid}/knowledge_nodes/{id}``: an entity (the user, a third party) or a fact of the
    projected graph."""

    id: str = ""
    label: str = ""
    kind: str = ""  # user | entity | fact


@dataclass(frozen=True)
class KnowledgeEdge(Document):
    """``users/{uid}/knowledge_edges/{id}``: subject entity → fact node, labelled with the predicate,
    citing the memories that assert it."""

    id: str = ""
    source: str = ""
    target: str = ""
    label: str = ""
    memory_ids: tuple[str, ...] = ()

    _LISTS: ClassVar[frozenset[str]] = frozenset({"memory_ids"})

    def without(self, memory_id: str) -> KnowledgeEdge:
        """The edge no longer citing ``memory_id``."""
        return self.but(memory_ids=tuple(m for m in self.memory_ids if m != memory_id))


# ------------------------------------------------------------------------------- deletion receipt
@dataclass(frozen=True)
class DeletionReceipt(Document):
    """``users/{uid}/deletion_receipts/{receipt_id}``: a delete's receipt (ids, counts and times, no
    text); also the account wipe's top-level ``deletion_receipts/{sha256(uid:receipt_id)}``, which
    has the kind, the times and ``stores`` only. ``stores``: for each store, when its removal was
    confirmed (null while pending)."""

    receipt_id: str | None = None
    kind: str | None = None  # memory | all | conversation | account
    created_at: datetime | None = None
    expire_at: datetime | None = None  # the TTL policy's field
    memory_ids: tuple[str, ...] | None = None
    memory_count: int | None = None
    stores: Mapping[str, Any] | None = None
    up_to_sequence: int | None = None  # delete-all: the ledger sequence it was stable at
    conversation_id: str | None = None  # a conversation's cascade

    _LISTS: ClassVar[frozenset[str]] = frozenset({"memory_ids"})

    def expired(self, now: datetime) -> bool:
        return self.expire_at is not None and self.expire_at <= now


# ---------------------------------------------------------------------------------------- webhooks
@dataclass(frozen=True)
class WebhookConfig(Document):
    """``users/{uid}/developer_webhooks/{type}``: the user's webhook of one type."""

    type: str | None = None
    url: str | None = None
    enabled: bool | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class WebhookDelivery(Document):
    """``users/{uid}/webhook_deliveries/{delivery_id}``: one delivery per (type, conversation), as
    enqueued, then each attempt's outcome merged into it (its ``reason``, ``last_status`` and
    ``last_error``, ``delivered_at``, whichever the outcome has; a status or error the attempt did
    not have is written as null)."""

    type: str | None = None
    conversation_id: str | None = None
    state: str | None = None  # enqueued | retrying | delivered | failed | refused | cancelled
    attempts: int | None = None
    enqueued_at: datetime | None = None
    updated_at: datetime | None = None
    expire_at: datetime | None = None  # the TTL policy's field
    reason: str | None = None
    last_status: int | None = None
    last_error: str | None = None
    delivered_at: datetime | None = None


# -------------------------------------------------------------------------- consolidation schedule
@dataclass(frozen=True)
class ScheduleEntry(Document):
    """``consolidation_schedule/{uid}``: the user's row in the scheduling registry (merged in parts:
    a mark, a task enqueued for a write's ``write_window`` due at ``due_at``, a walk's repair, a
    pass's clearing), so a field a part does not set is not written."""

    uid: str | None = None
    pending: bool | None = None
    marked_at: datetime | None = None  # the last mark; a pass that started later may clear ``pending``
    write_window: int | None = None  # the last interval window an on-write task covers
    due_at: datetime | None = None
    cleared_at: datetime | None = None

    def unmarked_since(self, started: datetime) -> bool:
        """Pending, and not marked again since ``started`` (a pass that started then may clear it)."""
        return bool(self.pending and self.marked_at and self.marked_at <= started)


@dataclass(frozen=True)
class WalkCursor(Document):
    """``consolidation_walk/cursor``: the user id the scheduler's walk stopped after (null: it
    wrapped round, the next walk starts over)."""

    _ALWAYS: ClassVar[frozenset[str]] = frozenset({"after"})

    after: str | None = None
    walked_at: datetime | None = None
    wrapped: bool = False


# ------------------------------------------------------------------------------ api and server keys
# Every field defaults to None: a touch or a revoke updates one field with a document naming only it.
@dataclass(frozen=True)
class ApiKeyRecord(Document):
    """``users/{uid}/api_keys/{key_id}``: a personal API key as its owner lists it, and ``hash`` (its
    secret's SHA-256, the id of its :class:`ApiKeyLookup`). A new one is stored with a null
    ``last_used_at``."""

    name: str | None = None
    scope: str | None = None  # read | read+write
    restricted: bool | None = None
    created_at: datetime | None = None
    last_used_at: datetime | None = None
    hash: str | None = None


@dataclass(frozen=True)
class ApiKeyLookup(Document):
    """``api_key_hashes/{sha256 hex}``: a personal key by its secret's digest, what verifying reads.
    A new one is stored with a null ``last_used_at``."""

    uid: str | None = None
    key_id: str | None = None
    scope: str | None = None
    restricted: bool | None = None
    created_at: datetime | None = None
    last_used_at: datetime | None = None


@dataclass(frozen=True)
class ServerKeyRecord(Document):
    """``server_keys/{key_id}``: an operator's server key, kept after its revoke (``revoked_at``). A new
    one is stored with null ``last_used_at`` and ``revoked_at``."""

    name: str | None = None
    scope: str | None = None
    restricted: bool | None = None
    created_at: datetime | None = None
    last_used_at: datetime | None = None  # stays null: no request records a server key's use
    revoked_at: datetime | None = None
    hash: str | None = None


@dataclass(frozen=True)
class ServerKeyLookup(Document):
    """``server_key_hashes/{sha256 hex}``: a server key by its secret's digest, what verifying reads."""

    key_id: str | None = None
    scope: str | None = None
    restricted: bool | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ServerKeyUser(Document):
    """``server_keys/{key_id}/users/{uid}``: a user the key wrote for, noted on its first write."""

    uid: str | None = None
    first_write_at: datetime | None = None


# ------------------------------------------------------------------------ account wipe, rebuild runs
# Every field defaults to None: a wipe step or a rebuild page merges a document naming only its fields.
@dataclass(frozen=True)
class KeywordPurgeError(Document):
    """``account_deletions/{uid}.keyword_purge_error``: the drain's failed keyword purge for wipe
    ``generation``, asked for by the request ``requested``."""

    generation: int | None = None
    requested: str | None = None
    error: str | None = None
    at: datetime | None = None


@dataclass(frozen=True)
class AccountDeletion(Document):
    """``account_deletions/{uid}``: the account wipe's record (the fence, :mod:`core.domain.fence`),
    raised with every field but the completion; ``steps``: each step done (``providers_purged``,
    ``canonical_wiped``) and when. The drain records its keyword purge of wipe ``generation`` on it
    (``keyword_purged``: that generation, or ``keyword_purge_error``)."""

    uid: str | None = None
    state: str | None = None  # fenced | purging | completed
    started_at: datetime | None = None
    steps: Mapping[str, Any] | None = None
    generation: int | None = None  # 0 until the first wipe
    receipt_id: str | None = None
    completed_at: datetime | None = None
    keyword_purged: int | None = None
    keyword_purge_error: KeywordPurgeError | None = None

    _MAPS: ClassVar[Mapping[str, type[Document]]] = {"keyword_purge_error": KeywordPurgeError}

    @property
    def completed(self) -> bool:
        return self.state == "completed"


@dataclass(frozen=True)
class RebuildRun(Document):
    """``projection_rebuilds/{provider}``: a ``rebuild --all`` run (merged as it starts and ends)."""

    run_id: str | None = None
    done: bool | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass(frozen=True)
class RebuildMarker(RebuildRun):
    """``users/{uid}/memory_state/rebuild_{provider}``: a user's rebuild of one provider in run
    ``run_id``, the last item id it enqueued (``cursor``, null before the first page) and when its
    purge is due; started whole, then merged page by page and as it ends."""

    provider: str | None = None
    cursor: str | None = None
    purge_due_at: datetime | None = None

    @classmethod
    def start(cls, run_id: str, provider: str, at: datetime) -> RebuildMarker:
        return cls(run_id=run_id, provider=provider, cursor=None, done=False, started_at=at, purge_due_at=at,
                   nulls=frozenset({"cursor"}))

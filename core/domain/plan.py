"""What a planner sees and returns: the types of the apply transaction (docs/architecture.md).

A service describes a canonical change as a *planner*: a pure function from the read-only
:class:`ApplyView` the transaction read to the :class:`Plan` it should write. The store
(:class:`core.ports.Store`) runs the transaction; these types are shared by every implementation
of it, so they live here, below the ports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any, Literal

from core.domain.documents import ApplyControl
from core.domain.records import MemoryItem, QuoteRef, Sensitivity
from core.domain.visibility import is_default_visible

MAX_ITEMS_PER_APPLY = 200  # 2 writes per item + bookkeeping stays under Firestore's 500-write commit
SCHEDULE_ACTION = "schedule_consolidation"  # the outbox action that asks for a consolidation task


@dataclass(frozen=True)
class Page:
    """One cursor page of an item query: at most ``size`` items after document id ``after``."""

    size: int
    after: str | None = None


ItemQuery = tuple[str, Mapping[str, Any]] | tuple[str, Mapping[str, Any], Page]


@dataclass
class ApplyView:
    """What a planner may look at. Items absent from the store map to None."""

    uid: str
    now: datetime
    control: ApplyControl
    items: dict[str, MemoryItem | None]
    docs: dict[str, dict[str, Any] | None]
    sequence: int  # the sequence this commit will get
    commit_id: str
    operation_id: str
    queried: dict[str, list[str]] = field(default_factory=dict)  # query label → matching item ids
    more: dict[str, bool] = field(default_factory=dict)  # paged query label → items follow this page

    def next_revision(self, memory_id: str) -> int:
        current = self.items.get(memory_id)
        return (current.revision if current else 0) + 1


@dataclass
class OutboxAction:
    memory_id: str
    action: str  # upsert | delete | purge_user | schedule_consolidation
    reason: str = ""


@dataclass
class Plan:
    items: list[MemoryItem] = field(default_factory=list)
    docs: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # "collection/id" → data | None
    outbox: list[OutboxAction] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)  # journaled: a replay returns it
    notes: dict[str, Any] = field(default_factory=dict)  # for the caller only: neither written nor replayed

    @property
    def empty(self) -> bool:
        return not (self.items or self.docs or self.outbox)


@dataclass
class ApplyResult:
    operation_id: str
    commit_id: str | None
    sequence: int | None
    replayed: bool
    changed_ids: list[str]
    summary: dict[str, Any]
    outbox_events: int = 0
    notes: dict[str, Any] = field(default_factory=dict)  # the plan's notes (empty on a replay)


@dataclass(frozen=True)
class Write:
    """One write of a batch or transaction: ``set`` (``merge`` keeps other fields), ``update`` (the
    document must exist) or ``delete``, of the document at slash path ``path``. Only a named
    change (:class:`core.domain.changes.Change`) makes the other two: ``create`` (refused when the
    document exists) and ``purge`` (the document or collection and everything below it)."""

    op: Literal["set", "update", "delete", "create", "purge"]
    path: str
    data: dict[str, Any] | None = None
    merge: bool = False


Planner = Callable[[ApplyView], Plan]
ItemValidator = Callable[[MemoryItem, ApplyView, Plan], None]


def is_projectable(item: MemoryItem) -> bool:
    """Visible and unrestricted items are upserted to providers; everything else is delete-only."""
    return is_default_visible(item) and not item.restricted


QUOTE_CHARS = 1000


def _quoted(item: MemoryItem) -> Iterator[QuoteRef]:
    """The quote refs of the item's active evidence, in order; none for an item that is not
    projectable (restricted, hidden) or whose content the user edited (the old words must stop
    finding it)."""
    if not is_projectable(item) or item.edited:
        return
    for evidence in item.evidence:
        if evidence.status == "active":
            yield from evidence.quote_refs


def projected_quote(item: MemoryItem, *, sensitivity: Sensitivity) -> str:
    """The keyword index's ``quote`` field: the item's active evidence quotes, distinct, joined, at
    most ``QUOTE_CHARS``, without any quote that carries a secret, so the index never holds one;
    empty where :func:`_quoted` yields nothing."""
    quotes = (ref.quote for ref in _quoted(item) if ref.quote and not sensitivity.contains_secret(ref.quote))
    return " … ".join(dict.fromkeys(quotes))[:QUOTE_CHARS]


def projected_context(item: MemoryItem) -> str:
    """What the vector index embeds beside the content: the whole text of each transcript segment
    the item's active evidence quotes (``QuoteRef.segment``, empty for a segment with anything
    restricted or secret in it), distinct, in order, at most ``QUOTE_CHARS``; empty where
    :func:`_quoted` yields nothing."""
    return " ".join(dict.fromkeys(ref.segment for ref in _quoted(item) if ref.segment))[:QUOTE_CHARS]


def split_doc_path(path: str) -> tuple[str, str]:
    """A plan document path ``collection/id`` as its two parts."""
    collection, _, doc_id = path.partition("/")
    if not collection or not doc_id or "/" in doc_id:
        raise ValueError(f"plan document path must be 'collection/id', got {path!r}")
    return collection, doc_id


def extended(view: ApplyView, planner: Planner, addition: Callable[[ApplyView, Plan], Plan]) -> Plan:
    """``planner``'s plan for ``view`` with what ``addition`` adds to it (bind both with
    ``functools.partial`` to get a planner)."""
    return addition(view, planner(view))


def with_schedule_event(planner: Planner) -> Planner:
    """``planner``, plus :func:`schedule_event`."""
    return partial(extended, planner=planner, addition=schedule_event)


def schedule_event(view: ApplyView, out: Plan) -> Plan:
    """``out`` plus one ``schedule_consolidation`` outbox event when it makes an item pending (new,
    or not pending before) and has none; the drain turns it into the user's consolidation task."""
    if (not any(_newly_pending(view, item) for item in out.items)
            or any(a.action == SCHEDULE_ACTION for a in out.outbox)):
        return out
    return replace(out, outbox=[*out.outbox, OutboxAction("", SCHEDULE_ACTION, "consolidation_due")])


def _newly_pending(view: ApplyView, item: MemoryItem) -> bool:
    previous = view.items.get(item.id)
    if previous is not None and previous.pending_route:
        return False
    probe = item.model_copy(deep=True)
    try:
        probe.settle()
    except Exception:  # noqa: BLE001 - an illegal item: the apply refuses it itself
        return False
    return probe.pending_route

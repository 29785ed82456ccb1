"""Every Firestore query Strata runs, declared once.

Code never builds an ad-hoc ``where`` chain: it names a :class:`QuerySpec` from :data:`QUERIES`
and runs it through the store (:meth:`core.ports.Store.query`; the Firestore adapter chains the SDK
calls in :func:`core.adapters.firestore.queries.build`, the unit-test fake evaluates the spec). The composite indexes a deployment needs are derived from the
same specs (:func:`composite_indexes`), and the infrastructure tests compare that derivation with
what Terraform declares, so a new query without its index fails the suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from core.domain import paths

Scope = Literal["COLLECTION", "COLLECTION_GROUP"]
Direction = Literal["ASCENDING", "DESCENDING"]
EQUALITY_OPS = frozenset({"==", "in"})
INEQUALITY_OPS = frozenset({"<", "<=", ">", ">=", "!=", "not-in"})
ARRAY_OPS = frozenset({"array_contains", "array_contains_any"})  # served by the field's array index


@dataclass(frozen=True)
class Clause:
    field: str
    op: str  # "==", "in", "array_contains", "array_contains_any", "<", "<=", ">", ">="


@dataclass(frozen=True)
class Order:
    field: str
    direction: Direction = "ASCENDING"


@dataclass(frozen=True)
class IndexField:
    field_path: str
    mode: Literal["ASCENDING", "DESCENDING", "ARRAY_CONTAINS"]


@dataclass(frozen=True)
class CompositeIndex:
    collection_group: str
    query_scope: Scope
    fields: tuple[IndexField, ...]


@dataclass(frozen=True)
class QuerySpec:
    name: str
    collection: str  # the last path segment, e.g. "memory_items"
    scope: Scope
    where: tuple[Clause, ...] = ()
    order_by: tuple[Order, ...] = ()
    # A disjunction, ANDed with ``where``: a document matches when any of these clauses holds. One
    # query instead of one per clause (Firestore runs an OR as the union of its disjuncts, each
    # served by its own index, and answers each document once).
    any_of: tuple[Clause, ...] = ()

    def disjuncts(self) -> tuple[QuerySpec, ...]:
        """The conjunctive queries whose union this one is (its disjunctive normal form): itself
        when it has no ``any_of``, else one per ``any_of`` clause, ANDed with ``where``."""
        if not self.any_of:
            return (self,)
        return tuple(QuerySpec(self.name, self.collection, self.scope, (*self.where, clause), self.order_by)
                     for clause in self.any_of)

    def required_indexes(self) -> tuple[CompositeIndex, ...]:
        """The composite indexes Firestore needs for this query: one per disjunct that single-field
        indexes (created automatically) do not serve."""
        out: list[CompositeIndex] = []
        for disjunct in self.disjuncts():
            index = disjunct.required_index()
            if index is not None and index not in out:
                out.append(index)
        return tuple(out)

    def required_index(self) -> CompositeIndex | None:
        """The composite index Firestore needs for this conjunctive query, or None when single-field
        indexes (created automatically) serve it (a query with ``any_of``: :meth:`required_indexes`)."""
        if self.any_of:
            raise ValueError(f"query {self.name} is a disjunction: it needs required_indexes()")
        fields = self._index_fields()
        if len(fields) < 2:
            return None
        return CompositeIndex(self.collection, self.scope, tuple(fields))

    def _index_fields(self) -> list[IndexField]:
        """The fields of the index, in the order Firestore wants them: array-contains, then
        equality, then inequality (in its field's order direction), then the remaining orders."""
        fields: list[IndexField] = []
        seen: set[str] = set()
        for clause in self.where:
            if clause.op in ARRAY_OPS:
                fields.append(IndexField(clause.field, "ARRAY_CONTAINS"))
                seen.add(clause.field)
        for clause in self.where:
            if clause.op in EQUALITY_OPS and clause.field not in seen:
                fields.append(IndexField(clause.field, "ASCENDING"))
                seen.add(clause.field)
        for clause in self.where:
            if clause.op in INEQUALITY_OPS and clause.field not in seen:
                direction: Direction = next((o.direction for o in self.order_by if o.field == clause.field),
                                            "ASCENDING")
                fields.append(IndexField(clause.field, direction))
                seen.add(clause.field)
        for order in self.order_by:
            if order.field not in seen and order.field != "__name__":
                fields.append(IndexField(order.field, order.direction))
                seen.add(order.field)
        return fields


def _q(name: str, collection: str, scope: Scope, where: Sequence[Clause], order_by: Sequence[Order],
       any_of: Sequence[Clause] = ()) -> QuerySpec:
    return QuerySpec(name, collection, scope, tuple(where), tuple(order_by), tuple(any_of))


ASC: Direction = "ASCENDING"
DESC: Direction = "DESCENDING"

QUERIES: Mapping[str, QuerySpec] = {
    spec.name: spec
    for spec in (
        # Reads: the list endpoint (and include_archive via `in`), newest created first. The cursor
        # orders on keys that never change (created_at is kept by every revision, then the id), so
        # an item edited or routed between two pages keeps its place: never skipped, never repeated.
        _q("list_by_read_class", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("read_class", "in")], [Order("created_at", DESC), Order("__name__", DESC)]),
        _q("list_by_read_class_and_layer", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("read_class", "in"), Clause("layer", "==")], [Order("created_at", DESC), Order("__name__", DESC)]),
        # The list under a device scope (the retrieval filter on capture_device_ids): one read class,
        # up to 30 devices, in the list order.
        _q("list_by_device", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("capture_device_ids", "array_contains_any"), Clause("read_class", "==")],
           [Order("created_at", DESC), Order("__name__", DESC)]),
        _q("list_by_device_and_layer", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("capture_device_ids", "array_contains_any"), Clause("read_class", "=="), Clause("layer", "==")],
           [Order("created_at", DESC), Order("__name__", DESC)]),
        # Most recently updated first: consolidation's Long-term neighbours, archive search.
        _q("items_by_read_class", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("read_class", "in")], [Order("updated_at", DESC), Order("__name__", DESC)]),
        _q("items_by_read_class_and_layer", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("read_class", "in"), Clause("layer", "==")], [Order("updated_at", DESC), Order("__name__", DESC)]),
        # Complete-source replacement and conversation delete: the source's cohort, paged.
        _q("items_by_source", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("source_ids", "array_contains")], [Order("__name__", ASC)]),
        # A source's live cohort (items its active evidence still supports), paged by id: replacement
        # and cascade walk it in bounded pages, and a withdrawn item leaves it.
        _q("items_by_active_source", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("active_source_ids", "array_contains")], [Order("__name__", ASC)]),
        # Consolidation: every fact of one subject and attribute (core.domain.slots), for the ending rule.
        _q("items_by_slot_key", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("slot_key", "==")], [Order("__name__", ASC)]),
        # Lineage: aliases and superseded ancestors of a survivor.
        _q("items_by_canonical", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("canonical_memory_id", "==")], [Order("__name__", ASC)]),
        # Every item not yet tombstoned (active, superseded, hidden): the delete-all scan, paged.
        _q("items_by_status", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("status", "in")], [Order("__name__", ASC)]),
        # Consolidation: a user's pending Short-term items, nearest deadline first.
        _q("pending_route_items", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("pending_route", "==")], [Order("expires_at", ASC), Order("__name__", ASC)]),
        # Consolidation fan-out: which users have pending items (deadline first).
        _q("pending_route_items_all_users", paths.MEMORY_ITEMS, "COLLECTION_GROUP",
           [Clause("pending_route", "==")], [Order("expires_at", ASC)]),
        # Consolidation safety net: the users the schedule registry holds as pending, by id.
        _q("scheduled_users_pending", paths.CONSOLIDATION_SCHEDULE, "COLLECTION",
           [Clause("pending", "==")], [Order("__name__", ASC)]),
        # Long-term age-out to Archive.
        _q("long_term_by_age", paths.MEMORY_ITEMS, "COLLECTION",
           [Clause("read_class", "=="), Clause("layer", "=="), Clause("updated_at", "<")],
           [Order("updated_at", ASC)]),
        # Outbox: a user's due events.
        _q("outbox_due", paths.OUTBOX, "COLLECTION",
           [Clause("state", "in"), Clause("due_at", "<=")], [Order("due_at", ASC)]),
        # Outbox: any event still held (leased), for the account purge fence.
        _q("outbox_by_state", paths.OUTBOX, "COLLECTION",
           [Clause("state", "in")], [Order("__name__", ASC)]),
        # Outbox operations: dead-lettered events across users (list, redrive), paged by path.
        _q("outbox_by_state_all_users", paths.OUTBOX, "COLLECTION_GROUP",
           [Clause("state", "in")], [Order("__name__", ASC)]),
        # Outbox sweep: users with due events anywhere.
        _q("outbox_due_all_users", paths.OUTBOX, "COLLECTION_GROUP",
           [Clause("state", "in"), Clause("due_at", "<=")], [Order("due_at", ASC)]),
        # Review queue: open entries, newest first.
        _q("review_open", paths.REVIEW_QUEUE, "COLLECTION",
           [Clause("status", "==")], [Order("created_at", DESC)]),
        # A memory's ledger history.
        _q("commits_by_memory", paths.COMMITS, "COLLECTION",
           [Clause("memory_ids", "array_contains")], [Order("sequence", ASC)]),
        # What a key wrote (listed when it is revoked): the user's commits and conversations naming it.
        _q("commits_by_credential", paths.COMMITS, "COLLECTION", [Clause("credential.key_id", "==")],
           [Order("__name__", ASC)]),
        _q("conversations_by_creator", paths.CONVERSATIONS, "COLLECTION", [Clause("created_by.key_id", "==")],
           [Order("__name__", ASC)]),
        # Review entries past their 72 h deadline (consolidation settles them in Archive).
        _q("reviews_expiring", paths.REVIEW_QUEUE, "COLLECTION",
           [Clause("status", "=="), Clause("expires_at", "<=")], [Order("expires_at", ASC)]),
        # Review rows that show any of up to 30 memories (privacy deletes redact them).
        _q("reviews_by_memory", paths.REVIEW_QUEUE, "COLLECTION", [Clause("memory_id", "in")], []),
        # Knowledge-graph projection maintenance.
        # The edges citing any of up to 30 memories (a drain batch's citation pruning).
        _q("edges_by_any_memory", paths.KNOWLEDGE_EDGES, "COLLECTION", [Clause("memory_ids", "array_contains_any")], []),
        _q("edges_by_source", paths.KNOWLEDGE_EDGES, "COLLECTION", [Clause("source", "==")], []),
        # The historical adapter (core/services/legacy.py): legacy rows in the list order, and the
        # rows that cite a conversation under either of its field names, one OR query per
        # collection (each disjunct served by its field's single-field index).
        *(_q(f"legacy_{collection}_by_created", collection, "COLLECTION", [],
             [Order("created_at", DESC), Order("__name__", DESC)]) for collection in (paths.LEGACY_MEMORIES, paths.LEGACY_SHORT_TERM)),
        *(_q(f"legacy_{collection}_citing", collection, "COLLECTION", [], [],
             any_of=[Clause("conversation_id", "=="), Clause("memory_id", "==")])
          for collection in (paths.LEGACY_MEMORIES, paths.LEGACY_SHORT_TERM)),
        # Workflow rows of a conversation.
        _q("action_items_by_conversation", paths.ACTION_ITEMS, "COLLECTION",
           [Clause("conversation_id", "==")], []),
        _q("goals_by_conversation", paths.GOALS, "COLLECTION",
           [Clause("conversation_id", "==")], []),
    )
}


def composite_indexes() -> list[CompositeIndex]:
    """The de-duplicated composite indexes that :data:`QUERIES` need."""
    out: list[CompositeIndex] = []
    for spec in QUERIES.values():
        for index in spec.required_indexes():
            if index not in out:
                out.append(index)
    return out

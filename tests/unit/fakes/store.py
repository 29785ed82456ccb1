"""An in-memory :class:`core.ports.Store` for unit tests.

It keeps documents in a dict by slash path and honours the port's transaction semantics the way
the Firestore adapter does: an apply reads the control doc, the incident switches, the account
fence and the journal, runs the planner on a view of copies, stamps and validates every item, and
then commits items, documents, outbox events, commit, head and journal together — or, when any
step raises, writes nothing. Named queries are evaluated from their declarations in
:data:`core.domain.queries.QUERIES` (filters, ordering, cursors, limits).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from functools import cmp_to_key
from typing import Any

from core.domain import fence, ids, paths
from core.domain.admission import admission_validator
from core.domain.plan import (
    MAX_ITEMS_PER_APPLY,
    ApplyResult,
    ApplyView,
    ItemQuery,
    ItemValidator,
    OutboxAction,
    Plan,
    Planner,
    is_projectable,
    outbox_event,
    split_doc_path,
    with_schedule_event,
)
from core.domain.queries import QUERIES, Order, QuerySpec
from core.domain.records import MemoryItem
from core.domain.review_queue import with_review_reissue
from core.errors import Conflict, NotFound, StrataError, WritesBlocked, WritesDisabled
from core.ports import Cursor, Store, StoredDoc, Write

_MISSING = object()


def _compare(a: Any, b: Any) -> int:
    if a is None or b is None:
        return (a is not None) - (b is not None)  # None (null) sorts first, as in Firestore
    return (a > b) - (a < b)


class InMemoryStore(Store):
    """Documents in a dict; ``versions`` counts writes per path (the opaque version)."""

    def __init__(self, clock: Callable[[], datetime], *, validators: Iterable[ItemValidator] = (admission_validator,),
                 on_committed: Callable[[str, int], None] | None = None, schedule_events: bool = True) -> None:
        self.docs: dict[str, dict[str, Any]] = {}
        self.versions: dict[str, int] = {}
        self.clock = clock
        self.validators = list(validators)
        self.on_committed = on_committed
        self.schedule_events = schedule_events
        self.applies: list[ApplyResult] = []  # every committed (not replayed) apply, in order
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ raw access (tests)
    def put(self, path: str, data: dict[str, Any]) -> None:
        self._write(path, data)

    def collection(self, collection: str) -> dict[str, dict[str, Any]]:
        """Documents directly in ``collection`` (a slash path), by id."""
        depth = collection.count("/") + 1
        return {p.rsplit("/", 1)[1]: copy.deepcopy(d) for p, d in sorted(self.docs.items())
                if p.startswith(collection + "/") and p.count("/") == depth}

    def _write(self, path: str, data: dict[str, Any] | None, merge: bool = False) -> None:
        if path.count("/") % 2 == 0:
            raise ValueError(f"{path!r} is not a document path")
        if data is None:
            self.docs.pop(path, None)
        elif merge and path in self.docs:
            merged = copy.deepcopy(self.docs[path])
            merged.update(copy.deepcopy(data))
            self.docs[path] = merged
        else:
            self.docs[path] = copy.deepcopy(data)
        self.versions[path] = self.versions.get(path, 0) + 1

    # ------------------------------------------------------------------ reads
    def get(self, path: str) -> dict[str, Any] | None:
        data = self.docs.get(path)
        return copy.deepcopy(data) if data is not None else None

    def get_all(self, paths: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        return {p: self.get(p) for p in paths}

    def _candidates(self, spec: QuerySpec, parent: str) -> list[str]:
        if spec.scope == "COLLECTION_GROUP":
            return [p for p in self.docs if p.split("/")[-2] == spec.collection]
        base = f"{parent}/{spec.collection}" if parent else spec.collection
        depth = base.count("/") + 1
        return [p for p in self.docs if p.startswith(base + "/") and p.count("/") == depth]

    def query(self, name: str, params: Mapping[str, Any], *, parent: str = "", limit: int | None = None,
              start_after: Cursor | None = None, keys_only: bool = False) -> list[StoredDoc]:
        spec = QUERIES[name]
        rows: list[tuple[str, dict[str, Any]]] = []
        for path in self._candidates(spec, parent):
            data = self.docs[path]
            if all(_clause(data, c.field, c.op, params[c.field]) for c in spec.where) and all(
                    o.field == "__name__" or o.field in data for o in spec.order_by):
                rows.append((path, data))
        group = spec.scope == "COLLECTION_GROUP"

        def key(path: str, data: Mapping[str, Any], fld: str) -> Any:
            return (path if group else path.rsplit("/", 1)[1]) if fld == "__name__" else data.get(fld)

        orders = list(spec.order_by)
        if not any(o.field == "__name__" for o in orders):  # Firestore breaks ties by name, ascending
            orders.append(Order("__name__"))

        def cmp(a: tuple[str, Mapping[str, Any]], b: tuple[str, Mapping[str, Any]]) -> int:
            for order in orders:
                c = _compare(key(a[0], a[1], order.field), key(b[0], b[1], order.field))
                if c:
                    return -c if order.direction == "DESCENDING" else c
            return 0

        rows.sort(key=cmp_to_key(cmp))
        if start_after is not None:
            if isinstance(start_after, StoredDoc):
                anchor: tuple[str, Mapping[str, Any]] = (start_after.path, self.docs.get(start_after.path)
                                                         or start_after.data)
            else:
                values = dict(start_after)
                name = values.get("__name__", "")
                base = f"{parent}/{spec.collection}" if parent else spec.collection
                anchor_path = name if "/" in str(name) else f"{base}/{name}"
                anchor = (anchor_path, values)
            rows = [r for r in rows if cmp(r, anchor) > 0]
        if limit is not None:
            rows = rows[:limit]
        return [StoredDoc(p, {} if keys_only else copy.deepcopy(d), self.versions.get(p)) for p, d in rows]

    def scan(self, collection: str, *, limit: int, after: str | None = None,
             keys_only: bool = False) -> list[StoredDoc]:
        found = self.collection(collection)
        ids_ = [i for i in sorted(found) if after is None or i > after][:limit]
        return [StoredDoc(f"{collection}/{i}", {} if keys_only else found[i], self.versions.get(f"{collection}/{i}"))
                for i in ids_]

    def document_ids(self, collection: str) -> Iterator[str]:
        depth = collection.count("/") + 1
        seen = sorted({p.split("/")[depth] for p in self.docs if p.startswith(collection + "/")})
        yield from seen

    def has_children(self, path: str) -> bool:
        return any(p.startswith(path + "/") for p in self.docs)

    # ------------------------------------------------------------------ writes
    def set(self, path: str, data: dict[str, Any], *, merge: bool = False) -> None:
        with self._lock:
            self._write(path, data, merge)

    def update(self, path: str, data: dict[str, Any]) -> None:
        with self._lock:
            if path not in self.docs:
                raise NotFound(f"{path} does not exist")
            self._write(path, data, merge=True)

    def delete(self, path: str) -> None:
        with self._lock:
            if path in self.docs:
                self._write(path, None)

    def create(self, path: str, data: dict[str, Any]) -> bool:
        with self._lock:
            if path in self.docs:
                return False
            self._write(path, data)
            return True

    def commit(self, writes: Sequence[Write]) -> None:
        with self._lock:
            for write in writes:  # all or nothing: an update of a missing document fails the batch
                if write.op == "update" and write.path not in self.docs:
                    raise NotFound(f"{write.path} does not exist")
            for write in writes:
                self._write(write.path, None if write.op == "delete" else (write.data or {}),
                            merge=write.merge or write.op == "update")

    def update_if_unchanged(self, doc: StoredDoc, data: dict[str, Any]) -> bool:
        with self._lock:
            if doc.path not in self.docs or self.versions.get(doc.path) != doc.version:
                return False
            self._write(doc.path, data, merge=True)
            return True

    def update_if(self, path: str, condition: Callable[[dict[str, Any] | None], bool],
                  data: dict[str, Any]) -> bool:
        with self._lock:
            if not condition(self.get(path)):
                return False
            self._write(path, data, merge=True)
            return True

    def delete_tree(self, path: str) -> None:
        with self._lock:
            for p in [p for p in self.docs if p == path or p.startswith(path + "/")]:
                self._write(p, None)

    # ------------------------------------------------------------------ fence and leases
    def read_fence(self, uid: str) -> fence.AccountFence:
        return fence.of(self.get(paths.account_deletion(uid)))

    def fenced_write(self, uid: str, writes: Sequence[tuple[str, dict[str, Any], bool]], *,
                     guard: str | None = None,
                     refuse: Callable[[dict[str, Any] | None], bool] | None = None) -> bool:
        with self._lock:
            record = self.get(paths.account_deletion(uid))
            fence.check(uid, record)
            if fence.of(record).deleting:
                raise WritesBlocked("this account is being deleted; writes are refused")
            if guard is not None and refuse is not None and refuse(self.get(guard)):
                return False
            for path, data, merge in writes:
                self._write(path, data, merge)
            return True

    def take_lease(self, path: str, holder: str, ttl: timedelta, *, mark_dirty: bool = False) -> bool:
        with self._lock:
            now = self.clock()
            data = self.get(path) or {}
            if data.get("holder") and data.get("expires_at") and data["expires_at"] > now:
                if mark_dirty and not data.get("dirty"):
                    self._write(path, {"dirty": True}, merge=True)
                return False
            self._write(path, {"holder": holder, "expires_at": now + ttl, "dirty": False,
                               "epoch": int(data.get("epoch", 0)) + 1}, merge=True)
            return True

    def release_lease(self, path: str, holder: str, ttl: timedelta, *, honour_dirty: bool = False) -> bool:
        with self._lock:
            data = self.get(path) or {}
            if data.get("holder") != holder:
                return False
            if honour_dirty and data.get("dirty"):
                self._write(path, {"dirty": False, "expires_at": self.clock() + ttl}, merge=True)
                return True
            self._write(path, {"holder": None, "expires_at": None, "dirty": False}, merge=True)
            return False

    def renew_lease(self, path: str, holder: str, ttl: timedelta) -> bool:
        with self._lock:
            if (self.get(path) or {}).get("holder") != holder:
                return False
            self._write(path, {"expires_at": self.clock() + ttl}, merge=True)
            return True

    def commit_if(self, guards: Mapping[str, Callable[[dict[str, Any] | None], bool]],
                  writes: Sequence[Write]) -> bool:
        with self._lock:
            if not all(holds(self.get(path)) for path, holds in guards.items()):
                return False
            self.commit(writes)
            return True

    # ------------------------------------------------------------------ apply
    def head_sequence(self, uid: str) -> int:
        return int((self.get(paths.control(uid)) or {}).get("sequence", 0))

    def journaled(self, uid: str, kind: str, key: Any) -> dict[str, Any] | None:
        return self.get(paths.doc(uid, "memory_operations", ids.operation_id(uid, kind, key)))

    def apply(self, uid: str, kind: str, key: Any, planner: Planner, *, item_ids: Iterable[str] = (),
              doc_paths: Iterable[str] = (), actor: str = "system", bypass_account_fence: bool = False,
              now: datetime | None = None, item_queries: Mapping[str, ItemQuery] | None = None,
              follow_lineage: bool = False) -> ApplyResult:
        named = sorted(set(item_ids))
        if len(named) > MAX_ITEMS_PER_APPLY:
            raise Conflict(f"an apply may touch at most {MAX_ITEMS_PER_APPLY} items", code="too_many_items")
        planner = with_review_reissue(planner)  # as the deployed engine does (core.adapters.firestore.hooks)
        if self.schedule_events:
            planner = with_schedule_event(planner)
        with self._lock:
            result = self._transaction(uid, kind, key, planner, named, sorted(set(doc_paths)), actor,
                                       bypass_account_fence, now or self.clock(), item_queries or {}, follow_lineage)
        if not result.replayed and result.commit_id is not None:
            self.applies.append(result)
            if result.outbox_events and self.on_committed is not None:
                self.on_committed(uid, result.sequence or 0)
        return result

    def _transaction(self, uid: str, kind: str, key: Any, planner: Planner, item_ids: list[str],
                     doc_paths: list[str], actor: str, bypass: bool, moment: datetime,
                     item_queries: Mapping[str, ItemQuery], follow_lineage: bool) -> ApplyResult:
        op_id = ids.operation_id(uid, kind, key)
        op_path = paths.doc(uid, "memory_operations", op_id)
        if (op := self.get(op_path)) is not None:
            return ApplyResult(op_id, op.get("commit_id"), op.get("sequence"), True, list(op.get("changed_ids", [])),
                               dict(op.get("summary", {})), int(op.get("outbox_events", 0)))
        stored_control = self.get(paths.control(uid))
        control = stored_control or {"sequence": 0, "head_commit_id": None, "account_generation": 0,
                                     "writes_blocked": False}
        deletion = self.get(paths.account_deletion(uid))
        fence.check(uid, deletion)
        if (self.get(paths.CONTROLS_GLOBAL) or {}).get("writes_disabled"):
            raise WritesDisabled("writes are disabled by an incident switch; try again later")
        if not bypass:
            if deletion is not None and deletion.get("state") != "completed":
                raise WritesBlocked("this account is being deleted; writes are refused")
            if control.get("writes_blocked"):
                raise WritesBlocked("writes are blocked for this account")
        readable = set(item_ids)
        queried: dict[str, list[str]] = {}
        more: dict[str, bool] = {}
        found_docs: list[StoredDoc] = []
        for label, spec in item_queries.items():
            page = spec[2] if len(spec) > 2 else None  # type: ignore[misc]
            if page is not None:
                size = max(1, min(page.size, MAX_ITEMS_PER_APPLY))
                rows = self.query(spec[0], spec[1], parent=paths.user(uid), limit=size + 1,
                                  start_after={"__name__": page.after} if page.after else None)
                more[label], rows = len(rows) > size, rows[:size]
            else:
                rows = self.query(spec[0], spec[1], parent=paths.user(uid), limit=MAX_ITEMS_PER_APPLY + 1)
                if len(rows) > MAX_ITEMS_PER_APPLY:
                    raise Conflict(f"more than {MAX_ITEMS_PER_APPLY} items match; this operation must be split",
                                   code="too_many_items")
            queried[label] = [r.id for r in rows]
            found_docs.extend(rows)
            readable.update(r.id for r in rows)
        if follow_lineage:
            for row in found_docs:
                readable.update(row.data.get("supersedes") or [])
                if row.data.get("canonical_memory_id"):
                    readable.add(row.data["canonical_memory_id"])
        sequence = int(control.get("sequence", 0)) + 1
        view = ApplyView(
            uid=uid, now=moment, control=control,
            items={mid: (MemoryItem.from_store(d) if (d := self.get(paths.doc(uid, "memory_items", mid))) else None)
                   for mid in sorted(readable)},
            docs={p: self.get(paths.doc(uid, *split_doc_path(p))) for p in doc_paths},
            sequence=sequence, commit_id=ids.commit_id(uid, sequence, op_id), operation_id=op_id,
            queried=queried, more=more)
        plan: Plan = planner(view)
        if plan.empty:
            if stored_control is not None:
                self._write(op_path, {"operation_id": op_id, "kind": kind, "commit_id": None, "sequence": None,
                                      "changed_ids": [], "summary": plan.summary, "created_at": moment, "noop": True})
            return ApplyResult(op_id, None, None, False, [], plan.summary)
        changes = []
        for item in plan.items:
            if item.id not in readable:
                raise StrataError(f"planner wrote item {item.id} it did not declare as read")
            if item.uid != uid:
                raise StrataError("planner wrote an item of another user")
            previous = view.items.get(item.id)
            item.revision = view.next_revision(item.id)
            item.created_at = previous.created_at if previous and previous.created_at else (item.created_at or moment)
            item.updated_at = moment
            item.ledger_commit_id = view.commit_id
            item.ledger_sequence = sequence
            item.settle()
            for validate in self.validators:
                validate(item, view, plan)
            changes.append({"memory_id": item.id, "revision": item.revision, "layer": item.layer,
                            "status": item.status, "processing_state": item.processing_state,
                            "content_hash": item.content_hash, "action": "create" if previous is None else "update"})
        outbox = [OutboxAction(i.id, "upsert" if is_projectable(i) else "delete", kind) for i in plan.items]
        outbox.extend(plan.outbox)
        # Every check passed: commit everything together.
        commit = view.commit_id
        for item in plan.items:
            self._write(paths.doc(uid, "memory_items", item.id), item.to_store())
        for path, payload in plan.docs.items():
            self._write(paths.doc(uid, *split_doc_path(path)), payload)
        by_id = {i.id: i for i in plan.items}
        for action in outbox:
            event_id, event = outbox_event(uid, commit, sequence, action, by_id.get(action.memory_id), kind, moment)
            self._write(paths.doc(uid, "memory_outbox", event_id), event)
        changed = [i.id for i in plan.items]
        self._write(paths.doc(uid, "memory_commits", commit), {
            "commit_id": commit, "sequence": sequence, "parent_commit_id": control.get("head_commit_id"),
            "operation_id": op_id, "kind": kind, "actor": actor, "changes": changes, "doc_writes": sorted(plan.docs),
            "created_at": moment, "memory_ids": changed})
        self._write(paths.control(uid), {"sequence": sequence, "head_commit_id": commit, "updated_at": moment,
                                         "account_generation": fence.of(deletion).generation,
                                         "writes_blocked": bool(control.get("writes_blocked", False))})
        self._write(op_path, {"operation_id": op_id, "kind": kind, "commit_id": commit, "sequence": sequence,
                              "changed_ids": changed, "summary": plan.summary, "created_at": moment,
                              "outbox_events": len(outbox)})
        return ApplyResult(op_id, commit, sequence, False, changed, plan.summary, len(outbox))


def _clause(data: Mapping[str, Any], field: str, op: str, want: Any) -> bool:
    have = data.get(field, _MISSING)
    if have is _MISSING:
        return False
    if op == "==":
        return bool(have == want)
    if op == "in":
        return have in want
    if op == "array_contains":
        return isinstance(have, list) and want in have
    if op == "array_contains_any":
        return isinstance(have, list) and any(value in have for value in want)
    if have is None or want is None:
        return False
    if op == "<":
        return bool(have < want)
    if op == "<=":
        return bool(have <= want)
    if op == ">":
        return bool(have > want)
    if op == ">=":
        return bool(have >= want)
    raise ValueError(f"unsupported operator {op}")

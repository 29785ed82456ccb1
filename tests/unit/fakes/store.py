"""An in-memory :class:`core.ports.Store` for unit tests.

It keeps documents in a dict by slash path. Of the apply it keeps only the mechanics, as the
Firestore adapter does: :meth:`InMemoryStore._transact` gives the unit of work
(:class:`core.domain.unit_of_work.UnitOfWork`, the one apply algorithm) copies of the documents it
reads and writes what it returns, all at once under the store's lock — or, when it raises, nothing.
Named queries are evaluated from their declarations in :data:`core.domain.queries.QUERIES`
(filters, ordering, cursors, limits).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import cmp_to_key
from typing import Any, TypeVar

from core.domain import fence, paths
from core.domain.changes import Change, Written, increments
from core.domain.plan import ApplyResult
from core.domain.queries import QUERIES, Order, QuerySpec
from core.domain.unit_of_work import TransactionReads
from core.errors import NotFound
from core.ports import ABSENT, Cursor, Publisher, Store, StoredDoc, Write

_MISSING = object()
T = TypeVar("T")


def _compare(a: Any, b: Any) -> int:
    if a is None or b is None:
        return (a is not None) - (b is not None)  # None (null) sorts first, as in Firestore
    return (a > b) - (a < b)


class InMemoryStore(Store):
    """Documents in a dict; ``versions`` counts writes per path (the opaque version)."""

    def __init__(self, clock: Callable[[], datetime], *, publisher: Publisher | None = None,
                 topic: str = "") -> None:
        self.docs: dict[str, dict[str, Any]] = {}
        self.versions: dict[str, int] = {}
        self.clock = clock
        self.publisher, self.topic = publisher, topic
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
            if all(_clause(data, c.field, c.op, params[c.field]) for c in spec.where) and (
                    not spec.any_of or any(_clause(data, c.field, c.op, params[c.field]) for c in spec.any_of)) and all(
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

    def children(self, path: str) -> Iterator[str]:
        depth = path.count("/") + 1
        yield from sorted({p.split("/")[depth] for p in self.docs if p.startswith(path + "/")})

    # ------------------------------------------------------------------ writes
    def write(self, change: Change) -> Written:
        """``change`` under the store's lock: the fence (:func:`core.domain.fence.admit`) and the
        guard read as they are, then every write or, when one is refused, none."""
        with self._lock:
            if change.writes and change.writes[0].op == "purge":
                self._purge(change.writes[0].path)
                return Written(True)
            if change.fenced is not None:
                fence.admit(change.fenced, self.get(paths.account_deletion(change.fenced)))
            if change.guard is not None and change.refuse is not None and change.refuse(self.get(change.guard)):
                return Written(False)
            if any(w.op == "create" and w.path in self.docs for w in change.writes):
                return Written(False)
            counts = {w.path: self._counted(w) for w in change.writes if increments(w)}
            self._commit([replace(w, data={**(w.data or {}), increments(w)[0]: counts[w.path]})
                          if w.path in counts else w for w in change.writes])
            return Written(True, counts)

    def _purge(self, root: str) -> None:
        for path in [p for p in self.docs if p == root or p.startswith(root + "/")]:
            self._write(path, None)

    def _counted(self, write: Write) -> int:
        """The value ``write``'s incremented field will have."""
        name = increments(write)[0]
        return int((self.docs.get(write.path) or {}).get(name, 0)) + (write.data or {})[name].by

    def get_all_versioned(self, paths: Sequence[str]) -> dict[str, StoredDoc | None]:
        """With each document's version (its write count), so a swap on ``seen`` is conditional here too."""
        with self._lock:
            return {p: StoredDoc(p, copy.deepcopy(self.docs[p]), self.versions.get(p)) if p in self.docs else None
                    for p in paths}

    def swap(self, path: str, decide: Callable[[dict[str, Any] | None], tuple[T, dict[str, Any] | None]], *,
             seen: StoredDoc | None = None, exhausted: T) -> T:
        """As Firestore's: decided on ``seen`` (when it carries a version) and written only while
        the document is still at it; else decided on the document as it is, under the lock (so
        never ``exhausted``)."""
        with self._lock:
            if seen is not None and seen.version is not None:
                missing = seen.version is ABSENT
                value, data = decide(None if missing else copy.deepcopy(seen.data))
                if data is None:
                    return value
                stored = path in self.docs
                if (not stored) if missing else (stored and self.versions.get(path) == seen.version):
                    self._write(path, data, merge=True)
                    return value
            value, data = decide(self.get(path))
            if data is not None:
                self._write(path, data, merge=True)
            return value

    def _commit(self, writes: Sequence[Write]) -> None:
        """Under the lock (the caller holds it): the apply's and the fake outbox's writes."""
        for write in writes:  # all or nothing: an update of a missing document fails the batch
            if write.op == "update" and write.path not in self.docs:
                raise NotFound(f"{write.path} does not exist")
        for write in writes:
            self._write(write.path, None if write.op == "delete" else (write.data or {}),
                        merge=write.merge or write.op == "update")

    # ------------------------------------------------------------------ the apply's mechanics
    def _transact(self, uid: str, body: Callable[[TransactionReads], tuple[T, Sequence[Write]]], *,
                  what: str = "apply") -> T:
        """``body`` under the store's lock: it reads the documents as they are, and what it returns
        is written only once it returned (so a raise writes nothing)."""
        with self._lock:
            value, writes = body(_Reads(self))
            self._commit(writes)
            return value

    def _committed(self, uid: str, result: ApplyResult) -> None:
        self.applies.append(result)
        super()._committed(uid, result)


class _Reads(TransactionReads):
    def __init__(self, store: InMemoryStore) -> None:
        self.store = store

    def get_all(self, paths: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        return self.store.get_all(paths)

    def query(self, name: str, params: Mapping[str, Any], *, parent: str, limit: int,
              after: str | None) -> list[tuple[str, dict[str, Any]]]:
        rows = self.store.query(name, params, parent=parent, limit=limit,
                                start_after={"__name__": after} if after else None)
        return [(row.path, row.data) for row in rows]


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

"""The Firestore implementation of :class:`core.ports.Store`: the one place services' reads and
writes meet the SDK.

Of the apply it keeps only the mechanics (:meth:`FirestoreStore._transact`): a Firestore
transaction, its reads decoded straight from the wire (:mod:`core.adapters.firestore.wire`), the
writes the unit of work returns, one transaction at a time per user in this process, and the SDK's
contention errors as :class:`core.errors.RetryableError`. What an apply reads and writes is decided
by :class:`core.domain.unit_of_work.UnitOfWork`. Every other write is one named change
(:meth:`FirestoreStore.write`: a batch, or a transaction that reads the fence and the guard,
:mod:`core.adapters.firestore.fence`) or a compare-and-swap on one document
(:mod:`core.adapters.firestore.swap`).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from core import tracing
from core.adapters.firestore import fence, transactions
from core.adapters.firestore.client import stream_docs
from core.adapters.firestore.queries import QUERIES, build
from core.adapters.firestore.swap import swap as conditional_swap
from core.domain.changes import Change, Increment, Written, increments
from core.domain.unit_of_work import TransactionReads
from core.errors import NotFound, RetryableError, StrataError
from core.ports import Cursor, Publisher, Store, StoredDoc, Write

T = TypeVar("T")

# Applies for one user all read and write its control doc, so concurrent ones in one process (a
# function instance serving several triggers) only deadlock on its lock, wait for the lock timeout
# and back off for seconds; queueing them here instead costs nothing. Shared by every store of the
# process (so two contexts cannot bypass each other) and striped, so memory stays bounded.
_USER_LOCKS = [threading.Lock() for _ in range(64)]


def stage(writer: Any, ref: Any, write: Write, option: Any = None) -> None:
    """Add ``write`` on ``ref`` to a transaction or batch (``option``: an update-time precondition,
    never on a set); an :class:`core.domain.changes.Increment` value becomes Firestore's."""
    from core.adapters.firestore.wire import set_document

    data = _wire(write.data or {})
    if write.op == "set" and not write.merge:
        set_document(writer, ref, data)
    elif write.op == "set":
        writer.set(ref, data, merge=True)
    elif write.op == "update":
        writer.update(ref, data, option=option)
    elif write.op == "create":
        writer.create(ref, data)
    elif write.op == "delete":
        writer.delete(ref, option=option)
    else:
        raise ValueError(f"a {write.op} of {write.path} is not staged in a batch")


def _wire(data: dict[str, Any]) -> dict[str, Any]:
    if not any(isinstance(v, Increment) for v in data.values()):
        return data
    from google.cloud.firestore_v1 import Increment as ServerIncrement

    return {k: ServerIncrement(v.by) if isinstance(v, Increment) else v for k, v in data.items()}


@tracing.spanned("firestore")
class FirestoreStore(Store):
    def __init__(self, client: Any, clock: Callable[[], datetime], *, publisher: Publisher | None = None,
                 topic: str = "", max_attempts: int = 15) -> None:
        self.client = client
        self.clock = clock
        self.publisher, self.topic = publisher, topic
        self.max_attempts = max_attempts
        self._user_locks = _USER_LOCKS

    # ------------------------------------------------------------------ helpers
    def _ref(self, path: str) -> Any:
        return self.client.document(path)

    # ------------------------------------------------------------------ reads
    def get(self, path: str) -> dict[str, Any] | None:
        snap = self._ref(path).get()
        return (snap.to_dict() or {}) if snap.exists else None

    def get_all(self, paths: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        out: dict[str, dict[str, Any] | None] = dict.fromkeys(paths)
        if paths:
            for snap in self.client.get_all([self._ref(p) for p in dict.fromkeys(paths)]):
                if snap.exists:
                    out[snap.reference.path] = snap.to_dict() or {}
        return out

    def query(self, name: str, params: Mapping[str, Any], *, parent: str = "", limit: int | None = None,
              start_after: Cursor | None = None, keys_only: bool = False) -> list[StoredDoc]:
        spec = QUERIES[name]
        if spec.scope == "COLLECTION_GROUP":
            base = self.client.collection_group(spec.collection)
        else:
            base = self.client.collection(f"{parent}/{spec.collection}" if parent else spec.collection)
        cursor = None
        if start_after is not None:
            values = (dict(start_after.data, __name__=start_after.path) if isinstance(start_after, StoredDoc)
                      else dict(start_after))
            cursor = {o.field: values.get(o.field) for o in spec.order_by}
            if "__name__" in cursor:
                key = cursor["__name__"]
                cursor["__name__"] = self._ref(key) if isinstance(key, str) and "/" in key else (
                    base.document(key) if spec.scope == "COLLECTION" and isinstance(key, str) else key)
        query = build(base, name, params, limit=limit, start_after=cursor)
        if keys_only:
            query = query.select([])
        return [StoredDoc(ref.path, data, version) for ref, data, version in stream_docs(query)]

    def scan(self, collection: str, *, limit: int, after: str | None = None,
             keys_only: bool = False) -> list[StoredDoc]:
        query = self.client.collection(collection).order_by("__name__")
        if after is not None:
            query = query.start_after({"__name__": self.client.collection(collection).document(after)})
        query = query.limit(limit)
        if keys_only:
            query = query.select([])
        return [StoredDoc(ref.path, data, version) for ref, data, version in stream_docs(query)]

    def children(self, path: str) -> Iterator[str]:
        # A path of an even number of segments names a collection (users/u/memory_items).
        if path.count("/") % 2 == 0:
            refs = self.client.collection(path).list_documents(page_size=500)
        else:
            refs = self._ref(path).collections()
        return (ref.id for ref in refs)

    # ------------------------------------------------------------------ writes
    def write(self, change: Change) -> Written:
        from google.api_core import exceptions as gexc

        tracing.annotate(**{"strata.change": change.name, "strata.items": len(change.writes)})
        if change.writes and change.writes[0].op == "purge":
            self._purge(change.writes[0].path)
            return Written(True)
        try:
            if change.transactional:
                return Written(fence.write(self.client, change, lambda t, w: stage(t, self._ref(w.path), w)))
            return self._batch(change)
        except gexc.NotFound as exc:  # an update of a missing document: nothing was written
            missing = ", ".join(w.path for w in change.writes if w.op == "update")
            raise NotFound(f"{change.name}: {missing} does not exist") from exc

    def _batch(self, change: Change) -> Written:
        if not change.writes:
            return Written(True)
        from google.api_core import exceptions as gexc

        batch = self.client.batch()
        for write in change.writes:
            stage(batch, self._ref(write.path), write)
        try:
            results = batch.commit()
        except gexc.Conflict as exc:  # a create of an existing document: nothing was written
            if isinstance(exc, gexc.Aborted) or not any(w.op == "create" for w in change.writes):
                raise
            return Written(False)
        # A server-side increment: the commit answers the field's value after it, so the new count
        # costs this one write (no transaction, so no lock for other writers of the document to wait on).
        return Written(True, {w.path: int(r.transform_results[0].integer_value)
                              for w, r in zip(change.writes, results, strict=True) if increments(w)})

    def _purge(self, path: str) -> None:
        # A path of an even number of segments names a collection (users/u/memory_items).
        ref = self.client.collection(path) if path.count("/") % 2 == 0 else self._ref(path)
        self.client.recursive_delete(ref)

    def swap(self, path: str, decide: Callable[[dict[str, Any] | None], tuple[T, dict[str, Any] | None]], *,
             seen: StoredDoc | None = None, exhausted: T) -> T:
        return conditional_swap(self.client, path, decide, seen=seen, exhausted=exhausted)

    def get_all_versioned(self, paths: Sequence[str]) -> dict[str, StoredDoc | None]:
        out: dict[str, StoredDoc | None] = dict.fromkeys(paths)
        if paths:
            for snap in self.client.get_all([self._ref(p) for p in dict.fromkeys(paths)]):
                if snap.exists:
                    out[snap.reference.path] = StoredDoc(snap.reference.path, snap.to_dict() or {}, snap.update_time)
        return out

    # ------------------------------------------------------------------ the apply's mechanics
    def _stage_body(self, body: Callable[[TransactionReads], tuple[T, Sequence[Write]]]) -> Callable[[Any, Any], T]:
        def staged(transaction: Any, reads: TransactionReads) -> T:
            value, writes = body(reads)
            for write in writes:
                stage(transaction, self._ref(write.path), write)
            return value

        return staged

    def _transact(self, uid: str, body: Callable[[TransactionReads], tuple[T, Sequence[Write]]], *,
                  what: str = "apply") -> T:
        """``body`` in one Firestore transaction, one at a time per user in this process."""
        try:
            with self._user_locks[zlib.crc32(uid.encode()) % len(self._user_locks)]:
                return transactions.run(self.client, self._stage_body(body), self.max_attempts)
        except StrataError:
            raise
        except Exception as exc:
            # Contention the store gave up on (Aborted, "Failed to commit transaction in N attempts")
            # or a transient RPC failure: nothing was committed, the caller may retry.
            from google.api_core import exceptions as gexc

            if isinstance(exc, gexc.Aborted | gexc.ServiceUnavailable | gexc.DeadlineExceeded) or (
                    isinstance(exc, ValueError) and "Failed to commit transaction" in str(exc)):
                raise RetryableError(f"the {what} transaction for this user was contended; retry",
                                     code="contended") from exc
            raise

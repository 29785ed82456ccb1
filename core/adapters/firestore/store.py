"""The Firestore implementation of :class:`core.ports.Store`: the one place services' reads and
writes meet the SDK.

Of the apply it keeps only the mechanics (:meth:`FirestoreStore._transact`): a Firestore
transaction, its reads decoded straight from the wire (:mod:`core.adapters.firestore.wire`), the
writes the unit of work returns, one transaction at a time per user in this process, and the SDK's
contention errors as :class:`core.errors.RetryableError`. What an apply reads and writes is decided
by :class:`core.domain.unit_of_work.UnitOfWork`.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from core import tracing
from core.adapters.firestore import fence, leases, transactions
from core.adapters.firestore.client import stream_docs
from core.adapters.firestore.queries import QUERIES, build
from core.domain.fence import AccountFence
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
    never on a set)."""
    from core.adapters.firestore.wire import set_document

    if write.op == "set" and not write.merge:
        set_document(writer, ref, write.data or {})
    elif write.op == "set":
        writer.set(ref, write.data or {}, merge=True)
    elif write.op == "update":
        writer.update(ref, write.data or {}, option=option)
    else:
        writer.delete(ref, option=option)


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
    def increment(self, path: str, field: str, data: dict[str, Any]) -> int:
        from google.cloud.firestore_v1 import Increment

        # A server-side transform: the commit answers the field's value after it, so the new count
        # costs this one write (no transaction, so no lock for other writers of the document to wait on).
        result = self._ref(path).set({**data, field: Increment(1)}, merge=True)
        return int(result.transform_results[0].integer_value)

    def create(self, path: str, data: dict[str, Any]) -> bool:
        from google.api_core.exceptions import AlreadyExists

        try:
            self._ref(path).create(data)
        except AlreadyExists:
            return False
        return True

    def commit(self, writes: Sequence[Write]) -> None:
        if not writes:
            return
        from google.api_core import exceptions as gexc

        batch = self.client.batch()
        for write in writes:
            stage(batch, self._ref(write.path), write)
        try:
            batch.commit()
        except gexc.NotFound as exc:  # an update of a missing document: nothing was written
            missing = ", ".join(w.path for w in writes if w.op == "update")
            raise NotFound(f"{missing} does not exist") from exc

    def update_if(self, path: str, condition: Callable[[dict[str, Any] | None], bool], data: dict[str, Any],
                  *, seen: StoredDoc | None = None) -> bool:
        if seen is not None:
            return condition(seen.data) and self._update_unchanged(seen, data)

        def run(transaction: Any, reads: TransactionReads) -> bool:
            if not condition(reads.get_all([path])[path]):
                return False
            transaction.set(self._ref(path), data, merge=True)
            return True

        return bool(transactions.run(self.client, run))

    def _update_unchanged(self, doc: StoredDoc, data: dict[str, Any]) -> bool:
        from google.api_core import exceptions as gexc

        try:
            option = self.client.write_option(last_update_time=doc.version) if doc.version is not None else None
            self._ref(doc.path).update(data, option=option)
        except (gexc.FailedPrecondition, gexc.NotFound):
            return False
        return True

    def delete_tree(self, path: str) -> None:
        # A path of an even number of segments names a collection (users/u/memory_items).
        ref = self.client.collection(path) if path.count("/") % 2 == 0 else self._ref(path)
        self.client.recursive_delete(ref)

    # ------------------------------------------------------------------ fence and leases
    def read_fence(self, uid: str) -> AccountFence:
        return fence.read(self.client, uid)

    def fenced_write(self, uid: str, writes: Sequence[tuple[str, dict[str, Any], bool]], *,
                     guard: str | None = None,
                     refuse: Callable[[dict[str, Any] | None], bool] | None = None) -> bool:
        return fence.write(self.client, uid, [(self._ref(p), data, merge) for p, data, merge in writes],
                           guard=self._ref(guard) if guard is not None else None, refuse=refuse)

    def take_lease(self, path: str, holder: str, ttl: timedelta, *, mark_dirty: bool = False,
                   seen: Mapping[str, StoredDoc | None] | None = None) -> bool:
        return leases.take(self.client, self._ref(path), holder, self.clock, ttl, mark_dirty=mark_dirty,
                           first=leases.seen(seen, path))

    def release_lease(self, path: str, holder: str, ttl: timedelta, *, honour_dirty: bool = False,
                      seen: Mapping[str, StoredDoc | None] | None = None) -> bool:
        return leases.release(self.client, self._ref(path), holder, self.clock, ttl, honour_dirty=honour_dirty,
                              first=leases.seen(seen, path))

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

"""The Firestore implementation of :class:`core.ports.Store`: the one place services' reads and
writes meet the SDK."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from core.adapters.firestore import fence, leases
from core.adapters.firestore.apply import ApplyEngine, head_sequence, journaled
from core.adapters.firestore.client import stream_docs
from core.adapters.firestore.queries import QUERIES, build
from core.domain.fence import AccountFence
from core.domain.plan import ApplyResult, ItemQuery, Planner
from core.errors import NotFound
from core.ports import Cursor, Store, StoredDoc, Write


class FirestoreStore(Store):
    def __init__(self, client: Any, engine: ApplyEngine, clock: Callable[[], datetime]) -> None:
        self.client = client
        self.engine = engine
        self.clock = clock

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

    def document_ids(self, collection: str) -> Iterator[str]:
        for ref in self.client.collection(collection).list_documents(page_size=500):
            yield ref.id

    def has_children(self, path: str) -> bool:
        return any(True for _ in self._ref(path).collections())

    # ------------------------------------------------------------------ writes
    def set(self, path: str, data: dict[str, Any], *, merge: bool = False) -> None:
        self._ref(path).set(data, merge=merge)

    def update(self, path: str, data: dict[str, Any]) -> None:
        from google.api_core import exceptions as gexc

        try:
            self._ref(path).update(data)
        except gexc.NotFound as exc:
            raise NotFound(f"{path} does not exist") from exc

    def delete(self, path: str) -> None:
        self._ref(path).delete()

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
        from core.adapters.firestore.wire import set_document

        batch = self.client.batch()
        for write in writes:
            ref = self._ref(write.path)
            if write.op == "set" and not write.merge:
                set_document(batch, ref, write.data or {})
            elif write.op == "set":
                batch.set(ref, write.data or {}, merge=True)
            elif write.op == "update":
                batch.update(ref, write.data or {})
            else:
                batch.delete(ref)
        batch.commit()

    def update_if_unchanged(self, doc: StoredDoc, data: dict[str, Any]) -> bool:
        from google.api_core import exceptions as gexc

        try:
            option = self.client.write_option(last_update_time=doc.version) if doc.version is not None else None
            self._ref(doc.path).update(data, option=option)
        except (gexc.FailedPrecondition, gexc.NotFound):
            return False
        return True

    def update_if(self, path: str, condition: Callable[[dict[str, Any] | None], bool],
                  data: dict[str, Any]) -> bool:
        from google.cloud import firestore

        ref = self._ref(path)

        @firestore.transactional
        def run(transaction: Any) -> bool:
            snap = ref.get(transaction=transaction)
            if not condition((snap.to_dict() or {}) if snap.exists else None):
                return False
            transaction.set(ref, data, merge=True)
            return True

        return bool(run(self.client.transaction()))

    def delete_tree(self, path: str) -> None:
        self.client.recursive_delete(self._ref(path))

    # ------------------------------------------------------------------ fence and leases
    def read_fence(self, uid: str) -> AccountFence:
        return fence.read(self.client, uid)

    def fenced_write(self, uid: str, writes: Sequence[tuple[str, dict[str, Any], bool]], *,
                     guard: str | None = None,
                     refuse: Callable[[dict[str, Any] | None], bool] | None = None) -> bool:
        return fence.write(self.client, uid, [(self._ref(p), data, merge) for p, data, merge in writes],
                           guard=self._ref(guard) if guard is not None else None, refuse=refuse)

    def take_lease(self, path: str, holder: str, ttl: timedelta, *, mark_dirty: bool = False) -> bool:
        return leases.take(self.client, self._ref(path), holder, self.clock, ttl, mark_dirty=mark_dirty)

    def release_lease(self, path: str, holder: str, ttl: timedelta, *, honour_dirty: bool = False) -> bool:
        return leases.release(self.client, self._ref(path), holder, self.clock, ttl, honour_dirty=honour_dirty)

    def renew_lease(self, path: str, holder: str, ttl: timedelta) -> bool:
        return leases.renew(self.client, self._ref(path), holder, self.clock, ttl)

    def get_versioned(self, path: str) -> StoredDoc | None:
        snap = self._ref(path).get()
        return StoredDoc(path, snap.to_dict() or {}, snap.update_time) if snap.exists else None

    def commit_unchanged(self, expected: Mapping[str, Any], writes: Sequence[Write]) -> dict[str, Any] | None:
        from google.api_core import exceptions as gexc

        from core.adapters.firestore.wire import set_document

        written = {w.path for w in writes}
        if not writes or any(v is None for v in expected.values()) or not set(expected) <= written:
            return None
        batch = self.client.batch()
        for write in writes:
            ref = self._ref(write.path)
            option = (self.client.write_option(last_update_time=expected[write.path])
                      if write.path in expected else None)
            if write.op == "set":
                if option is not None:
                    return None  # a set takes no update-time precondition
                if write.merge:
                    batch.set(ref, write.data or {}, merge=True)
                else:
                    set_document(batch, ref, write.data or {})
            elif write.op == "update":
                batch.update(ref, write.data or {}, option=option)
            else:
                batch.delete(ref, option=option)
        try:
            results = batch.commit()
        except (gexc.FailedPrecondition, gexc.NotFound, gexc.Aborted, gexc.Conflict):
            return None  # one of them changed (or went) since: nothing was written
        return {w.path: r.update_time for w, r in zip(writes, results, strict=True) if w.op != "delete"}

    def commit_if(self, guards: Mapping[str, Callable[[dict[str, Any] | None], bool]],
                  writes: Sequence[Write]) -> bool:
        from google.cloud import firestore

        from core.adapters.firestore.wire import get_all, set_document

        refs = {path: self._ref(path) for path in guards}

        @firestore.transactional
        def run(transaction: Any) -> bool:
            snaps = {s.reference.path: s for s in get_all(self.client, list(refs.values()), transaction)}
            for path, holds in guards.items():
                snap = snaps.get(refs[path].path)
                if not holds(snap.to_dict() if snap is not None and snap.exists else None):
                    return False
            for write in writes:
                ref = self._ref(write.path)
                if write.op == "set" and not write.merge:
                    set_document(transaction, ref, write.data or {})
                elif write.op == "set":
                    transaction.set(ref, write.data or {}, merge=True)
                elif write.op == "update":
                    transaction.update(ref, write.data or {})
                else:
                    transaction.delete(ref)
            return True

        return bool(run(self.client.transaction()))

    # ------------------------------------------------------------------ apply
    def apply(self, uid: str, kind: str, key: Any, planner: Planner, *, item_ids: Iterable[str] = (),
              doc_paths: Iterable[str] = (), actor: str = "system", bypass_account_fence: bool = False,
              now: datetime | None = None, item_queries: Mapping[str, ItemQuery] | None = None,
              follow_lineage: bool = False) -> ApplyResult:
        return self.engine.apply(uid, kind, key, planner, item_ids=item_ids, doc_paths=doc_paths, actor=actor,
                                 bypass_account_fence=bypass_account_fence, now=now, item_queries=item_queries,
                                 follow_lineage=follow_lineage)

    def head_sequence(self, uid: str) -> int:
        return head_sequence(self.client, uid)

    def journaled(self, uid: str, kind: str, key: Any) -> dict[str, Any] | None:
        return journaled(self.client, uid, kind, key)

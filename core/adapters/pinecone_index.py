"""VectorIndex on the official ``pinecone`` SDK, the same code for real Pinecone and the local endpoint.

Vectors are stored under ``ProjectionDoc.provider_id`` with metadata ``uid``, ``memory_id``,
``layer`` and ``revision`` only: content stays in Firestore and every hit is hydrated from there.

Cleanup is metadata-authoritative: before an upsert, and for every delete or purge, the adapter
collects the ids whose metadata matches (uid, memory_id) or uid with ``fetch_by_metadata`` and deletes
them *by id*. That removes a legacy ``{uid}-{memory_id}`` or bare-id vector too, and it works on
serverless Pinecone indexes, which do not accept delete-by-filter. A failure anywhere raises, so the
outbox retries instead of acknowledging a partial projection.

The original kept its vectors (``{uid}-{memory_id}``) in a namespace of its own (``ns2``): with a
``legacy_namespace`` set and different from this deployment's, every delete and the account wipe's
purge also clear that namespace — the ``{uid}-{memory_id}`` ids by id and whatever its metadata ties
to the memory or the user — so a legacy vector goes whichever namespace the deployment writes to. A
rebuild's purge (``purge_user``) leaves it: the vectors of rows that still exist stay for the
original's reader (the spec's rollback floor).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pinecone import Pinecone
from pinecone.errors.exceptions import (
    ApiError,
    PineconeConnectionError,
    PineconeError,
    PineconeTimeoutError,
    PineconeValueError,
)

from core import tracing
from core.errors import PermanentError, ProviderUnavailable
from core.ports import Hit, ProjectionDoc, ProviderRecord, VectorIndex

UPSERT_BATCH = 100
DELETE_BATCH = 1000
FETCH_PAGE = 1000
MEMORY_IDS_PER_FILTER = 100

T = TypeVar("T")


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _translate(exc: Exception, action: str) -> Exception:
    """Turn an SDK exception into the project's retryable / permanent errors."""
    if isinstance(exc, (PineconeConnectionError, PineconeTimeoutError)):
        return ProviderUnavailable(f"pinecone unreachable during {action}: {exc}")
    if isinstance(exc, ApiError):
        status = getattr(exc, "status_code", 0) or 0
        if status in (408, 429) or status >= 500:
            return ProviderUnavailable(f"pinecone {status} during {action}: {exc}")
        return PermanentError(f"pinecone refused {action} ({status}): {exc}")
    if isinstance(exc, PineconeValueError):
        return PermanentError(f"invalid pinecone {action}: {exc}")
    if isinstance(exc, PineconeError):
        return ProviderUnavailable(f"pinecone failed during {action}: {exc}")
    return ProviderUnavailable(f"pinecone transport failure during {action}: {exc}")


@tracing.spanned("vector_index")
class PineconeIndex(VectorIndex):
    """One Pinecone index host and one namespace (a namespace per deployment)."""

    def __init__(self, api_key: str, host: str, namespace: str, *, timeout_s: float = 20.0,
                 legacy_namespace: str = "") -> None:
        if not host:
            raise PermanentError("PineconeIndex needs an index host (STRATA_PINECONE_HOST)")
        self.host = host
        self.namespace = namespace
        self.legacy_namespace = legacy_namespace if legacy_namespace != namespace else ""
        # The SDK retries a connection error or 5xx itself (3 retries, ~1.5 s in all; its REST index
        # client takes no retry settings); the outbox's backoff handles anything longer.
        self._index = Pinecone(api_key=api_key or "local", timeout=timeout_s).Index(host=host)
        self._dimension: int | None = None

    # ------------------------------------------------------------------ helpers
    def _call(self, action: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (PineconeError, OSError) as exc:
            raise _translate(exc, action) from exc
        except Exception as exc:  # httpx errors not wrapped by the SDK
            if type(exc).__module__.startswith(("httpx", "httpcore")):
                raise _translate(exc, action) from exc
            raise

    def _ids_matching(self, flt: Mapping[str, Any], namespace: str | None = None) -> list[str]:
        ids: list[str] = []
        token: str | None = None
        while True:
            page = self._call(
                "fetch_by_metadata",
                self._index.fetch_by_metadata,
                filter=dict(flt),
                namespace=self.namespace if namespace is None else namespace,
                limit=FETCH_PAGE,
                pagination_token=token,
            )
            ids.extend(page.vectors.keys())
            token = page.pagination.next if page.pagination is not None else None
            if not token:
                return ids

    def _delete_ids(self, ids: Sequence[str], namespace: str | None = None) -> None:
        for chunk in _chunks(list(ids), DELETE_BATCH):
            self._call("delete", self._index.delete, ids=list(chunk),
                       namespace=self.namespace if namespace is None else namespace)

    def _delete_memories(self, uid: str, memory_ids: Sequence[str], namespace: str | None = None) -> None:
        unique = sorted(set(memory_ids))
        for chunk in _chunks(unique, MEMORY_IDS_PER_FILTER):
            flt = {"$and": [{"uid": {"$eq": uid}}, {"memory_id": {"$in": list(chunk)}}]}
            self._delete_ids(self._ids_matching(flt, namespace), namespace)

    def _purge(self, uid: str, namespace: str | None = None) -> None:
        # Loop: a page is deleted before the next is fetched, so re-query until nothing is left.
        while True:
            ids = self._ids_matching({"uid": {"$eq": uid}}, namespace)
            if not ids:
                return
            self._delete_ids(ids, namespace)

    # ------------------------------------------------------------------ port
    def ensure_ready(self) -> None:
        stats = self._call("describe_index_stats", self._index.describe_index_stats)
        self._dimension = stats.dimension

    @property
    def dimension(self) -> int | None:
        if self._dimension is None:
            self.ensure_ready()
        return self._dimension

    def upsert(self, docs: Sequence[ProjectionDoc], vectors: Sequence[Sequence[float]]) -> None:
        if len(docs) != len(vectors):
            raise PermanentError(f"{len(docs)} docs but {len(vectors)} vectors")
        if not docs:
            return
        by_uid: dict[str, list[str]] = {}
        for doc in docs:
            by_uid.setdefault(doc.uid, []).append(doc.memory_id)
        for uid, memory_ids in by_uid.items():
            self._delete_memories(uid, memory_ids)
        records = [
            {
                "id": doc.provider_id,
                "values": [float(x) for x in vector],
                "metadata": {
                    "uid": doc.uid,
                    "memory_id": doc.memory_id,
                    "layer": doc.layer,
                    "revision": int(doc.revision),
                    "capture_device_ids": list(doc.capture_device_ids),
                },
            }
            for doc, vector in zip(docs, vectors, strict=True)
        ]
        for chunk in _chunks(records, UPSERT_BATCH):
            result = self._call("upsert", self._index.upsert, vectors=list(chunk), namespace=self.namespace)
            if getattr(result, "upserted_count", len(chunk)) != len(chunk):
                raise ProviderUnavailable(
                    f"pinecone upserted {result.upserted_count} of {len(chunk)} vectors"
                )

    def delete(self, uid: str, memory_ids: Sequence[str]) -> None:
        if memory_ids:
            self._delete_memories(uid, memory_ids)
            if self.legacy_namespace:
                self._delete_ids([f"{uid}-{m}" for m in sorted(set(memory_ids))], self.legacy_namespace)
                self._delete_memories(uid, memory_ids, self.legacy_namespace)

    def purge_user(self, uid: str) -> None:
        self._purge(uid)

    def purge_account(self, uid: str) -> None:
        self._purge(uid)
        if self.legacy_namespace:
            self._purge(uid, self.legacy_namespace)

    def search(self, uid: str, vector: Sequence[float], *, layers: Sequence[str], limit: int,
               devices: Sequence[str] | None = None) -> list[Hit]:
        if limit <= 0 or not layers or (devices is not None and not devices):
            return []
        clauses: list[dict[str, Any]] = [{"uid": {"$eq": uid}}, {"layer": {"$in": list(layers)}}]
        if devices is not None:  # a list field matches when any of its values is in the list
            clauses.append({"capture_device_ids": {"$in": sorted(devices)}})
        flt = {"$and": clauses}
        response = self._call(
            "query",
            self._index.query,
            vector=[float(x) for x in vector],
            top_k=min(limit, 10_000),
            filter=flt,
            include_metadata=True,
            namespace=self.namespace,
        )
        hits = []
        for match in response.matches:
            meta = match.metadata or {}
            memory_id = meta.get("memory_id")
            if not memory_id or meta.get("uid") != uid:
                continue  # never hand back a row we cannot hydrate safely
            hits.append(Hit(memory_id=str(memory_id), score=float(match.score), provider_id=match.id))
        return hits

    def provider_ids(self, uid: str) -> set[str]:
        return set(self._ids_matching({"uid": {"$eq": uid}}))

    def records(self, uid: str | None) -> Iterator[list[ProviderRecord]]:
        flt = {"uid": {"$eq": uid}} if uid is not None else {"uid": {"$exists": True}}
        token: str | None = None
        while True:
            page = self._call("fetch_by_metadata", self._index.fetch_by_metadata, filter=flt,
                              namespace=self.namespace, limit=FETCH_PAGE, pagination_token=token)
            rows = []
            for vector_id, vector in page.vectors.items():
                meta = vector.metadata or {}
                revision = meta.get("revision")
                rows.append(ProviderRecord(provider_id=vector_id, uid=str(meta.get("uid", "")),
                                           memory_id=str(meta.get("memory_id", "")),
                                           revision=int(revision) if revision is not None else None))
            if rows:
                yield rows
            token = page.pagination.next if page.pagination is not None else None
            if not token:
                return


__all__ = ["PineconeIndex"]

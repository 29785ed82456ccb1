"""The local endpoint's vector store: one dense index of a fixed dimension (cosine), namespaces
persisted as a journal folded into a snapshot, and the data-plane operations with Pinecone's checks."""

from __future__ import annotations

import base64
import json
import math
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

from core.errors import ApiFailure
from strata_dev.localstack.pinecone_filters import MISSING, compile_filter, evaluate

MAX_TOP_K = 10_000
MAX_ID_LENGTH = 512
DEFAULT_LIST_LIMIT = 100
DEFAULT_FETCH_BY_METADATA_LIMIT = 100


def _namespace_file(root: Path, namespace: str, suffix: str = ".json") -> Path:
    return root / f"ns-{quote(namespace, safe='')}{suffix}"


class _Namespace:
    """One namespace: ids, metadata and a row-per-vector matrix, so a query is one matrix product.

    Rows are dense: deleting a record moves the last row into its slot. Field columns used by
    filters are cached until the next mutation.
    """

    def __init__(self, dimension: int) -> None:
        self.ids: list[str] = []
        self.rows: dict[str, int] = {}
        self.metadata: list[dict[str, Any]] = []
        self.vectors = np.zeros((0, dimension))
        self.norms = np.zeros(0)
        self._columns: dict[str, list[Any]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, vid: str) -> bool:
        return vid in self.rows

    def put(self, vid: str, values: list[float], metadata: dict[str, Any]) -> None:
        row = self.rows.get(vid)
        if row is None:
            row = len(self.ids)
            if row == len(self.vectors):
                self._grow()
            self.ids.append(vid)
            self.metadata.append(metadata)
            self.rows[vid] = row
        else:
            self.metadata[row] = metadata
        self.vectors[row] = values
        self.norms[row] = math.sqrt(float(self.vectors[row] @ self.vectors[row]))
        self._columns.clear()

    def _grow(self) -> None:
        capacity = max(64, 2 * len(self.vectors))
        vectors = np.zeros((capacity, self.vectors.shape[1]))
        vectors[:len(self.vectors)] = self.vectors
        norms = np.zeros(capacity)
        norms[:len(self.norms)] = self.norms
        self.vectors, self.norms = vectors, norms

    def remove(self, vid: str) -> bool:
        row = self.rows.pop(vid, None)
        if row is None:
            return False
        last = len(self.ids) - 1
        if row != last:
            moved = self.ids[last]
            self.ids[row], self.metadata[row] = moved, self.metadata[last]
            self.vectors[row], self.norms[row] = self.vectors[last], self.norms[last]
            self.rows[moved] = row
        self.ids.pop()
        self.metadata.pop()
        self._columns.clear()
        return True

    def values(self, vid: str) -> list[float]:
        return list(self.vectors[self.rows[vid]].tolist())

    def record(self, vid: str) -> dict[str, Any]:
        return {"id": vid, "values": self.values(vid), "metadata": self.metadata[self.rows[vid]]}

    def column(self, field: str) -> list[Any]:
        cached = self._columns.get(field)
        if cached is None:
            cached = self._columns[field] = [m.get(field, MISSING) for m in self.metadata]
        return cached

    def selected(self, flt: Mapping[str, Any] | None) -> np.ndarray:
        """Row numbers of the records matching ``flt`` (all rows for an empty filter)."""
        if not flt:
            return np.arange(len(self.ids))
        return np.flatnonzero(evaluate(compile_filter(flt), self.column, len(self.ids)))

    def cosine(self, probe: list[float]) -> np.ndarray:
        """Cosine similarity of ``probe`` with every row, as dot / (|a| |b|)."""
        count = len(self.ids)
        vector = np.asarray(probe, dtype=float)
        norm = math.sqrt(math.fsum(x * x for x in probe))
        return np.asarray(self.vectors[:count] @ vector / (self.norms[:count] * norm))

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {vid: {"values": self.values(vid), "metadata": self.metadata[row]} for vid, row in self.rows.items()}


class VectorStore:
    """Namespaced vectors in memory, each namespace persisted as a JSON snapshot plus a journal.

    Every mutation appends one JSON line to ``ns-<name>.journal`` (flushed and fsynced) before it
    is answered; when the journal outgrows the snapshot it is folded into ``ns-<name>.json`` with an
    atomic replace, and on shutdown every journal is folded. Loading replays the journal over the
    snapshot; the operations are idempotent, so a crash between the two steps loses nothing, and a
    torn last line (a crash mid-append) is ignored. Rewriting the whole namespace after every
    mutation, as this endpoint once did, made an upsert cost seconds at 10,000 vectors.
    """

    COMPACT_MIN_BYTES = 8 << 20

    def __init__(self, data_dir: Path, dimension: int) -> None:
        self.dimension = dimension
        self.root = data_dir / "namespaces"
        self.root.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.namespaces: dict[str, _Namespace] = {}
        self._journal_bytes: dict[str, int] = {}
        self._snapshot_bytes: dict[str, int] = {}
        names = {unquote(p.name[3:].rsplit(".", 1)[0]) for p in self.root.glob("ns-*") if p.suffix in (".json",
                                                                                                      ".journal")}
        for name in sorted(names):
            self._load(name)

    # ---- persistence
    def _load(self, name: str) -> None:
        space = _Namespace(self.dimension)
        snapshot = _namespace_file(self.root, name)
        if snapshot.exists():
            for vid, rec in json.loads(snapshot.read_text(encoding="utf-8"))["vectors"].items():
                space.put(vid, rec["values"], rec["metadata"])
            self._snapshot_bytes[name] = snapshot.stat().st_size
        journal = _namespace_file(self.root, name, ".journal")
        if journal.exists():
            lines = journal.read_text(encoding="utf-8").splitlines()
            for position, line in enumerate(lines):
                try:
                    entry = json.loads(line)
                except ValueError:
                    if position == len(lines) - 1:
                        break  # torn by a crash mid-append: that mutation was never answered
                    raise
                self._replay(space, entry)
            self._journal_bytes[name] = journal.stat().st_size
        if len(space):
            self.namespaces[name] = space

    @staticmethod
    def _replay(space: _Namespace, entry: Mapping[str, Any]) -> None:
        if entry.get("clear"):
            for vid in list(space.ids):
                space.remove(vid)
        for vid in entry.get("delete", []):
            space.remove(vid)
        for vid, rec in (entry.get("put") or {}).items():
            space.put(vid, rec["values"], rec["metadata"])

    def _record(self, namespace: str, entry: Mapping[str, Any]) -> None:
        """Append one mutation to the namespace's journal; fold it into the snapshot when large."""
        space = self.namespaces.get(namespace)
        if space is not None and not len(space):
            del self.namespaces[namespace]
            space = None
        if space is None:  # empty: nothing to keep
            _namespace_file(self.root, namespace).unlink(missing_ok=True)
            _namespace_file(self.root, namespace, ".journal").unlink(missing_ok=True)
            self._journal_bytes.pop(namespace, None)
            self._snapshot_bytes.pop(namespace, None)
            return
        line = (json.dumps(entry) + "\n").encode("utf-8")
        with _namespace_file(self.root, namespace, ".journal").open("ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self._journal_bytes[namespace] = self._journal_bytes.get(namespace, 0) + len(line)
        if self._journal_bytes[namespace] > max(self.COMPACT_MIN_BYTES, self._snapshot_bytes.get(namespace, 0)):
            self._compact(namespace)

    def _compact(self, namespace: str) -> None:
        space = self.namespaces.get(namespace)
        target = _namespace_file(self.root, namespace)
        if space is not None:
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".part")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"namespace": namespace, "vectors": space.snapshot()}, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
            self._snapshot_bytes[namespace] = target.stat().st_size
        _namespace_file(self.root, namespace, ".journal").unlink(missing_ok=True)
        self._journal_bytes.pop(namespace, None)

    def close(self) -> None:
        """Fold every journal into its snapshot (a clean restart then reads snapshots only)."""
        with self.lock:
            for namespace in list(self._journal_bytes):
                self._compact(namespace)

    # ---- validation
    def _check_values(self, vid: str, values: Any) -> list[float]:
        # Parsed JSON numbers are exactly int or float (bool is its own type): one C-level pass.
        kinds = set(map(type, values)) if isinstance(values, list) else {None}
        if not kinds <= {int, float}:
            raise ApiFailure(400, f"Vector {vid!r}: values must be an array of numbers")
        if len(values) != self.dimension:
            raise ApiFailure(
                400, f"Vector dimension {len(values)} does not match the dimension of the index {self.dimension}"
            )
        if not any(values):
            raise ApiFailure(400, "Dense vectors must contain at least one non-zero value")
        return values if int not in kinds else [float(v) for v in values]

    @staticmethod
    def _check_metadata(vid: str, metadata: Any) -> dict[str, Any]:
        if metadata is None:
            return {}
        if not isinstance(metadata, dict):
            raise ApiFailure(400, f"Vector {vid!r}: metadata must be an object")
        for key, value in metadata.items():
            ok = isinstance(value, (str, int, float, bool)) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            )
            if not ok:
                raise ApiFailure(400, f"Vector {vid!r}: metadata value of {key!r} must be a string, number, "
                                 "boolean or list of strings")
        return dict(metadata)

    @staticmethod
    def _check_id(vid: Any) -> str:
        if not isinstance(vid, str) or not vid or len(vid) > MAX_ID_LENGTH:
            raise ApiFailure(400, f"Vector id must be a non-empty string of at most {MAX_ID_LENGTH} characters")
        return vid

    def _space(self, namespace: str) -> _Namespace:
        space = self.namespaces.get(namespace)
        if space is None:
            space = self.namespaces[namespace] = _Namespace(self.dimension)
        return space

    # ---- operations
    def upsert(self, namespace: str, vectors: Any) -> int:
        if not isinstance(vectors, list) or not vectors:
            raise ApiFailure(400, "vectors must be a non-empty array")
        staged: dict[str, dict[str, Any]] = {}
        for raw in vectors:
            if not isinstance(raw, dict):
                raise ApiFailure(400, "each vector must be an object")
            vid = self._check_id(raw.get("id"))
            staged[vid] = {
                "values": self._check_values(vid, raw.get("values")),
                "metadata": self._check_metadata(vid, raw.get("metadata")),
            }
        with self.lock:
            space = self._space(namespace)
            for vid, rec in staged.items():
                space.put(vid, rec["values"], rec["metadata"])
            self._record(namespace, {"put": staged})
        return len(vectors)

    def update(self, namespace: str, body: Mapping[str, Any]) -> int:
        vid = self._check_id(body.get("id"))
        with self.lock:
            space = self.namespaces.get(namespace)
            if space is None or vid not in space:
                return 0
            values = self._check_values(vid, body["values"]) if body.get("values") is not None else space.values(vid)
            metadata = space.metadata[space.rows[vid]]
            if body.get("setMetadata") is not None:
                metadata = {**metadata, **self._check_metadata(vid, body["setMetadata"])}
            space.put(vid, values, metadata)
            self._record(namespace, {"put": {vid: {"values": values, "metadata": metadata}}})
        return 1

    def delete(self, namespace: str, body: Mapping[str, Any]) -> None:
        with self.lock:
            space = self.namespaces.get(namespace) or _Namespace(self.dimension)
            if body.get("deleteAll"):
                doomed = list(space.ids)
            elif body.get("ids") is not None:
                doomed = [vid for vid in body["ids"] if vid in space]
            elif body.get("filter"):
                doomed = [space.ids[row] for row in space.selected(body["filter"])]
            else:
                raise ApiFailure(400, "delete needs ids, filter or deleteAll")
            for vid in doomed:
                space.remove(vid)
            if namespace in self.namespaces:
                self._record(namespace, {"clear": True} if body.get("deleteAll") else {"delete": doomed})

    def query(self, namespace: str, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        top_k = body.get("topK")
        if not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise ApiFailure(400, f"topK must be an integer between 1 and {MAX_TOP_K}")
        with self.lock:
            space = self.namespaces.get(namespace) or _Namespace(self.dimension)
            if body.get("vector") is not None:
                probe = self._check_values("<query>", body["vector"])
            elif body.get("id") is not None:
                if body["id"] not in space:
                    return []
                probe = space.values(body["id"])
            else:
                raise ApiFailure(400, "query needs a vector or an id")
            rows = space.selected(body.get("filter"))
            if not len(rows):
                return []
            scores = space.cosine(probe)[rows]
            if len(rows) > top_k:  # keep every row tied with the k-th best, then order exactly
                kth = np.partition(scores, len(scores) - top_k)[len(scores) - top_k]
                keep = scores >= kth
                rows, scores = rows[keep], scores[keep]
            ranked = sorted(zip(scores.tolist(), (space.ids[r] for r in rows), strict=True),
                            key=lambda item: (-item[0], item[1]))[:top_k]
            out = []
            for score, vid in ranked:
                match: dict[str, Any] = {"id": vid, "score": score, "values": []}
                if body.get("includeValues"):
                    match["values"] = space.values(vid)
                if body.get("includeMetadata"):
                    match["metadata"] = space.metadata[space.rows[vid]]
                out.append(match)
            return out

    def fetch(self, namespace: str, ids: list[str]) -> dict[str, Any]:
        with self.lock:
            space = self.namespaces.get(namespace) or _Namespace(self.dimension)
            return {vid: space.record(vid) for vid in ids if vid in space}

    def fetch_by_metadata(self, namespace: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
        if not body.get("filter"):
            raise ApiFailure(400, "fetch_by_metadata needs a non-empty filter")
        limit = body.get("limit") or DEFAULT_FETCH_BY_METADATA_LIMIT
        with self.lock:
            space = self.namespaces.get(namespace) or _Namespace(self.dimension)
            ids = sorted(space.ids[row] for row in space.selected(body["filter"]))
            page, token = _page(ids, limit, body.get("paginationToken"))
            return {vid: space.record(vid) for vid in page}, token

    def list_ids(self, namespace: str, prefix: str, limit: int, token: str | None) -> tuple[list[str], str | None]:
        with self.lock:
            space = self.namespaces.get(namespace) or _Namespace(self.dimension)
            ids = sorted(vid for vid in space.ids if vid.startswith(prefix))
        return _page(ids, limit, token)

    def stats(self, flt: Mapping[str, Any] | None) -> dict[str, Any]:
        with self.lock:
            counts = {name: len(space.selected(flt)) for name, space in self.namespaces.items() if len(space)}
        return {
            "namespaces": {name: {"vectorCount": n} for name, n in counts.items()},
            "dimension": self.dimension,
            "indexFullness": 0.0,
            "totalVectorCount": sum(counts.values()),
            "metric": "cosine",
            "vectorType": "dense",
        }


def _page(ids: list[str], limit: int, token: str | None) -> tuple[list[str], str | None]:
    """A page of sorted ids after the id encoded in ``token``; the next token when more remain."""
    if not isinstance(limit, int) or limit < 1:
        raise ApiFailure(400, "limit must be a positive integer")
    if token:
        try:
            after = base64.urlsafe_b64decode(token.encode()).decode()
        except ValueError as exc:
            raise ApiFailure(400, "invalid paginationToken") from exc
        ids = [vid for vid in ids if vid > after]
    page = ids[:limit]
    more = len(ids) > limit
    return page, base64.urlsafe_b64encode(page[-1].encode()).decode() if more else None

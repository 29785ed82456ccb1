"""A small Pinecone-data-plane-compatible endpoint for the local stack.

No local Pinecone server exists, so this one speaks enough of the data-plane REST API that the
official ``pinecone`` SDK (``Pinecone(api_key=...).Index(host="http://127.0.0.1:PORT")``) runs
unchanged against it: upsert, query (by vector or id), fetch, fetch by metadata, list, update,
delete (ids / filter / deleteAll) and describe_index_stats, with the metadata filter operators
``$eq $ne $in $nin $gt $gte $lt $lte $exists $and $or`` and implicit equality.

Guarantees:

* one dense index of a fixed ``dimension``, cosine metric; a vector of another dimension, or an
  all-zero vector, is refused with ``400`` as Pinecone does;
* namespaces are independent; each is persisted under ``<data-dir>/namespaces/`` (a journal line
  per mutation, fsynced before the answer, folded into ``ns-<name>.json`` by atomic replace) and
  loaded again on start;
* a query scores the whole namespace with one matrix product (numpy) and applies metadata filters
  column by column, so 10,000 vectors answer in milliseconds rather than half a second of Python;
* every request is appended to ``<data-dir>/requests.log`` as one JSON line (method, path with
  query string, parsed body) so tests can prove exactly what a client sent;
* ``GET /healthz`` answers without an API key; everything else needs an ``Api-Key`` header (and the
  configured key, when one was given).

Run it with ``python -m core.localstack.pinecone_local --port P --data-dir D --dimension 384`` or
start it in-process with :func:`serve`.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import numpy as np

MAX_TOP_K = 10_000
MAX_ID_LENGTH = 512
DEFAULT_LIST_LIMIT = 100
DEFAULT_FETCH_BY_METADATA_LIMIT = 100


class ApiFailure(Exception):
    """An error answered to the client in Pinecone's JSON error shape."""

    GRPC_CODES = {400: 3, 401: 16, 404: 5, 409: 6, 413: 8, 500: 13}

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def body(self) -> dict[str, Any]:
        return {"code": self.GRPC_CODES.get(self.status, 2), "message": self.message, "details": []}


# --------------------------------------------------------------------------- metadata filters
_COMPARISONS = {"$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"}
_NUMERIC = {
    "$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b,
}


class _Missing:
    """The value of a metadata field a record does not have."""


MISSING: Any = _Missing()


@dataclass(frozen=True)
class _Leaf:
    """One field condition, tested against that field's value in each record (``MISSING`` if absent)."""

    field: str
    test: Callable[[Any], bool]


@dataclass(frozen=True)
class _Group:
    """``$and`` / ``$or`` of parts; a filter object is the ``$and`` of its keys (none: everything)."""

    op: str
    parts: tuple[_Leaf | _Group, ...]


def _holds(stored: Any, operand: Any) -> bool:
    """``operand`` equals the stored value, or is one of a stored list of strings."""
    return operand in stored if isinstance(stored, list) else (operand is stored or operand == stored)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _predicate(field: str, op: str, operand: Any) -> Callable[[Any], bool]:
    if op not in _COMPARISONS:
        raise ApiFailure(400, f"unsupported filter operator {op!r} on field {field!r}")
    if op == "$exists":
        wanted = bool(operand)
        return lambda v: (v is not MISSING) is wanted
    if op in ("$in", "$nin"):
        if not isinstance(operand, list):
            raise ApiFailure(400, f"{op} on field {field!r} takes an array")
        try:
            choices: Any = frozenset(operand)  # same answers as list membership for hashable values
        except TypeError:
            choices = operand

        def hit(v: Any) -> bool:
            if v is MISSING:
                return False
            return any(s in choices for s in v) if isinstance(v, list) else v in choices

        return hit if op == "$in" else (lambda v: not hit(v))
    if op == "$eq":
        return lambda v: v is not MISSING and _holds(v, operand)
    if op == "$ne":
        return lambda v: v is MISSING or not _holds(v, operand)
    if not _is_number(operand):
        raise ApiFailure(400, f"{op} on field {field!r} takes a number")
    compare = _NUMERIC[op]
    return lambda v: _is_number(v) and compare(v, operand)


def compile_filter(flt: Any) -> _Group:
    """Check a Pinecone filter once and turn it into a tree of per-field tests."""
    if not isinstance(flt, Mapping):
        raise ApiFailure(400, "filter must be a JSON object")
    parts: list[_Leaf | _Group] = []
    for key, cond in flt.items():
        if key in ("$and", "$or"):
            if not isinstance(cond, list) or not cond:
                raise ApiFailure(400, f"{key} takes a non-empty array of filters")
            parts.append(_Group(key, tuple(compile_filter(sub) for sub in cond)))
        elif key.startswith("$"):
            raise ApiFailure(400, f"unsupported filter operator {key!r}")
        elif isinstance(cond, Mapping):
            parts.extend(_Leaf(key, _predicate(key, op, operand)) for op, operand in cond.items())
        else:
            parts.append(_Leaf(key, _predicate(key, "$eq", cond)))
    return _Group("$and", tuple(parts))


def evaluate(node: _Leaf | _Group, column: Callable[[str], Sequence[Any]], count: int) -> np.ndarray:
    """A boolean mask over ``count`` records; ``column(field)`` lists that field's values in record order."""
    if isinstance(node, _Leaf):
        return np.fromiter(map(node.test, column(node.field)), dtype=bool, count=count)
    if not node.parts:
        return np.ones(count, dtype=bool)
    masks = [evaluate(part, column, count) for part in node.parts]
    return np.logical_and.reduce(masks) if node.op == "$and" else np.logical_or.reduce(masks)


def matches(metadata: Mapping[str, Any] | None, flt: Mapping[str, Any] | None) -> bool:
    """True when ``metadata`` satisfies the Pinecone filter ``flt`` (empty filter = everything)."""
    if not flt:
        return True
    meta = metadata or {}
    return bool(evaluate(compile_filter(flt), lambda field: [meta.get(field, MISSING)], 1)[0])


# --------------------------------------------------------------------------- the store
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


# --------------------------------------------------------------------------- HTTP
class _Handler(BaseHTTPRequestHandler):
    server: PineconeLocalServer
    protocol_version = "HTTP/1.1"
    # Headers and body leave in two writes; with Nagle on, the body waits for the client's delayed
    # ACK, which added ~40 ms to every request.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return  # the JSON request log replaces stderr chatter

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        split = urlsplit(self.path)
        query = parse_qs(split.query)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        self.server.log_request_line(
            method,
            self.path,
            body if body is not None else raw.decode("utf-8", "replace"),
            self.headers.get("X-Pinecone-Api-Version", ""),
            raw if body is not None else b"",
        )
        try:
            if body is None or not isinstance(body, dict):
                raise ApiFailure(400, "request body must be a JSON object")
            if split.path == "/healthz":
                self._reply(200, {"status": "ok", "dimension": self.server.store.dimension})
                return
            self._authorise()
            self._reply(200, self._route(method, split.path, query, body))
        except ApiFailure as failure:
            self._reply(failure.status, failure.body())
        except Exception as exc:  # pragma: no cover - a bug here must still answer
            self._reply(500, ApiFailure(500, f"internal error: {exc}").body())

    def _authorise(self) -> None:
        given = self.headers.get("Api-Key", "")
        expected = self.server.api_key
        if not given or (expected and given != expected):
            raise ApiFailure(401, "Invalid API Key")

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]) -> dict[str, Any]:
        store = self.server.store
        ns = body.get("namespace") or (query.get("namespace") or [""])[0] or ""
        if method == "POST" and path == "/vectors/upsert":
            return {"upsertedCount": store.upsert(ns, body.get("vectors"))}
        if method == "POST" and path == "/query":
            return {"matches": store.query(ns, body), "namespace": ns, "usage": {"readUnits": 1}}
        if method == "POST" and path == "/vectors/delete":
            store.delete(ns, body)
            return {}
        if method == "POST" and path == "/vectors/update":
            return {"matchedRecords": store.update(ns, body)}
        if method == "GET" and path == "/vectors/fetch":
            return {"vectors": store.fetch(ns, query.get("ids", [])), "namespace": ns, "usage": {"readUnits": 1}}
        if method == "POST" and path == "/vectors/fetch_by_metadata":
            vectors, token = store.fetch_by_metadata(ns, body)
            out: dict[str, Any] = {"vectors": vectors, "namespace": ns, "usage": {"readUnits": 1}}
            if token:
                out["pagination"] = {"next": token}
            return out
        if method == "GET" and path == "/vectors/list":
            try:
                limit = int(query["limit"][0]) if query.get("limit") else DEFAULT_LIST_LIMIT
            except ValueError as exc:
                raise ApiFailure(400, "limit must be an integer") from exc
            prefix = query["prefix"][0] if query.get("prefix") else ""
            after = query["paginationToken"][0] if query.get("paginationToken") else None
            ids, token = store.list_ids(ns, prefix, limit, after)
            listed: dict[str, Any] = {"vectors": [{"id": vid} for vid in ids], "namespace": ns,
                                      "usage": {"readUnits": 1}}
            if token:
                listed["pagination"] = {"next": token}
            return listed
        if method in ("POST", "GET") and path == "/describe_index_stats":
            return store.stats(body.get("filter"))
        raise ApiFailure(404, f"no route for {method} {path}")

    def _reply(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class PineconeLocalServer(ThreadingHTTPServer):
    """The running endpoint: ``url``, ``port``, ``store``; ``shutdown()`` stops and closes it."""

    daemon_threads = True

    def __init__(self, host: str, port: int, data_dir: Path, dimension: int, api_key: str = "") -> None:
        super().__init__((host, port), _Handler)
        data_dir.mkdir(parents=True, exist_ok=True)
        self.store = VectorStore(data_dir, dimension)
        self.api_key = api_key
        self.request_log = data_dir / "requests.log"
        self._log_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        host = self.server_address[0]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{self.port}"

    def log_request_line(self, method: str, path: str, body: Any, api_version: str = "", raw: bytes = b"") -> None:
        """Append one JSON line; the API key is never logged.

        ``raw``, when given, is the request's JSON text that parsed as ``body``: it is written as the
        line's ``body`` as it came (newlines, legal only between JSON tokens, become spaces) instead
        of encoding the parsed body again, which cost milliseconds for a batch of vectors.
        """
        line = json.dumps({"ts": time.time(), "method": method, "path": path, "api_version": api_version,
                           "body": None if raw else body})
        if raw:
            try:
                text = raw.decode("utf-8").replace("\r", " ").replace("\n", " ")
            except UnicodeDecodeError:
                text = json.dumps(body)
            line = line[:-len("null}")] + text + "}"
        with self._log_lock, self.request_log.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def start_background(self) -> PineconeLocalServer:
        self._thread = threading.Thread(target=self.serve_forever, name="pinecone-local", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        super().shutdown()
        self.server_close()
        self.store.close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def serve(host: str, port: int, data_dir: str | Path, dimension: int, api_key: str = "") -> PineconeLocalServer:
    """Start the endpoint on a background thread (``port=0`` picks a free one) and return it."""
    return PineconeLocalServer(host, port, Path(data_dir), dimension, api_key).start_background()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Local Pinecone-data-plane-compatible endpoint")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--dimension", type=int, required=True)
    parser.add_argument("--api-key", default="", help="when set, requests must carry exactly this Api-Key")
    args = parser.parse_args(argv)
    server = PineconeLocalServer(args.host, args.port, Path(args.data_dir), args.dimension, args.api_key)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    print(json.dumps({"listening": server.url, "dimension": args.dimension}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.store.close()


if __name__ == "__main__":
    main()

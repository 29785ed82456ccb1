"""A small Pinecone-data-plane-compatible endpoint for the local stack.

No local Pinecone server exists, so this one speaks enough of the data-plane REST API that the
official ``pinecone`` SDK (``Pinecone(api_key=...).Index(host="http://127.0.0.1:PORT")``) runs
unchanged against it: upsert, query (by vector or id), fetch, fetch by metadata, list, update,
delete (ids / filter / deleteAll) and describe_index_stats, with the metadata filter operators
``$eq $ne $in $nin $gt $gte $lt $lte $exists $and $or`` and implicit equality.

Guarantees:

* one dense index of a fixed ``dimension``, cosine metric; a vector of another dimension, or an
  all-zero vector, is refused with ``400`` as Pinecone does;
* namespaces are independent; each is persisted to ``<data-dir>/namespaces/<name>.json`` with an
  atomic replace after every mutation and loaded again on start;
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
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

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


def matches(metadata: Mapping[str, Any] | None, flt: Mapping[str, Any] | None) -> bool:
    """True when ``metadata`` satisfies the Pinecone filter ``flt`` (empty filter = everything)."""
    if not flt:
        return True
    if not isinstance(flt, Mapping):
        raise ApiFailure(400, "filter must be a JSON object")
    meta = metadata or {}
    for key, cond in flt.items():
        if key in ("$and", "$or"):
            if not isinstance(cond, list) or not cond:
                raise ApiFailure(400, f"{key} takes a non-empty array of filters")
            results = (matches(meta, sub) for sub in cond)
            if not (all(results) if key == "$and" else any(results)):
                return False
        elif key.startswith("$"):
            raise ApiFailure(400, f"unsupported filter operator {key!r}")
        elif isinstance(cond, Mapping):
            for op, operand in cond.items():
                if not _compare(meta, key, op, operand):
                    return False
        elif not _compare(meta, key, "$eq", cond):
            return False
    return True


def _compare(meta: Mapping[str, Any], field: str, op: str, operand: Any) -> bool:
    if op not in _COMPARISONS:
        raise ApiFailure(400, f"unsupported filter operator {op!r} on field {field!r}")
    present = field in meta
    value = meta.get(field)
    stored = value if isinstance(value, list) else [value]
    if op == "$exists":
        return present == bool(operand)
    if op in ("$in", "$nin"):
        if not isinstance(operand, list):
            raise ApiFailure(400, f"{op} on field {field!r} takes an array")
        hit = present and any(v in operand for v in stored)
        return hit if op == "$in" else not hit
    if op == "$eq":
        return present and operand in stored
    if op == "$ne":
        return not (present and operand in stored)
    if not isinstance(operand, (int, float)) or isinstance(operand, bool):
        raise ApiFailure(400, f"{op} on field {field!r} takes a number")
    if not present or not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return {"$gt": value > operand, "$gte": value >= operand, "$lt": value < operand, "$lte": value <= operand}[op]


# --------------------------------------------------------------------------- the store
def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def _namespace_file(root: Path, namespace: str) -> Path:
    return root / f"ns-{quote(namespace, safe='')}.json"


class VectorStore:
    """Namespaced vectors in memory, mirrored to one JSON file per namespace."""

    def __init__(self, data_dir: Path, dimension: int) -> None:
        self.dimension = dimension
        self.root = data_dir / "namespaces"
        self.root.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.namespaces: dict[str, dict[str, dict[str, Any]]] = {}
        for path in sorted(self.root.glob("ns-*.json")):
            name = unquote(path.stem[3:])
            self.namespaces[name] = json.loads(path.read_text(encoding="utf-8"))["vectors"]

    def _persist(self, namespace: str) -> None:
        target = _namespace_file(self.root, namespace)
        vectors = self.namespaces.get(namespace, {})
        if not vectors:
            self.namespaces.pop(namespace, None)
            target.unlink(missing_ok=True)
            return
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"namespace": namespace, "vectors": vectors}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)

    # ---- validation
    def _check_values(self, vid: str, values: Any) -> list[float]:
        if not isinstance(values, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
        ):
            raise ApiFailure(400, f"Vector {vid!r}: values must be an array of numbers")
        if len(values) != self.dimension:
            raise ApiFailure(
                400, f"Vector dimension {len(values)} does not match the dimension of the index {self.dimension}"
            )
        if not any(values):
            raise ApiFailure(400, "Dense vectors must contain at least one non-zero value")
        return [float(v) for v in values]

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
            self.namespaces.setdefault(namespace, {}).update(staged)
            self._persist(namespace)
        return len(vectors)

    def update(self, namespace: str, body: Mapping[str, Any]) -> int:
        vid = self._check_id(body.get("id"))
        with self.lock:
            record = self.namespaces.get(namespace, {}).get(vid)
            if record is None:
                return 0
            if body.get("values") is not None:
                record["values"] = self._check_values(vid, body["values"])
            if body.get("setMetadata") is not None:
                record["metadata"].update(self._check_metadata(vid, body["setMetadata"]))
            self._persist(namespace)
        return 1

    def delete(self, namespace: str, body: Mapping[str, Any]) -> None:
        with self.lock:
            space = self.namespaces.get(namespace, {})
            if body.get("deleteAll"):
                space.clear()
            elif body.get("ids") is not None:
                for vid in body["ids"]:
                    space.pop(vid, None)
            elif body.get("filter"):
                doomed = [vid for vid, rec in space.items() if matches(rec["metadata"], body["filter"])]
                for vid in doomed:
                    del space[vid]
            else:
                raise ApiFailure(400, "delete needs ids, filter or deleteAll")
            if namespace in self.namespaces:
                self._persist(namespace)

    def query(self, namespace: str, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        top_k = body.get("topK")
        if not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise ApiFailure(400, f"topK must be an integer between 1 and {MAX_TOP_K}")
        with self.lock:
            space = dict(self.namespaces.get(namespace, {}))
        if body.get("vector") is not None:
            probe = self._check_values("<query>", body["vector"])
        elif body.get("id") is not None:
            record = space.get(body["id"])
            if record is None:
                return []
            probe = record["values"]
        else:
            raise ApiFailure(400, "query needs a vector or an id")
        flt = body.get("filter")
        scored = [
            (_cosine(probe, rec["values"]), vid, rec)
            for vid, rec in space.items()
            if matches(rec["metadata"], flt)
        ]
        scored.sort(key=lambda item: (-item[0], item[1]))
        out = []
        for score, vid, rec in scored[:top_k]:
            match: dict[str, Any] = {"id": vid, "score": score, "values": []}
            if body.get("includeValues"):
                match["values"] = rec["values"]
            if body.get("includeMetadata"):
                match["metadata"] = rec["metadata"]
            out.append(match)
        return out

    def fetch(self, namespace: str, ids: list[str]) -> dict[str, Any]:
        with self.lock:
            space = self.namespaces.get(namespace, {})
            return {vid: _public(vid, space[vid]) for vid in ids if vid in space}

    def fetch_by_metadata(self, namespace: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
        if not body.get("filter"):
            raise ApiFailure(400, "fetch_by_metadata needs a non-empty filter")
        limit = body.get("limit") or DEFAULT_FETCH_BY_METADATA_LIMIT
        with self.lock:
            space = self.namespaces.get(namespace, {})
            ids = sorted(vid for vid, rec in space.items() if matches(rec["metadata"], body["filter"]))
            page, token = _page(ids, limit, body.get("paginationToken"))
            return {vid: _public(vid, space[vid]) for vid in page}, token

    def list_ids(self, namespace: str, prefix: str, limit: int, token: str | None) -> tuple[list[str], str | None]:
        with self.lock:
            ids = sorted(vid for vid in self.namespaces.get(namespace, {}) if vid.startswith(prefix))
        return _page(ids, limit, token)

    def stats(self, flt: Mapping[str, Any] | None) -> dict[str, Any]:
        with self.lock:
            counts = {
                name: sum(1 for rec in space.values() if matches(rec["metadata"], flt))
                for name, space in self.namespaces.items()
                if space
            }
        return {
            "namespaces": {name: {"vectorCount": n} for name, n in counts.items()},
            "dimension": self.dimension,
            "indexFullness": 0.0,
            "totalVectorCount": sum(counts.values()),
            "metric": "cosine",
            "vectorType": "dense",
        }


def _public(vid: str, record: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": vid, "values": record["values"], "metadata": record["metadata"]}


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

    def log_request_line(self, method: str, path: str, body: Any, api_version: str = "") -> None:
        """Append one JSON line; the API key is never logged."""
        line = json.dumps(
            {"ts": time.time(), "method": method, "path": path, "api_version": api_version, "body": body}
        )
        with self._log_lock, self.request_log.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def start_background(self) -> PineconeLocalServer:
        self._thread = threading.Thread(target=self.serve_forever, name="pinecone-local", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        super().shutdown()
        self.server_close()
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


if __name__ == "__main__":
    main()

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

Run it with ``python -m strata_dev.localstack.pinecone_local --port P --data-dir D --dimension 384`` or
start it in-process with :func:`serve`. The metadata filters live in
:mod:`strata_dev.localstack.pinecone_filters`, the vector store in :mod:`strata_dev.localstack.pinecone_store`;
this module is the HTTP endpoint.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from core.errors import ApiFailure
from strata_dev.localstack.pinecone_filters import compile_filter, evaluate, matches
from strata_dev.localstack.pinecone_store import DEFAULT_LIST_LIMIT, VectorStore

__all__ = ["ApiFailure", "PineconeLocalServer", "VectorStore", "compile_filter", "evaluate", "main", "matches", "serve"]


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
        # A short poll: shutdown() waits for the loop to see it (0.5 s by default, per server stopped).
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="pinecone-local", daemon=True)
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

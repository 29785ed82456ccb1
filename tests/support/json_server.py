"""A scripted JSON-over-HTTP server on 127.0.0.1, the plumbing of the provider wire-format servers.

A subclass answers each POST in :meth:`ScriptedJSONServer.answer` (path, headers, JSON body → a
:class:`Reply`); this base binds a free port, serves in a daemon thread, records every request in
``requests`` and writes the reply: a dict or list as JSON, a str or bytes verbatim, after the
reply's ``delay_s`` (cut short when the server stops).
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; str/bytes -> sent verbatim
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


class ScriptedJSONServer(ABC):
    name = "scripted-json"

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=self.name, daemon=True)

    @abstractmethod
    def answer(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        """The reply to one POST (the subclass's protocol)."""

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()  # cut scripted delays short
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw or b"null")
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = dict(self.headers.items())
                with server._lock:
                    server.requests.append(RecordedRequest(self.path, headers, body))
                reply = server.answer(self.path, headers, body)
                if reply.delay_s and server._closing.wait(reply.delay_s):
                    return
                payload = reply.body
                if isinstance(payload, bytes):
                    data, ctype = payload, "application/octet-stream"
                elif isinstance(payload, str):
                    data, ctype = payload.encode(), "application/json"
                else:
                    data, ctype = json.dumps(payload).encode(), "application/json"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        return Handler


__all__ = ["RecordedRequest", "Reply", "ScriptedJSONServer"]

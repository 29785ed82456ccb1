"""The developer webhook keeps its frozen legacy name and ships the conversation payload."""

from __future__ import annotations

import dataclasses
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from core import config
from core.bootstrap import Context
from core.services import webhooks


def test_memory_created_fires_with_the_conversation_payload() -> None:
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = dataclasses.replace(config.load(), webhook_url=f"http://127.0.0.1:{server.server_port}/hook")
        conversation = {"status": "completed", "transcript_segments": [{"id": "s0", "text": "hi"}]}
        assert webhooks.conversation_created(Context(settings), "u1", "c1", conversation) is True
    finally:
        server.shutdown()
    assert received == [{"type": "memory_created", "uid": "u1",
                         "conversation": {"id": "c1", **conversation}}]


def test_no_webhook_configured_sends_nothing() -> None:
    settings = dataclasses.replace(config.load(), webhook_url="")
    assert webhooks.conversation_created(Context(settings), "u1", "c1", {}) is False

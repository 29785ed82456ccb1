"""A local OpenAI-compatible ``/v1/chat/completions`` server that answers from recorded replies.

The model path (``STRATA_EXTRACTOR=openai``, ``STRATA_ROUTER=openai``) runs locally and in tests on
replies a capable model wrote earlier to the project's exact requests, without a model. A request is
known by :func:`request_key`: a SHA-256 of its ``messages`` and its response schema (``response_format
.json_schema.schema``; in ``json_object``/``none`` mode the schema travels in the system message),
not of the model name, ``max_tokens`` or ``temperature``, so a change of model or budget replays the
same recordings while a change of prompt or schema does not.

Recordings are the ``*.json`` files of a folder (default :data:`REPLIES`) and its sub-folders, each a
list of entries (or one entry)::

    {"key": "<request_key>", "messages": [...as sent...], "schema_name": "strata_extraction",
     "reply": {...the JSON object the model answered...}, "recorded_by": "who or which model",
     "usage": {"prompt_tokens": 812, "completion_tokens": 96}}      # usage optional

A known request is answered as a chat completion whose content is ``reply`` (``usage``: the
recorded one, else an estimate of 4 characters a token, marked ``"estimated": true``). An unknown
one is answered 503 with a body naming its key (the adapter treats it as the model being
unavailable: capture retries, then falls back to the rules) and is written to the missing folder as
``<key>.json``: the same entry with ``"reply": null`` and its ``response_format``, for a person or a
model to fill in (``strata model-replies missing`` lists them). The folder of recordings is read
again whenever a request is not found, so a reply recorded while the server runs is picked up.

Run: ``python -m strata_dev.localstack.model_replay --port 8099 --replies DIR --missing DIR``;
``strata stack up --model-replay`` starts it inside the stack.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
REPO_ROOT = Path(__file__).resolve().parents[2]
REPLIES = REPO_ROOT / "strata_dev" / "bench" / "data" / "model_replies"
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODEL = "replay"  # the model name the stack's functions send (the replay ignores it)


def response_schema(body: dict[str, Any]) -> Any:
    """The JSON schema a request asks the reply to follow (None without strict structured output)."""
    response_format = body.get("response_format") or {}
    return (response_format.get("json_schema") or {}).get("schema") if isinstance(response_format, dict) else None


def request_key(body: dict[str, Any]) -> str:
    """The recording key of a chat request: its messages and its response schema, nothing else."""
    canonical = json.dumps({"messages": body.get("messages"), "schema": response_schema(body)},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def template(body: dict[str, Any]) -> dict[str, Any]:
    """The entry to record for ``body``: everything but the reply and who wrote it."""
    response_format = body.get("response_format") or {}
    return {"key": request_key(body), "messages": body.get("messages"),
            "schema_name": (response_format.get("json_schema") or {}).get("name")
            if isinstance(response_format, dict) else None,
            "response_format": response_format or None, "reply": None, "recorded_by": None}


def read_entries(folder: Path) -> Iterable[dict[str, Any]]:
    """Every entry of the ``*.json`` files of ``folder`` and its sub-folders (a file holds a list or
    one entry)."""
    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        for entry in data if isinstance(data, list) else [data]:
            if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
                raise ValueError(f"{path}: every entry needs a string 'key'")
            yield entry


def load_replies(folder: Path) -> dict[str, dict[str, Any]]:
    """Recorded entries with a reply, by key (a later file's entry wins over an earlier one's)."""
    replies: dict[str, dict[str, Any]] = {}
    for entry in read_entries(folder):
        if isinstance(entry.get("reply"), dict):
            replies[entry["key"]] = entry
    return replies


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def completion(body: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    content = json.dumps(entry["reply"], ensure_ascii=False)
    usage = entry.get("usage") if isinstance(entry.get("usage"), dict) else None
    if usage is None:
        sent = "".join(str(m.get("content", "")) for m in body.get("messages") or [] if isinstance(m, dict))
        usage = {"prompt_tokens": _estimate_tokens(sent), "completion_tokens": _estimate_tokens(content),
                 "estimated": True}
    usage = {**usage, "total_tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))}
    return {"id": f"replay-{entry['key'][:12]}", "object": "chat.completion", "created": 0,
            "model": body.get("model") or MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": usage}


class ReplayServer:
    """The replay server on ``host:port`` (0: a free port), serving in a daemon thread."""

    def __init__(self, replies: Path = REPLIES, missing: Path | None = None, *, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.replies_dir = Path(replies)
        self.missing_dir = Path(missing) if missing else self.replies_dir.parent / "model_replies_missing"
        self.replies = load_replies(self.replies_dir)
        self.answered: list[str] = []
        self.missed: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="model-replay", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ReplayServer:
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread (the stand-alone process)."""
        self._httpd.serve_forever(poll_interval=0.1)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return 400, {"error": {"message": "a chat completion request needs messages", "type": "invalid_request_error"}}
        key = request_key(body)
        with self._lock:
            entry = self.replies.get(key)
            if entry is None:  # recorded since the start?
                self.replies = load_replies(self.replies_dir)
                entry = self.replies.get(key)
            (self.answered if entry is not None else self.missed).append(key)
        if entry is not None:
            return 200, completion(body, entry)
        path = self.missing_dir / f"{key}.json"
        self.missing_dir.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(json.dumps(template(body), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        log.warning("no recorded reply for request %s; wrote %s", key, path)
        return 503, {"error": {"message": f"no recorded reply for this request (key {key}); it was written to "
                                          f"{path}: record its reply and add it to {self.replies_dir}",
                               "type": "replay_missing", "code": "replay_missing", "key": key}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - logged by the server
                return

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                if self.path == "/healthz":
                    self._send(200, {"replies": len(server.replies), "missing_dir": str(server.missing_dir)})
                else:
                    self._send(404, {"error": {"message": f"unknown path {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path not in CHAT_PATHS:
                    self._send(404, {"error": {"message": f"unknown path {self.path}", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = None
                self._send(*server.answer(body))

        return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strata_dev.localstack.model_replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--replies", default=str(REPLIES), help="folder of recorded replies (*.json)")
    parser.add_argument("--missing", default=None, help="folder unknown requests are written to "
                                                         "(default: model_replies_missing beside --replies)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s model-replay %(message)s")
    server = ReplayServer(Path(args.replies), Path(args.missing) if args.missing else None,
                          host=args.host, port=args.port)
    log.info("serving %d recorded replies on %s (missing: %s)", len(server.replies), server.base_url,
             server.missing_dir)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

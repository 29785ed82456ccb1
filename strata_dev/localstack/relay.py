"""The local stand-in for Eventarc between the Firestore emulator and the trigger functions.

The Firestore emulator (started with ``--functions_emulator=<relay>``) POSTs every write that
matches a registered trigger to ``/functions/projects/{project}/triggers/{key}`` as a binary-mode
CloudEvent whose body is the *base64 text* of the ``DocumentEventData`` protobuf. The relay
answers at once (delivery is asynchronous, as with Eventarc), decodes the body and forwards it as
a binary CloudEvent with the same ``ce-*`` headers and ``Content-Type: application/protobuf`` to
the function registered for ``key``. A non-2xx answer or a connection error is retried with
bounded exponential backoff (``--max-attempts``), like a trigger with retries enabled; giving up
is logged.

It also sits between the Pub/Sub emulator's push subscriptions and their functions
(``/pubsub/{key}/{topic path}`` → the function registered with ``--push KEY=URL``). The push is
forwarded synchronously, body unchanged, so functions-framework turns it into a
``messagePublished`` CloudEvent and the emulator's own redelivery and backoff apply. The
emulator stops redelivering after ``max_delivery_attempts`` but does not forward to the
dead-letter topic, so the relay counts attempts per message and, at the last failed one,
publishes the message to ``--dead-letter-topic`` (with the ``CloudPubSubDeadLetter*``
attributes the real service adds) and acknowledges it.

Run: ``python -m strata_dev.localstack.relay --port P --route KEY=URL [--push KEY=URL]
[--pubsub-host H:P --dead-letter-topic projects/p/topics/t]``.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import http.client
import json
import logging
import re
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("strata.relay")

_TRIGGER_PATH = re.compile(r"^/functions/projects/(?P<project>[^/]+)/triggers/(?P<key>[^/?]+)")
_PUSH_PATH = re.compile(r"^/pubsub/(?P<key>[^/?]+)(?P<rest>/[^?]*)?")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 8.0

    def delay(self, attempt: int) -> float:
        """Backoff before attempt ``attempt + 1`` (attempts count from 1)."""
        return min(self.max_backoff_s, self.initial_backoff_s * (2 ** (attempt - 1)))


def decode_body(raw: bytes) -> bytes:
    """The protobuf bytes inside the emulator's base64 text body (raw bytes pass through)."""
    text = raw.strip()
    if not text:
        return b""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return raw


def forward_headers(incoming: dict[str, str]) -> dict[str, str]:
    headers = {k.lower(): v for k, v in incoming.items() if k.lower().startswith("ce-")}
    headers["content-type"] = "application/protobuf"
    return headers


def post_once(url: str, body: bytes, headers: dict[str, str], timeout_s: float = 300.0) -> int:
    """POST and return the status code (raises OSError / HTTPException on transport failure)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout_s)
    try:
        conn.request("POST", parts.path or "/", body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def deliver(url: str, body: bytes, headers: dict[str, str], policy: RetryPolicy, *, event: str = "") -> bool:
    """Deliver with retries; True once the function answered 2xx."""
    for attempt in range(1, policy.max_attempts + 1):
        try:
            status = post_once(url, body, headers)
            outcome = str(status)
        except (OSError, http.client.HTTPException) as exc:
            status, outcome = 0, f"{type(exc).__name__}: {exc}"
        if 200 <= status < 300:
            log.info("delivered %s to %s (attempt %d, %s)", event, url, attempt, status)
            return True
        if attempt < policy.max_attempts:
            wait = policy.delay(attempt)
            log.warning("attempt %d of %s to %s failed (%s); retrying in %.1fs", attempt, event, url, outcome, wait)
            time.sleep(wait)
        else:
            log.error("giving up on %s to %s after %d attempts (last: %s)", event, url, attempt, outcome)
    return False


@dataclass
class DeadLetter:
    """Where a push message goes after ``max_attempts`` failed deliveries."""

    pubsub_host: str
    topic: str
    max_attempts: int = 5
    attempts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, message_key: str) -> int:
        with self.lock:
            self.attempts[message_key] = self.attempts.get(message_key, 0) + 1
            return self.attempts[message_key]

    def forget(self, message_key: str) -> None:
        with self.lock:
            self.attempts.pop(message_key, None)

    def publish(self, push: dict[str, Any], attempts: int) -> bool:
        message = push.get("message") or {}
        attributes = dict(message.get("attributes") or {})
        attributes.update({
            "CloudPubSubDeadLetterSourceSubscription": str(push.get("subscription", "")),
            "CloudPubSubDeadLetterSourceDeliveryCount": str(attempts),
            "CloudPubSubDeadLetterSourceMessageId": str(message.get("messageId", "")),
        })
        body = json.dumps({"messages": [{"data": message.get("data", ""), "attributes": attributes}]}).encode()
        try:
            status = post_once(f"http://{self.pubsub_host}/v1/{self.topic}:publish", body,
                               {"content-type": "application/json"}, timeout_s=30.0)
        except (OSError, http.client.HTTPException) as exc:
            log.error("dead-lettering to %s failed: %s", self.topic, exc)
            return False
        return 200 <= status < 300


class Relay(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], routes: dict[str, str], policy: RetryPolicy,
                 pushes: dict[str, str] | None = None, dead_letter: DeadLetter | None = None) -> None:
        super().__init__(address, _Handler)
        self.routes = routes
        self.pushes = pushes or {}
        self.dead_letter = dead_letter
        self.policy = policy
        self.pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="deliver")


class _Handler(BaseHTTPRequestHandler):
    server: Relay
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s " + format, self.address_string(), *args)

    def _reply(self, status: int, text: str = "") -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.startswith("/healthz"):
            self._reply(200, "ok")
        else:
            self._reply(404, "not found")

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        push = _PUSH_PATH.match(self.path)
        if push:
            self._push(push["key"], push["rest"] or "/", raw)
            return
        match = _TRIGGER_PATH.match(self.path)
        if not match:
            self._reply(404, "unknown path")
            return
        key = match["key"]
        url = self.server.routes.get(key)
        if url is None:
            log.error("no function registered for trigger %r; event dropped", key)
            self._reply(404, f"no function for trigger {key}")
            return
        headers = forward_headers(dict(self.headers.items()))
        event = f"{headers.get('ce-type', '?')} {headers.get('ce-document') or headers.get('ce-subject', '')} id={headers.get('ce-id', '?')}"
        self.server.pool.submit(deliver, url, decode_body(raw), headers, self.server.policy, event=event)
        self._reply(204)


    def _push(self, key: str, rest: str, raw: bytes) -> None:
        url = self.server.pushes.get(key)
        if url is None:
            log.error("no function registered for push %r", key)
            self._reply(404, f"no function for push {key}")
            return
        try:
            body = json.loads(raw or b"{}")
            message_key = f"{body.get('subscription', '')}/{body['message']['messageId']}"
        except (ValueError, KeyError, TypeError):
            self._reply(400, "not a Pub/Sub push body")
            return
        try:
            status = post_once(url.rstrip("/") + rest, raw, {"content-type": "application/json"})
        except (OSError, http.client.HTTPException) as exc:
            status = 503
            log.warning("push %s to %s failed: %s", message_key, url, exc)
        dead = self.server.dead_letter
        if 200 <= status < 300:
            if dead:
                dead.forget(message_key)
            self._reply(204)
            return
        if dead is not None:
            attempts = dead.count(message_key)
            if attempts >= dead.max_attempts and dead.publish(body, attempts):
                dead.forget(message_key)
                log.error("push %s failed %d times; dead-lettered to %s", message_key, attempts, dead.topic)
                self._reply(204)
                return
            log.warning("push %s attempt %d answered %d", message_key, attempts, status)
        self._reply(status if status >= 400 else 500, "function failed")


def _parse_route(text: str) -> tuple[str, str]:
    key, sep, url = text.partition("=")
    if not sep or not key or not url:
        raise argparse.ArgumentTypeError(f"route must be KEY=URL, got {text!r}")
    return key, url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strata_dev.localstack.relay", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--route", type=_parse_route, action="append", default=[], help="KEY=URL")
    parser.add_argument("--push", type=_parse_route, action="append", default=[], help="KEY=URL")
    parser.add_argument("--pubsub-host", default="")
    parser.add_argument("--dead-letter-topic", default="")
    parser.add_argument("--max-attempts", type=int, default=5)
    parser.add_argument("--initial-backoff", type=float, default=0.5)
    parser.add_argument("--max-backoff", type=float, default=8.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    policy = RetryPolicy(args.max_attempts, args.initial_backoff, args.max_backoff)
    dead = DeadLetter(args.pubsub_host, args.dead_letter_topic, args.max_attempts) \
        if args.pubsub_host and args.dead_letter_topic else None
    server = Relay((args.host, args.port), dict(args.route), policy, dict(args.push), dead)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    log.info("relay on %s:%d triggers=%s pushes=%s", args.host, args.port, dict(args.route), dict(args.push))
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.pool.shutdown(wait=False, cancel_futures=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

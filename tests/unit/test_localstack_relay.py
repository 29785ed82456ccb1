"""The Eventarc stand-in: body decoding, header forwarding, bounded retries (against a real socket)."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from strata_dev.localstack.relay import RetryPolicy, decode_body, deliver, forward_headers


def test_base64_text_body_is_decoded_and_raw_bytes_pass_through() -> None:
    proto = b"\n\x80\x01\nLprojects/demo-strata/databases/(default)/documents/users/u1"
    assert decode_body(base64.b64encode(proto)) == proto
    assert decode_body(b"\x00\xffnot base64") == b"\x00\xffnot base64"
    assert decode_body(b"") == b""


def test_only_cloudevent_headers_are_forwarded_as_protobuf() -> None:
    out = forward_headers({"Ce-Type": "google.cloud.firestore.document.v1.written", "ce-id": "1",
                           "Content-Type": "application/protobuf", "Host": "x", "Content-Length": "9"})
    assert out == {"ce-type": "google.cloud.firestore.document.v1.written", "ce-id": "1",
                   "content-type": "application/protobuf"}


def test_backoff_is_bounded() -> None:
    policy = RetryPolicy(max_attempts=6, initial_backoff_s=0.5, max_backoff_s=2.0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 2.0, 2.0]


@pytest.fixture
def flaky_function() -> Iterator[tuple[str, list[bytes], list[int]]]:
    """A function that fails the first two calls, then succeeds; records bodies."""
    bodies: list[bytes] = []
    statuses = [500, 503]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(statuses.pop(0) if statuses else 204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/", bodies, statuses
    finally:
        server.shutdown()
        server.server_close()


def test_delivery_retries_until_success(flaky_function: tuple[str, list[bytes], list[int]]) -> None:
    url, bodies, _ = flaky_function
    policy = RetryPolicy(max_attempts=5, initial_backoff_s=0.01, max_backoff_s=0.02)
    assert deliver(url, b"event", {"ce-id": "1", "content-type": "application/protobuf"}, policy) is True
    assert bodies == [b"event"] * 3


def test_delivery_gives_up_after_max_attempts(flaky_function: tuple[str, list[bytes], list[int]]) -> None:
    url, bodies, _ = flaky_function
    policy = RetryPolicy(max_attempts=2, initial_backoff_s=0.01, max_backoff_s=0.02)
    assert deliver(url, b"event", {"ce-id": "1"}, policy) is False
    assert len(bodies) == 2

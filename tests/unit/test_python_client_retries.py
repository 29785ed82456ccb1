"""The Python client's retrying transport sends a request again only when that is safe (docs: the
client READMEs): after a 429 or 503, or when the connection closed before any answer and the
request is a read or a keyed create. The inner transport is a scripted one: no socket."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))
from strata_client import RetryingTransport  # noqa: E402


class Script(httpx.BaseTransport):
    """Answers each request with the next of ``steps``: an exception to raise or a status."""

    def __init__(self, *steps: int | Exception) -> None:
        self.steps, self.seen = list(steps), []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return httpx.Response(step, headers={"retry-after": "0"}, request=request)


def _send(method: str, path: str, *steps: int | Exception, retries: int = 3) -> tuple[httpx.Response, Script]:
    transport = RetryingTransport(retries, sleep=lambda _s: None)
    transport._sync = script = Script(*steps)
    return transport.handle_request(httpx.Request(method, "http://strata.test" + path, content=b"{}")), script


def test_a_read_is_sent_again_when_its_idle_connection_was_closed() -> None:
    response, script = _send("GET", "/v1/memories", httpx.ReadError("reset"), 200)
    assert response.status_code == 200 and len(script.seen) == 2


def test_a_create_gets_one_key_and_keeps_it_across_attempts() -> None:
    response, script = _send("POST", "/v1/memories", httpx.RemoteProtocolError("closed"), 429, 201)
    keys = {r.headers.get("idempotency-key") for r in script.seen}
    assert response.status_code == 201 and len(script.seen) == 3 and len(keys) == 1 and None not in keys


def test_a_write_without_a_key_is_not_sent_twice_after_a_closed_connection() -> None:
    with pytest.raises(httpx.ReadError):
        _send("POST", "/v1/review-queue/r1/resolve", httpx.ReadError("reset"), 200)


def test_the_last_attempt_is_returned_or_raised_as_it_is() -> None:
    response, script = _send("GET", "/v1/memories", 503, 503, retries=1)
    assert response.status_code == 503 and len(script.seen) == 2
    with pytest.raises(httpx.ReadError):
        _send("GET", "/v1/memories", httpx.ReadError("a"), httpx.ReadError("b"), retries=1)

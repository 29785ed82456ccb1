"""The Strata API client for Python (the distribution ``strata-memory-client``).

Its requests and models are generated from the API's OpenAPI document by openapi-python-client
(``make client-python`` writes :mod:`strata_client.generated`). This module is the thin
hand-written layer on top: the credential (an ID token, refreshed per request, a personal API key
or a fixed token), the timeout, retries of a 429 or 503 after its ``Retry-After``, errors as
exceptions that carry the request id, and iteration over cursor-paged answers;
:mod:`strata_client.facade` is the API by resource.

    from strata_client import Strata

    strata = Strata(STRATA_API, key="strata_pk_...", timeout=30)
    memory = strata.memories.add("I grow chillies")
    for hit in strata.memories.search("chillies").memories:
        print(hit.score, hit.content)
    strata.memories.delete(memory.id)
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

import httpx

try:
    from strata_client.generated.api.default import list_memories
    from strata_client.generated.client import AuthenticatedClient
    from strata_client.generated.models import Memory, MemoryList
    from strata_client.generated.types import UNSET, Response
except ModuleNotFoundError as missing:  # a clone before its build: say how to build, not just what is absent
    if missing.name != "strata_client.generated":
        raise
    raise ModuleNotFoundError("strata_client.generated is not built yet: run `make client-python` in the Strata "
                              "checkout, or openapi-python-client on the API's /openapi.json (clients/python/README.md)",
                              name=missing.name) from missing

__all__ = ["AuthenticatedClient", "Conversations", "Keys", "Memories", "RetryingTransport", "Review", "Strata",
           "StrataError", "all_memories", "connect", "paginate", "unwrap"]

Item = TypeVar("Item")


class StrataError(Exception):
    """A refused (4xx) or failed (5xx) request: the API's error code and message, the request's id
    to report (from the body, else the ``X-Request-Id`` header) and ``Retry-After`` of a 503 or 429."""

    def __init__(self, status: int, content: bytes, headers: Any) -> None:
        try:
            body = json.loads(content or b"null")
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else {}
        self.status = int(status)
        self.code: str = str(error.get("code") or f"http_{self.status}")
        self.message: str = str(error.get("message") or "request failed")
        self.request_id: str | None = error.get("request_id") or headers.get("x-request-id")
        retry = headers.get("retry-after")
        self.retry_after: float | None = float(retry) if retry is not None else None
        super().__init__(f"{self.status} {self.code}: {self.message}")


RETRY_STATUSES = (429, 503)  # the API did nothing and says when to call again (docs/api.md)


def retry_after_s(response: httpx.Response, cap: float) -> float:
    """How long ``response`` asks the caller to wait (its ``Retry-After`` seconds; 1 without one),
    at most ``cap``."""
    try:
        wait = float(response.headers.get("retry-after", "1"))
    except ValueError:
        wait = 1.0
    return min(max(wait, 0.0), cap)


# The API's creates that honour an Idempotency-Key: the client gives each call one, so that sending
# it again (below) can never create twice.
KEYED = re.compile(r"/v1/(memories(/batch)?|conversations)$")
REPEATABLE_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
# A connection the server closed while it sat idle in the pool (reused after a wait): no answer came.
CLOSED_WHILE_IDLE = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)


def _repeatable(request: httpx.Request) -> bool:
    """Whether ``request`` may be sent again after its connection closed with no answer: a read, or
    a create that carries an ``Idempotency-Key`` (one is given to each create that has none)."""
    if request.method == "POST" and "idempotency-key" not in request.headers and KEYED.search(request.url.path):
        request.headers["Idempotency-Key"] = str(uuid.uuid4())
    return request.method in REPEATABLE_METHODS or "idempotency-key" in request.headers


class RetryingTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Sends a request again when the API answers 429 (over the user's rate limit) or 503
    (transient) after waiting its ``Retry-After``, or when its connection was closed before any
    answer and that is safe (a read, or a create: each gets an ``Idempotency-Key``), at most
    ``retries`` times; each wait is capped at ``max_wait_s``. The last answer is returned (or the
    last connection error raised) as it is."""

    def __init__(self, retries: int = 3, max_wait_s: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.retries, self.max_wait_s, self._sleep = retries, max_wait_s, sleep
        self._sync: httpx.BaseTransport | None = None
        self._async: httpx.AsyncBaseTransport | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._sync = self._sync or httpx.HTTPTransport()
        repeatable = _repeatable(request)
        for attempt in range(self.retries + 1):
            try:
                response = self._sync.handle_request(request)
            except CLOSED_WHILE_IDLE:
                if attempt >= self.retries or not repeatable:
                    raise
                continue
            if attempt >= self.retries or response.status_code not in RETRY_STATUSES:
                return response
            response.read()
            response.close()
            self._sleep(retry_after_s(response, self.max_wait_s))
        raise AssertionError("unreachable")  # the last attempt returns or raises

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._async = self._async or httpx.AsyncHTTPTransport()
        repeatable = _repeatable(request)
        for attempt in range(self.retries + 1):
            try:
                response = await self._async.handle_async_request(request)
            except CLOSED_WHILE_IDLE:
                if attempt >= self.retries or not repeatable:
                    raise
                continue
            if attempt >= self.retries or response.status_code not in RETRY_STATUSES:
                return response
            await response.aread()
            await response.aclose()
            await asyncio.sleep(retry_after_s(response, self.max_wait_s))
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.aclose()


class _Bearer(httpx.Auth):
    """``Authorization: Bearer …`` on every request, the token asked for per request."""

    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token()}"
        yield request


USER_HEADER = "X-Strata-User"  # the user a server key acts for


def connect(base_url: str, *, id_token: Callable[[], str] | None = None, key: str | None = None,
            token: str | None = None, server_key: str | None = None, acting_for: str | None = None,
            headers: dict[str, str] | None = None,
            timeout: float = 30.0, retries: int = 3, max_retry_wait_s: float = 60.0) -> AuthenticatedClient:
    """A client of the API at ``base_url`` (the ``api`` function's URL; locally the ``api`` row of
    ``strata stack up``) with exactly one credential:

    - ``id_token``: a function returning the signed-in user's current Firebase ID token (every
      route); it is called per request, so a refreshed token is picked up;
    - ``key``: a personal API key ``strata_pk_…`` (``/mcp`` and every ``/v1`` route within the
      key's scope, but key management, webhooks, the export and the account wipe);
    - ``token``: a fixed bearer token;
    - ``server_key``: an operator's server key ``strata_sk_…`` (an app's backend; the ``/v1`` routes
      a personal key takes), with ``acting_for``, the id of the user it acts for, sent as
      ``X-Strata-User`` with every request (required with a server key, refused without one).

    ``headers`` go with every request (e.g. ``X-App-Platform``, ``X-Device-Id-Hash``). A 429 or
    503 is sent again after its ``Retry-After`` (at most ``retries`` times, each wait at most
    ``max_retry_wait_s``; ``retries=0``: never). Pass the client to the generated operations:
    ``list_memories.sync_detailed(client=strata, limit=20)``."""
    given = [c for c in (id_token, key, token, server_key) if c is not None]
    if len(given) != 1:
        raise ValueError("give exactly one credential: id_token, key, token or server_key")
    if (server_key is None) != (acting_for is None):
        raise ValueError("a server key acts for a user: give server_key and acting_for together")
    fixed = next((c for c in (key, token, server_key) if c is not None), None)
    headers = dict(headers or {})
    if acting_for is not None:
        headers[USER_HEADER] = acting_for
    # A fixed credential is the generated client's own token; an ID token is asked for per request.
    httpx_args: dict[str, Any] = {"transport": RetryingTransport(retries, max_retry_wait_s)}
    if id_token is not None:
        httpx_args["auth"] = _Bearer(id_token)
    return AuthenticatedClient(base_url=base_url.rstrip("/"), token=fixed or "", headers=headers,
                               timeout=httpx.Timeout(timeout), httpx_args=httpx_args)


def unwrap(response: Response[Any]) -> Any:
    """The answer's parsed body (a generated model), or :class:`StrataError` for a 4xx or 5xx.

    Takes what a generated operation's ``sync_detailed`` returns."""
    if int(response.status_code) >= 400:
        raise StrataError(int(response.status_code), response.content, response.headers)
    return response.parsed


def paginate(fetch_page: Callable[[str | None], Response[Any]], items: Callable[[Any], list[Item]]) -> Iterator[Item]:
    """Every item of a cursor-paged route, page by page: ``fetch_page(cursor)`` asks for one page
    (``None`` for the first), ``items(page)`` picks its items; iteration ends at a page without
    ``next_cursor``."""
    cursor: str | None = None
    while True:
        page = unwrap(fetch_page(cursor))
        yield from items(page)
        following = page.next_cursor
        if not isinstance(following, str) or not following:
            return
        cursor = following


def all_memories(client: AuthenticatedClient, **query: Any) -> Iterator[Memory]:
    """Every memory ``GET /v1/memories`` lists (``query``: its parameters but the cursor), walking
    its cursor."""

    def page(cursor: str | None) -> Response[Any]:
        return list_memories.sync_detailed(client=client, cursor=cursor if cursor is not None else UNSET, **query)

    def memories(answer: MemoryList) -> list[Memory]:
        return list(answer.memories)

    return paginate(page, memories)


from strata_client.facade import Conversations, Keys, Memories, Review, Strata  # noqa: E402 - needs connect above

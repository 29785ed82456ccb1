"""The Strata API client for Python.

Its requests and models are generated from the API's OpenAPI document by openapi-python-client
(``make client-python`` writes :mod:`strata_client.generated`; nothing generated is committed).
This module is the thin hand-written layer on top: the credential (an ID token, refreshed per
request, a personal API key or a fixed token), errors as exceptions that carry the request id,
and iteration over cursor-paged answers.

    from strata_client import connect, unwrap, all_memories
    from strata_client.generated.api.default import create_memory
    from strata_client.generated.models import MemoryCreate

    strata = connect(STRATA_API, key="strata_pk_...")
    memory = unwrap(create_memory.sync_detailed(client=strata, body=MemoryCreate(content="I grow chillies")))
    for m in all_memories(strata, limit=100):
        print(m.content)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

import httpx

from strata_client.generated.api.default import list_memories
from strata_client.generated.client import AuthenticatedClient
from strata_client.generated.models import Memory, MemoryList
from strata_client.generated.types import UNSET, Response

__all__ = ["AuthenticatedClient", "StrataError", "all_memories", "connect", "paginate", "unwrap"]

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


class _Bearer(httpx.Auth):
    """``Authorization: Bearer …`` on every request, the token asked for per request."""

    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token()}"
        yield request


def connect(base_url: str, *, id_token: Callable[[], str] | None = None, key: str | None = None,
            token: str | None = None, headers: dict[str, str] | None = None,
            timeout: float = 30.0) -> AuthenticatedClient:
    """A client of the API at ``base_url`` (the ``api`` function's URL; locally the ``api`` row of
    ``strata stack up``) with exactly one credential:

    - ``id_token``: a function returning the signed-in user's current Firebase ID token (every
      route); it is called per request, so a refreshed token is picked up;
    - ``key``: a personal API key ``strata_pk_…`` (the routes that take keys: ``/mcp``,
      ``/v1/mcp/*``, ``/v1/tools/*``, ``GET /v1/deletions/{id}``);
    - ``token``: a fixed bearer token.

    ``headers`` go with every request (e.g. ``X-App-Platform``, ``X-Device-Id-Hash``). Pass the
    client to the generated operations: ``list_memories.sync_detailed(client=strata, limit=20)``."""
    given = [c for c in (id_token, key, token) if c is not None]
    if len(given) != 1:
        raise ValueError("give exactly one credential: id_token, key or token")
    fixed = key if key is not None else token
    # A fixed credential is the generated client's own token; an ID token is asked for per request.
    return AuthenticatedClient(base_url=base_url.rstrip("/"), token=fixed or "", headers=dict(headers or {}),
                               timeout=httpx.Timeout(timeout),
                               httpx_args={"auth": _Bearer(id_token)} if id_token is not None else {})


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

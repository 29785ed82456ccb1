"""The route declarations of the ``api`` function: :func:`route`, the request and response types,
and the route table.

Handlers are plain functions ``(req) -> (status, body)`` registered with :func:`route`. One
declaration per operation drives everything: its werkzeug rule in :data:`URL_MAP` (dispatch, 404,
and a real 405 whose ``Allow`` header lists the methods the path takes), its auth, query, body and
size checks, and its OpenAPI operation (:mod:`core.api.openapi`: every status it can answer, derived
from the error classes of :mod:`core.errors`). The route modules import this one; the app
(:mod:`core.api.app`) imports them, so nothing here imports a route module or the app.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from werkzeug import exceptions as routing_exceptions
from werkzeug.routing import Map, Rule

from core.api.params import Query
from core.errors import (
    BadRequest,
    Forbidden,
    GenerationChanged,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RetryableError,
    StrataError,
    Unauthorized,
    UnsupportedMediaType,
    WritesBlocked,
    WritesDisabled,
)
from core.ports import Ports


@dataclass
class Request:
    ctx: Ports
    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw_body: bytes
    uid: str = ""
    key: Any = None  # the verified personal key (core.services.api_keys.KeyCaller); None for an ID token
    body: Any = None
    values: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> Any:
        """A declared query parameter, parsed and bounded by the dispatcher (its default when absent)."""
        return self.values[name]


Response = tuple[int, Any] | tuple[int, Any, dict[str, str]]
Handler = Callable[[Request], Response]


WRITE_METHODS = ("POST", "PATCH", "PUT", "DELETE")
MCP_PATH = "/mcp"  # served by core/api/mcp.py, beside the route table

# What a route may answer besides its success: an error class of core/errors.py (it knows its status
# and code), or a (status, code) pair for an answer raised with a more specific code than its class's
# (``Conflict(..., code="stale_review")``) or answered by the handler itself (422 grounding_failed).
Outcome = type[StrataError] | tuple[int, str]


class MatchRule(Rule):
    """A werkzeug rule that matches but never builds URLs (nothing here calls ``url_for``).

    werkzeug generates and compiles two URL-builder functions per rule when the rule is added to
    its map: for the api's forty rules about 10 ms of CPU on every cold start, for nothing. Building
    a URL from one of these rules raises."""

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        return _no_url_building


def _no_url_building(*args: Any, **kwargs: Any) -> tuple[str, str]:
    raise RuntimeError("the api's routes match requests only; they do not build URLs")


@dataclass
class Route:
    """One operation, declared once: it drives dispatch (a werkzeug rule), validation and OpenAPI."""

    method: str
    pattern: str
    handler: Handler
    summary: str
    body_model: type[BaseModel] | None = None
    response_model: Any = None
    auth: bool = True
    query_params: tuple[Query, ...] = ()
    status: int = 200
    raises: tuple[Outcome, ...] = ()
    media_type: str = "application/json"
    # The personal-key scope the route needs ("read" or "read+write"); None: an ID token only.
    key_scope: str | None = None
    operation_id: str = ""  # OpenAPI's operationId, read as a method name (listMemories); see route()
    deprecated: str | None = None  # a compatibility route: the route to use instead ("POST /v1/memories")
    # The per-user rate limit the route counts against (core.services.rate_limits.KINDS), or "" for none.
    rate: str = ""

    @property
    def path_params(self) -> list[str]:
        return re.findall(r"\{(\w+)\}", self.pattern)

    @property
    def endpoint(self) -> str:
        return self.handler.__name__

    def rule(self) -> Rule:
        """The werkzeug rule: ``{name}`` is one non-empty path segment (werkzeug's ``string``)."""
        return MatchRule(re.sub(r"\{(\w+)\}", r"<\1>", self.pattern), methods=[self.method], endpoint=self.endpoint)

    def outcomes(self) -> list[Outcome]:
        """Everything this route can answer besides its success: what the dispatcher refuses for
        every route of its kind, then what its handler's services raise (``raises``)."""
        # an unknown query parameter or a bad value is refused everywhere
        found: list[Outcome] = [(BadRequest.status, "validation_error")]
        if self.auth:
            found += [Unauthorized, RetryableError]  # no token; the database or a provider unavailable
        if self.path_params:
            found.append(NotFound)
        if self.key_scope == "read+write":
            found.append(Forbidden)  # a read key
        if self.auth and self.key_scope:  # X-Strata-User naming another user than the token's or key's own
            found.append((Forbidden.status, "acting_user"))
        if self.auth and self.method in WRITE_METHODS:
            # writes blocked (account deletion, the account wiped meanwhile) or switched off (incident)
            found += [WritesBlocked, GenerationChanged, WritesDisabled]
        if self.body_model is not None:
            found += [PayloadTooLarge, UnsupportedMediaType, (BadRequest.status, "malformed_json")]
        if self.rate:
            found.append(RateLimited)  # over the user's limit for the window: 429 with Retry-After
        found += [r for r in self.raises if r not in found]
        return found

    def error_statuses(self) -> dict[int, list[str]]:
        """Every error status this route can answer, each with the error codes it may carry (what
        OpenAPI documents)."""
        codes: dict[int, list[str]] = {}
        for outcome in self.outcomes():
            status, code = outcome if isinstance(outcome, tuple) else (outcome.status, outcome.code)
            listed = codes.setdefault(status, [])
            if code not in listed:
                listed.append(code)
        return dict(sorted(codes.items()))


ROUTES: list[Route] = []
URL_MAP = Map(strict_slashes=False, merge_slashes=False)
_BY_ENDPOINT: dict[str, Route] = {}


def camel_case(name: str) -> str:
    """``v1_key_create`` → ``v1KeyCreate``: the default operation id of a handler."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def route(method: str, pattern: str, summary: str, *, body: type[BaseModel] | None = None,
          response: Any = None, auth: bool = True, query: tuple[Query | str, ...] = (),
          status: int = 200, raises: tuple[Outcome, ...] = (),
          media_type: str = "application/json", key_scope: str | None = "auto", operation_id: str = "",
          deprecated: str | None = None, rate: str | None = None) -> Callable[[Handler], Handler]:
    """Register a handler. ``response`` is the success body's pydantic model (or a JSON schema dict);
    ``raises`` adds the errors its services raise beyond the ones every route of its kind can
    answer (see :meth:`Route.outcomes`). ``key_scope`` lets a personal API key call the route:
    ``read`` or ``read+write``, the scope it needs; None: only an ID token. By default a ``/v1``
    route takes a key of the scope its method needs (``read`` for a read, ``read+write`` for a
    write) and every other route takes an ID token only.
    ``operation_id`` names the operation in OpenAPI and so in the generated clients (a method name
    such as ``listMemories``; by default the handler's name in camelCase). ``deprecated`` marks a
    compatibility route and names the route to use instead. ``rate`` names the per-user rate limit
    the route counts against (``writes``, ``extraction``, ``search``; "" none); by default every
    authenticated write counts as ``writes`` and nothing else counts."""
    if key_scope == "auto":  # a /v1 route takes a key of the scope its method needs
        key_scope = (None if not auth or not pattern.startswith("/v1/")
                     else "read" if method in ("GET", "HEAD") else "read+write")
    if key_scope not in (None, "read", "read+write"):
        raise ValueError(f"unknown key scope {key_scope!r}")
    if rate is None:
        rate = "writes" if auth and method in WRITE_METHODS else ""
    if rate not in ("", "writes", "extraction", "search"):
        raise ValueError(f"unknown rate limit {rate!r}")
    params = tuple(q if isinstance(q, Query) else Query(q) for q in query)

    def register(handler: Handler) -> Handler:
        declared = Route(method, pattern, handler, summary, body, response, auth, params, status, raises, media_type,
                         key_scope, operation_id or camel_case(handler.__name__), deprecated, rate)
        if declared.endpoint in _BY_ENDPOINT:
            raise ValueError(f"two routes are named {declared.endpoint}")
        if any(r.operation_id == declared.operation_id for r in ROUTES):
            raise ValueError(f"two routes have the operation id {declared.operation_id}")
        ROUTES.append(declared)
        _BY_ENDPOINT[declared.endpoint] = declared
        URL_MAP.add(declared.rule())
        return handler

    return register


def match_route(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """werkzeug's matcher: static segments win over parameters; a path some rule takes with another
    method is a 405 naming them (HEAD comes with GET)."""
    if path.startswith("//"):  # werkzeug ignores leading slashes; an empty first segment names nothing
        raise NotFound(f"no route {method} {path}", code="no_route")
    try:
        endpoint, params = URL_MAP.bind("strata").match(path, method)
    except routing_exceptions.MethodNotAllowed as exc:
        allowed = sorted(exc.valid_methods or [])
        raise MethodNotAllowed(f"{method} is not allowed on this route", allowed) from None
    except routing_exceptions.HTTPException:  # NotFound (a redirect cannot happen: no slash rules)
        raise NotFound(f"no route {method} {path}", code="no_route") from None
    return _BY_ENDPOINT[str(endpoint)], {k: str(v) for k, v in params.items()}

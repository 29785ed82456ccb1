"""HTTP routing for the ``api`` function: auth, body limits, JSON errors, OpenAPI.

Handlers are plain functions ``(req) -> (status, body)`` registered with :func:`route`. One
declaration per operation drives everything: its werkzeug rule in :data:`URL_MAP` (dispatch, 404,
and a real 405 whose ``Allow`` header lists the methods the path takes), its auth, query, body and
size checks, and its OpenAPI operation (:mod:`core.api.openapi`: every status it can answer, derived
from the error classes of :mod:`core.errors`). This module only translates HTTP to service calls and
errors to the contract's JSON error shape.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import secrets
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from werkzeug import exceptions as routing_exceptions
from werkzeug.routing import Map, Rule

from core import logs
from core.api import edge
from core.api.auth import authenticate
from core.api.params import Query
from core.bootstrap import Context, default_context
from core.domain import fence
from core.errors import (
    BadRequest,
    Forbidden,
    GenerationChanged,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RetryableError,
    StrataError,
    Unauthorized,
    UnsupportedMediaType,
    WritesBlocked,
    WritesDisabled,
)

log = logging.getLogger(__name__)


@dataclass
class Request:
    ctx: Context
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
        if self.auth and self.method in WRITE_METHODS:
            # writes blocked (account deletion, the account wiped meanwhile) or switched off (incident)
            found += [WritesBlocked, GenerationChanged, WritesDisabled]
        if self.body_model is not None:
            found += [PayloadTooLarge, UnsupportedMediaType, (BadRequest.status, "malformed_json")]
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
          media_type: str = "application/json", key_scope: str | None = None, operation_id: str = "",
          deprecated: str | None = None) -> Callable[[Handler], Handler]:
    """Register a handler. ``response`` is the success body's pydantic model (or a JSON schema dict);
    ``raises`` adds the errors its services raise beyond the ones every route of its kind can
    answer (see :meth:`Route.outcomes`). ``key_scope`` lets a personal API key call the route:
    ``read`` or ``read+write``, the scope it needs (without it, only an ID token).
    ``operation_id`` names the operation in OpenAPI and so in the generated clients (a method name
    such as ``listMemories``; by default the handler's name in camelCase). ``deprecated`` marks a
    compatibility route and names the route to use instead."""
    if key_scope not in (None, "read", "read+write"):
        raise ValueError(f"unknown key scope {key_scope!r}")
    params = tuple(q if isinstance(q, Query) else Query(q) for q in query)

    def register(handler: Handler) -> Handler:
        declared = Route(method, pattern, handler, summary, body, response, auth, params, status, raises, media_type,
                         key_scope, operation_id or camel_case(handler.__name__), deprecated)
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


def _validation_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "body"
    return f"{where}: {first.get('msg', 'invalid')}"


_FENCE_READS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="api-fence")


def _generation(ctx: Context, uid: str) -> int:
    return ctx.store.read_fence(uid).generation


def _record_device(req: Request) -> None:
    """Every authenticated request may register its capture device (throttled per process)."""
    from core.services import devices

    device_id, platform, version = devices.device_from_headers(req.headers)
    if device_id:
        try:
            devices.record_device(req.ctx, req.uid, device_id, platform, version, req.ctx.now())
        except Exception:  # provenance bookkeeping never fails a request
            log.warning("device registry upsert failed", exc_info=True)


def _error(exc: StrataError) -> tuple[int, Any, dict[str, str]]:
    extra = {"Allow": ", ".join(exc.allowed)} if isinstance(exc, MethodNotAllowed) else {}
    if exc.status in (429, 503):
        extra["Retry-After"] = str(exc.retry_after_s)
    return exc.status, exc.to_json(), extra


REQUEST_ID_HEADER = "X-Request-Id"


def new_request_id() -> str:
    """The id of one API request: in the ``X-Request-Id`` header of its answer, in an error's
    ``error.request_id`` and in every log line written for it, so a user's report finds the lines."""
    return "req_" + secrets.token_hex(12)


def _with_request_id(body: Any, request_id: str) -> Any:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = {**body, "error": {**body["error"], "request_id": request_id}}
    return body


def dispatch(ctx: Context, method: str, path: str, headers: dict[str, str], query: dict[str, list[str]],
             raw_body: bytes, content_length: int | None) -> tuple[int, Any, dict[str, str]]:
    """Route one request; always returns (status, JSON-able body, extra headers).

    Order: route (404/405) → ids in the path (404) → token (401) → query names and values (400) → body size
    (413), media type (415), JSON and model (400) → handler. Nothing is written before the handler,
    and the capture device is registered only for requests that succeeded."""
    try:
        matched, params = match_route(method, path.rstrip("/") or "/")
        edge.check_path_params(params)
        req = Request(ctx, method, path, params, query, headers, b"")
        if matched.auth:
            req.uid, req.key = authenticate(headers.get("authorization"), ctx, matched.key_scope)
            logs.set_uid(req.uid)
        declared = {q.name for q in matched.query_params}
        unknown = sorted(set(query) - declared)
        if unknown:  # like unknown body fields: refused, so a typo is not silently ignored
            raise BadRequest(f"unknown query parameter {unknown[0][:40]!r}", code="validation_error")
        for q in matched.query_params:
            for raw in query.get(q.name, []):
                edge.check_text(raw, q.name)
            req.values[q.name] = q.parse(query.get(q.name, []))
        if matched.body_model is not None:
            limit = ctx.settings.max_body_bytes
            if (content_length or 0) > limit or len(raw_body) > limit:
                raise PayloadTooLarge(f"request body is larger than {limit} bytes")
            req.raw_body = raw_body
            data = edge.parse_json_body(raw_body, headers.get("content-type"))
            try:
                req.body = matched.body_model.model_validate(data)
            except ValidationError as exc:
                raise BadRequest(_validation_message(exc), code="validation_error") from exc
        if req.uid and method not in ("GET", "HEAD"):
            # A write request belongs to the account generation it started in: if a wipe runs
            # before its apply commits, the apply refuses (409 account_generation_changed).
            # Read beside the handler's own first reads; the first apply waits for it (core.domain.fence).
            with fence.expect(req.uid, _FENCE_READS.submit(_generation, ctx, req.uid)):
                result = matched.handler(req)
        else:
            result = matched.handler(req)
        status, body = result[0], result[1]
        extra = result[2] if len(result) > 2 else {}  # type: ignore[misc]
        if matched.auth and status < 400:
            _record_device(req)
        return status, body, extra
    except StrataError as exc:
        if exc.status >= 500:
            log.warning("api error %s %s: %s", method, path, exc.message)
        return _error(exc)
    except Exception:  # a bug: never leak internals
        log.exception("unhandled error on %s %s", method, path)
        return 500, {"error": {"code": "internal", "message": "internal error"}}, {}


def http_error(exc: Any) -> Any:
    """A werkzeug ``HTTPException`` raised before the function runs (functions-framework's own
    ``/robots.txt`` and ``/favicon.ico`` rules, malformed requests) in the JSON error shape."""
    import flask

    status = int(getattr(exc, "code", None) or 500)
    code = re.sub(r"[^a-z0-9]+", "_", str(getattr(exc, "name", "error")).lower()).strip("_") or "error"
    if status == 404:
        code = "no_route"
    request_id = new_request_id()
    message = str(getattr(exc, "description", "") or code)
    body = {"error": {"code": code, "message": message, "request_id": request_id}}
    response = flask.Response(json.dumps(body), status=status, mimetype="application/json")
    response.headers[REQUEST_ID_HEADER] = request_id
    allowed = getattr(exc, "valid_methods", None)
    if allowed:
        response.headers["Allow"] = ", ".join(allowed)
    return response


@logs.http_entry
def handle_flask(request: Any, ctx: Context | None = None) -> Any:
    """functions-framework entry: a Flask request in, a Flask response out."""
    import flask

    from core.api import routes  # noqa: F401 - registers the handlers

    ctx = ctx or default_context()
    request_id = new_request_id()
    logs.set_request_id(request_id)
    headers = {k.lower(): v for k, v in request.headers.items()}
    limit = ctx.settings.max_body_bytes
    raw = request.stream.read(limit + 1) if request.method in ("POST", "PATCH", "PUT", "DELETE") else b""
    if request.path.rstrip("/") == MCP_PATH:  # the MCP server: JSON-RPC messages, not a REST operation
        # Imported on first use only: the SDK adds a second or two to a cold start.
        from core.api import mcp

        status, mcp_headers, payload = mcp.handle(ctx, request.method, headers, raw, request.content_length)
        if status >= 400 and payload[:1] == b"{":  # the REST error shape (401, 413, ...), not a JSON-RPC answer
            with contextlib.suppress(ValueError):
                payload = json.dumps(_with_request_id(json.loads(payload), request_id)).encode()
        response = flask.Response(payload, status=status, headers=mcp_headers)
        response.headers[REQUEST_ID_HEADER] = request_id
        return response
    status, body, extra = dispatch(ctx, request.method, request.path, headers,
                                   {k: request.args.getlist(k) for k in request.args}, raw,
                                   request.content_length)
    log.info(json.dumps({"event": "api_request", "method": request.method, "path": request.path, "status": status}))
    body = _with_request_id(body, request_id) if status >= 400 else body
    if isinstance(body, str | Iterator):  # JSON lines, streamed when the handler gives an iterator
        response = flask.Response(body, status=status, mimetype="application/x-ndjson")
    else:
        response = flask.Response(json.dumps(body, default=str), status=status, mimetype="application/json")
    for key, value in extra.items():
        response.headers[key] = value
    response.headers[REQUEST_ID_HEADER] = request_id
    return response

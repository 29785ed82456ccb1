"""HTTP routing for the ``api`` function: auth, body limits, JSON errors, OpenAPI.

Handlers are plain functions ``(req) -> (status, body)`` registered with :func:`route`; this module
only translates HTTP to service calls and errors to the contract's JSON error shape.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from core.api.auth import uid_from_authorization
from core.bootstrap import Context, default_context
from core.errors import BadRequest, NotFound, PayloadTooLarge, StrataError

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
    body: Any = None

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def int_arg(self, name: str, default: int, low: int, high: int) -> int:
        raw = self.arg(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError as exc:
            raise BadRequest(f"{name} must be an integer", code="validation_error") from exc
        if not low <= value <= high:
            raise BadRequest(f"{name} must be between {low} and {high}", code="validation_error")
        return value

    def bool_arg(self, name: str, default: bool = False) -> bool:
        raw = self.arg(name)
        if raw is None or raw == "":
            return default
        lowered = raw.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise BadRequest(f"{name} must be true or false", code="validation_error")


Response = tuple[int, Any] | tuple[int, Any, dict[str, str]]
Handler = Callable[[Request], Response]


@dataclass
class Route:
    method: str
    pattern: str
    handler: Handler
    summary: str
    body_model: type[BaseModel] | None = None
    response_model: type[BaseModel] | None = None
    auth: bool = True
    query_params: tuple[str, ...] = ()
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        self.regex = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.pattern) + "$")


ROUTES: list[Route] = []


def route(method: str, pattern: str, summary: str, *, body: type[BaseModel] | None = None,
          response: type[BaseModel] | None = None, auth: bool = True,
          query: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        ROUTES.append(Route(method, pattern, handler, summary, body, response, auth, query))
        return handler

    return register


def _match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    allowed = False
    for candidate in sorted(ROUTES, key=lambda r: r.pattern.count("{")):  # static segments win
        found = candidate.regex.match(path)
        if found:
            if candidate.method == method:
                return candidate, found.groupdict()
            allowed = True
    if allowed:
        raise StrataError("method not allowed on this route", code="method_not_allowed")
    raise NotFound(f"no route {method} {path}", code="no_route")


def _validation_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "body"
    return f"{where}: {first.get('msg', 'invalid')}"


def _record_device(req: Request) -> None:
    """Every authenticated request may register its capture device (throttled per process)."""
    from core.services import devices

    device_id, platform, version = devices.device_from_headers(req.headers)
    if device_id:
        try:
            devices.record_device(req.ctx, req.uid, device_id, platform, version, req.ctx.now())
        except Exception:  # provenance bookkeeping never fails a request
            log.warning("device registry upsert failed", exc_info=True)


def dispatch(ctx: Context, method: str, path: str, headers: dict[str, str], query: dict[str, list[str]],
             raw_body: bytes, content_length: int | None) -> tuple[int, Any, dict[str, str]]:
    """Route one request; always returns (status, JSON-able body, extra headers)."""
    try:
        matched, params = _match(method, path.rstrip("/") or "/")
        req = Request(ctx, method, path, params, query, headers, b"")
        if matched.auth:
            req.uid = uid_from_authorization(headers.get("authorization"), ctx.settings)
            _record_device(req)
        limit = ctx.settings.max_body_bytes
        if (content_length or 0) > limit or len(raw_body) > limit:
            raise PayloadTooLarge(f"request body is larger than {limit} bytes")
        req.raw_body = raw_body
        if matched.body_model is not None:
            try:
                data = json.loads(raw_body or b"null")
            except (ValueError, UnicodeDecodeError) as exc:
                raise BadRequest("request body is not valid JSON", code="malformed_json") from exc
            try:
                req.body = matched.body_model.model_validate(data)
            except ValidationError as exc:
                raise BadRequest(_validation_message(exc), code="validation_error") from exc
        result = matched.handler(req)
        status, body = result[0], result[1]
        extra = result[2] if len(result) > 2 else {}  # type: ignore[misc]
        return status, body, extra
    except StrataError as exc:
        status = 405 if exc.code == "method_not_allowed" else exc.status
        if status >= 500:
            log.warning("api error %s %s: %s", method, path, exc.message)
        return status, exc.to_json(), {}
    except Exception:  # a bug: never leak internals
        log.exception("unhandled error on %s %s", method, path)
        return 500, {"error": {"code": "internal", "message": "internal error"}}, {}


def handle_flask(request: Any, ctx: Context | None = None) -> Any:
    """functions-framework entry: a Flask request in, a Flask response out."""
    import flask

    from core.api import routes  # noqa: F401 - registers the handlers

    ctx = ctx or default_context()
    headers = {k.lower(): v for k, v in request.headers.items()}
    limit = ctx.settings.max_body_bytes
    raw = request.stream.read(limit + 1) if request.method in ("POST", "PATCH", "PUT", "DELETE") else b""
    status, body, extra = dispatch(ctx, request.method, request.path, headers,
                                   {k: request.args.getlist(k) for k in request.args}, raw,
                                   request.content_length)
    if isinstance(body, str):
        response = flask.Response(body, status=status, mimetype="application/x-ndjson")
    else:
        response = flask.Response(json.dumps(body, default=str), status=status, mimetype="application/json")
    for key, value in extra.items():
        response.headers[key] = value
    return response

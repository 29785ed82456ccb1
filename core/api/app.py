"""The ``api`` function: dispatch, auth, body limits, JSON errors, request ids.

The routes are declared with :func:`core.api.declare.route` in the route modules, which this module
imports explicitly (:data:`ROUTE_MODULES`; their order is the route table's and the OpenAPI
document's). This module only translates HTTP to service calls and errors to the contract's JSON
error shape.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from core import logs, tracing
from core.api import (
    adapter_routes,
    conversation_routes,
    cors,
    deletion_routes,
    edge,
    key_routes,
    memory_routes,
    openapi,
    routes,
    webhook_routes,
)
from core.api.auth import authenticate
from core.api.declare import MCP_PATH, ROUTES, WRITE_METHODS, Request, Route, match_route
from core.bootstrap import Context, default_context
from core.domain import credentials, fence
from core.errors import (
    BadRequest,
    MethodNotAllowed,
    PayloadTooLarge,
    StrataError,
)
from core.services import rate_limits

# Every module that declares routes, in the order their routes are registered.
ROUTE_MODULES: tuple[ModuleType, ...] = (
    routes, adapter_routes, conversation_routes, deletion_routes, key_routes, memory_routes, webhook_routes,
)

log = logging.getLogger(__name__)


def _validation_message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "body"
    return f"{where}: {first.get('msg', 'invalid')}"


# bench pools --rtt-ms 8, sequential -> pooled: create/edit/delete 3/4/8 -> 2/3/7 round trips.
_FENCE_READS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="api-fence")


def _generation(ctx: Context, uid: str) -> int:
    return ctx.store.read_fence(uid).generation


def _device_id(headers: dict[str, str]) -> str | None:
    from core.services import devices

    return devices.device_from_headers(headers)[0]


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


def _parse_input(req: Request, matched: Route, raw_body: bytes, content_length: int | None) -> None:
    """A write's ``Idempotency-Key``, the query parameters and the body, checked and parsed into
    ``req`` (400, 413, 415 before anything runs)."""
    if req.method in WRITE_METHODS:
        edge.idempotency_key(req.headers)  # an over-long key is a 400, never cut
    declared = {q.name for q in matched.query_params}
    unknown = sorted(set(req.query) - declared)
    if unknown:  # like unknown body fields: refused, so a typo is not silently ignored
        raise BadRequest(f"unknown query parameter {unknown[0][:40]!r}", code="validation_error")
    for q in matched.query_params:
        for raw in req.query.get(q.name, []):
            edge.check_text(raw, q.name)
        req.values[q.name] = q.parse(req.query.get(q.name, []))
    if matched.body_model is None:
        return
    limit = req.ctx.settings.max_body_bytes
    if (content_length or 0) > limit or len(raw_body) > limit:
        raise PayloadTooLarge(f"request body is larger than {limit} bytes")
    req.raw_body = raw_body
    data = edge.parse_json_body(raw_body, req.headers.get("content-type"))
    try:
        req.body = matched.body_model.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(_validation_message(exc), code="validation_error") from exc


def dispatch(ctx: Context, method: str, path: str, headers: dict[str, str], query: dict[str, list[str]],
             raw_body: bytes, content_length: int | None) -> tuple[int, Any, dict[str, str]]:
    """Route one request; always returns (status, JSON-able body, extra headers).

    Order: route (404/405) → ids in the path (404) → token (401) → a write's Idempotency-Key (400) →
    query names and values (400) → body size
    (413), media type (415), JSON and model (400) → the user's rate limit (429) → handler. Nothing is written before the handler,
    and the capture device is registered only for requests that succeeded."""
    try:
        matched, params = match_route(method, path.rstrip("/") or "/")
        edge.check_path_params(params)
        req = Request(ctx, method, path, params, query, headers, b"")
        if matched.auth:
            req.uid, req.key = authenticate(headers.get("authorization"), ctx, matched.key_scope,
                                            headers.get("x-strata-user"))
            logs.set_uid(req.uid)
        _parse_input(req, matched, raw_body, content_length)
        if matched.rate:  # after the input checks (bad input is a 400 and counts for nothing), before any work
            rate_limits.check(ctx, req.uid, matched.rate)
        if req.uid and method not in ("GET", "HEAD"):
            # A write request belongs to the account generation it started in: if a wipe runs
            # before its apply commits, the apply refuses (409 account_generation_changed).
            # Read beside the handler's own first reads; the first apply waits for it (core.domain.fence).
            # Every commit it makes records the credential it was made with.
            credential = credentials.of_request(getattr(req.key, "key_id", None), _device_id(headers))
            with fence.expect(req.uid, _FENCE_READS.submit(_generation, ctx, req.uid)), \
                    credentials.acting_as(credential), credentials.reading_as(req.key):
                result = matched.handler(req)
        else:
            with credentials.reading_as(req.key):  # a key's reads show restricted memories only if it may
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


UNMATCHED_ROUTE = "(unmatched)"


def route_template(method: str, path: str) -> str:
    """The declared pattern of the route ``path`` is (``/v1/memories/{memory_id}``), whichever
    method it was asked with; ``(unmatched)`` for a path no route takes. Logs and spans name a
    request by it, never by its raw path (ids, and a uid where a route carries one)."""
    path = path.rstrip("/") or "/"
    if path == MCP_PATH:
        return MCP_PATH
    try:
        return match_route(method, path)[0].pattern
    except MethodNotAllowed as exc:
        if exc.allowed:
            with contextlib.suppress(StrataError):
                return match_route(exc.allowed[0], path)[0].pattern
    except StrataError:
        pass
    return UNMATCHED_ROUTE


def log_request(method: str, path: str, status: int, started: float) -> None:
    """The request's ``api_request`` line: method, route template, status and latency in ms (from
    the entry to the answer built; a streamed body's lines are written after). The root span takes
    the route's name."""
    route = route_template(method, path)
    latency_ms = round((time.perf_counter() - started) * 1000, 2)
    tracing.annotate(f"{method} {route}", **{"http.request.method": method, "http.route": route,
                                             "http.response.status_code": status})
    log.info(json.dumps({"event": "api_request", "method": method, "route": route, "status": status,
                         "latency_ms": latency_ms}))


@logs.http_entry
def handle_flask(request: Any, ctx: Context | None = None) -> Any:
    """functions-framework entry: a Flask request in, a Flask response out."""
    started = time.perf_counter()
    ctx = ctx or default_context()
    request_id = new_request_id()
    logs.set_request_id(request_id)
    headers = {k.lower(): v for k, v in request.headers.items()}
    response = _respond(ctx, request, headers, request_id)
    for key, value in cors.answer_headers(ctx.settings, headers).items():
        response.headers.setdefault(key, value)
    response.headers[REQUEST_ID_HEADER] = request_id
    log_request(request.method, request.path, response.status_code, started)
    tracing.flush_later(response.call_on_close)  # Cloud Trace's round trip after the answer is sent
    return response


def preflight(ctx: Context, path: str, headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
    """``OPTIONS`` on any path (the CORS preflight, which carries no token): ``204`` with the methods
    the path takes and, for an allowed origin, the CORS headers (:mod:`core.api.cors`); 404 for an
    unknown path. Answered before dispatch, without auth, and writes nothing."""
    path = path.rstrip("/") or "/"
    if path == MCP_PATH:
        methods = ["POST"]
    else:
        try:
            match_route("OPTIONS", path)
            methods = []  # no route takes OPTIONS itself
        except MethodNotAllowed as exc:
            methods = list(exc.allowed)
        except StrataError as exc:
            return _error(exc)
    return 204, None, cors.preflight_headers(ctx.settings, headers, [*methods, "OPTIONS"])


def _respond(ctx: Context, request: Any, headers: dict[str, str], request_id: str) -> Any:
    import flask

    limit = ctx.settings.max_body_bytes
    raw = request.stream.read(limit + 1) if request.method in ("POST", "PATCH", "PUT", "DELETE") else b""
    if request.method == "OPTIONS":
        status, body, extra = preflight(ctx, request.path, headers)
    elif request.path.rstrip("/") == MCP_PATH:  # the MCP server: JSON-RPC messages, not a REST operation
        # Imported on first use only: the SDK adds a second or two to a cold start.
        from core.api import mcp

        status, mcp_headers, payload = mcp.handle(ctx, request.method, headers, raw, request.content_length)
        if status >= 400 and payload[:1] == b"{":  # the REST error shape (401, 413, ...), not a JSON-RPC answer
            with contextlib.suppress(ValueError):
                payload = json.dumps(_with_request_id(json.loads(payload), request_id)).encode()
        return flask.Response(payload, status=status, headers=mcp_headers)
    else:
        status, body, extra = dispatch(ctx, request.method, request.path, headers,
                                       {k: request.args.getlist(k) for k in request.args}, raw,
                                       request.content_length)
    body = _with_request_id(body, request_id) if status >= 400 else body
    if status == 204:
        response = flask.Response(status=204)
    elif isinstance(body, str | Iterator):  # JSON lines, streamed when the handler gives an iterator
        response = flask.Response(body, status=status, mimetype="application/x-ndjson")
    else:
        response = flask.Response(json.dumps(body, default=str), status=status, mimetype="application/json")
    for key, value in extra.items():
        response.headers[key] = value
    return response


def main() -> None:
    """``python -m core.api.app``: print the OpenAPI document of every route (what
    ``GET /openapi.json`` answers), from which ``make client-js`` generates the TypeScript client."""
    print(json.dumps(openapi.document(ROUTES), indent=1, sort_keys=False))


if __name__ == "__main__":
    main()

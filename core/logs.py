"""Structured logging for the functions: the one place logging is configured.

Each record becomes one JSON object on one line, the shape Cloud Logging reads as a structured
entry: ``severity`` (its names), ``message``, ``logger``, and when the request carried a trace
header (``X-Cloud-Trace-Context`` or W3C ``traceparent``, or a CloudEvent's ``traceparent``)
``logging.googleapis.com/trace`` as ``projects/{project}/traces/{trace_id}``. A message that is a
JSON object (``log.info(json.dumps({...}))``, :func:`core.services.webhooks.log_json`) is merged in as
fields, its ``event`` becoming the ``message``.

Users are pseudonymous in logs: a ``uid`` field becomes ``uid_hash`` (``uids`` → ``uid_hashes``),
an HMAC-SHA256 of the uid keyed with the ``log_hash_key`` setting (a secret in production, so a
reader of the logs cannot hash candidate uids to find one; ``strata uid-hash`` maps a hash back to
the user for an operator),
and the raw uid of the request in scope is replaced by its hash anywhere in the text, exceptions
included (URL-encoded too); every line written in a user's scope carries its ``uid_hash``. Fields that could carry memory or transcript text (``content``, ``text``, ``quote``,
``transcript``, ``transcript_segments``) are dropped, never logged.

:func:`configure` is idempotent and called by each function entry point on its first event (not at
import time); it routes Python warnings and every library logger through the same handler, so no
other line format reaches the function's output. The entry wrappers also open the unit of work's
root span (:mod:`core.tracing`); a line written inside a recording span carries its trace (when no
header gave one) and ``logging.googleapis.com/spanId``, so Cloud Logging links the line to the trace.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any
from urllib.parse import quote, quote_plus

from core import tracing

TRACE_FIELD = "logging.googleapis.com/trace"
SPAN_FIELD = "logging.googleapis.com/spanId"
LOCAL_HASH_KEY = "strata-log"  # the key of uid_hash when ``log_hash_key`` is empty (local, tests)
QUIET_LOGGERS = ("httpx", "httpcore", "urllib3", "google.auth", "grpc")
REDACTED_FIELDS = frozenset({"content", "text", "quote", "transcript", "transcript_segments"})
_SEVERITY = {logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARNING", logging.ERROR: "ERROR",
             logging.CRITICAL: "CRITICAL"}
_CLOUD_TRACE = re.compile(r"^([0-9a-fA-F]{32})(?:/|$)")
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")

_trace: ContextVar[str | None] = ContextVar("strata_trace", default=None)
_uid: ContextVar[str | None] = ContextVar("strata_uid", default=None)
_request: ContextVar[str | None] = ContextVar("strata_request", default=None)
_lock = threading.Lock()
_handler: logging.Handler | None = None


def hash_uid(uid: str, key: str | None = None) -> str:
    """A stable pseudonym of ``uid``: ``uh_`` and 16 hex digits of HMAC-SHA256(``key``, uid), the
    key being the ``log_hash_key`` setting unless given (the same in every log line; without the key
    a candidate uid cannot be checked against it)."""
    secret = (_hash_key() if key is None else key) or LOCAL_HASH_KEY
    return "uh_" + hmac.new(secret.encode(), uid.encode(), hashlib.sha256).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _hash_key() -> str:
    """The settings' ``log_hash_key`` (one resolution of the variables)."""
    from core.config import load

    return load().log_hash_key


def trace_id(headers: Mapping[str, str]) -> str | None:
    """The trace id of ``X-Cloud-Trace-Context`` or ``traceparent`` (keys case-insensitive)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    cloud = _CLOUD_TRACE.match(lowered.get("x-cloud-trace-context", "").strip())
    if cloud:
        return cloud.group(1).lower()
    parent = _TRACEPARENT.match(lowered.get("traceparent", "").strip().lower())
    return parent.group(1) if parent else None


@functools.lru_cache(maxsize=1)
def _project() -> str:
    """The project id the trace field names: the settings' (one resolution of the variables)."""
    from core.config import load  # settings are built on first use, not when logging is configured

    return load().project_id


@contextlib.contextmanager
def scope(*, uid: str | None = None, headers: Mapping[str, str] | None = None) -> Iterator[None]:
    """Log lines written inside carry the request's trace and hide its uid."""
    trace_token = _trace.set(trace_id(headers or {}) or _trace.get())
    uid_token = _uid.set(uid or _uid.get())
    request_token = _request.set(_request.get())
    try:
        yield
    finally:
        _trace.reset(trace_token)
        _uid.reset(uid_token)
        _request.reset(request_token)


def set_request_id(request_id: str) -> None:
    """Name the API request in scope: every line written for it carries ``request_id``."""
    _request.set(request_id)


def set_uid(uid: str | None) -> None:
    """Name the user of the request in scope once it is known (after decoding or auth); the
    recording span carries its ``uid_hash`` too."""
    if uid:
        _uid.set(uid)
        if tracing.enabled():
            hashed = hash_uid(uid)
            tracing.annotate(**{"strata.uid_hash": hashed})


def _hide(text: str, uid: str) -> str:
    for form in {uid, quote(uid, safe=""), quote_plus(uid, safe="")}:
        if form in text:
            text = text.replace(form, hash_uid(uid))
    return text


def _clean(value: Any, uid: str | None) -> Any:
    if isinstance(value, str):
        return _hide(value, uid) if uid else value
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key = str(key)
            if key in REDACTED_FIELDS:
                continue
            if key == "uid" and isinstance(item, str):
                out["uid_hash"] = hash_uid(item)
            elif key == "uids" and isinstance(item, list):
                out["uid_hashes"] = [hash_uid(str(u)) for u in item]
            else:
                out[key] = _clean(item, uid)
        return out
    if isinstance(value, list | tuple):
        return [_clean(v, uid) for v in value]
    return value


class JsonFormatter(logging.Formatter):
    """One JSON object per record (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        uid = _uid.get()
        message = record.getMessage()
        fields: dict[str, Any] = {}
        if message.startswith("{"):
            try:
                parsed = json.loads(message)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                fields = parsed
                message = str(fields.pop("event", "event"))
        entry: dict[str, Any] = {
            "severity": _SEVERITY.get(record.levelno, "DEFAULT"),
            "message": message,
            "logger": record.name,
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            **fields,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        trace = _trace.get()
        ids = tracing.current_ids()
        if ids:
            trace = trace or ids[0]
            entry[SPAN_FIELD] = ids[1]
        if trace:
            entry[TRACE_FIELD] = f"projects/{_project()}/traces/{trace}"
        request_id = _request.get()
        if request_id and "request_id" not in entry:
            entry["request_id"] = request_id
        cleaned = _clean(entry, uid)
        if uid and "uid_hash" not in cleaned:
            cleaned["uid_hash"] = hash_uid(uid)  # every line of a user's request can be found by it
        return json.dumps(cleaned, default=str)


def configure(stream: IO[str] | None = None, level: int = logging.INFO) -> logging.Handler:
    """Route every logger (and warnings) through one JSON handler on ``stream`` (stderr)."""
    global _handler
    with _lock:
        if _handler is not None and stream is None:
            return _handler
        handler = logging.StreamHandler(stream or sys.stderr)
        handler.setFormatter(JsonFormatter())
        root = logging.getLogger()
        for old in list(root.handlers):
            root.removeHandler(old)
        root.addHandler(handler)
        root.setLevel(level)
        # Libraries that installed their own stream handler (Flask's app logger, werkzeug) go through ours.
        for logger in list(logging.root.manager.loggerDict.values()):
            if isinstance(logger, logging.Logger):
                for old in list(logger.handlers):
                    if isinstance(old, logging.StreamHandler):
                        logger.removeHandler(old)
                logger.propagate = True
        for chatty in QUIET_LOGGERS:  # a line per provider call, with uids in query strings
            logging.getLogger(chatty).setLevel(logging.WARNING)
        logging.captureWarnings(True)
        _handler = handler
        return handler




def _event_headers(cloud_event: Any) -> dict[str, str]:
    """The event's trace: a Pub/Sub message's ``traceparent`` attribute (set by the publisher,
    :mod:`core.adapters.pubsub`, so a drain joins the trace of the work that nudged it), else the
    CloudEvent's own ``traceparent``."""
    parent: Any = None
    with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
        data = cloud_event.data
        if isinstance(data, bytes | str):  # a Firestore event's data is a protobuf: not parsed
            data = json.loads(data) if data[:1] in (b"{", "{") else {}
        parent = ((data.get("message") or {}).get("attributes") or {}).get("traceparent")
    if not isinstance(parent, str):
        try:
            parent = cloud_event.get("traceparent")
        except (AttributeError, KeyError, TypeError):
            parent = None
    return {"traceparent": parent} if isinstance(parent, str) else {}


def event_entry(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A CloudEvent function's entry: logging configured, the event's trace in scope."""
    @functools.wraps(fn)
    def entry(cloud_event: Any) -> Any:
        configure()
        headers = _event_headers(cloud_event)
        with scope(headers=headers), tracing.root(fn.__name__, headers=headers, kind="CONSUMER"):
            return fn(cloud_event)

    return entry


def http_entry(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An HTTP function's entry: logging configured, the request's trace header in scope."""
    @functools.wraps(fn)
    def entry(request: Any, *args: Any, **kwargs: Any) -> Any:
        configure()
        headers = dict(request.headers.items())
        with scope(headers=headers), tracing.root(fn.__name__, headers=headers):
            return fn(request, *args, **kwargs)

    return entry


__all__ = ["LOCAL_HASH_KEY", "REDACTED_FIELDS", "SPAN_FIELD", "TRACE_FIELD", "JsonFormatter", "configure", "event_entry", "hash_uid", "http_entry",
           "scope", "set_request_id", "set_uid", "trace_id"]

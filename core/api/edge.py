"""Validation at the HTTP edge, applied by the dispatcher to every route.

Everything a request carries that can become a Firestore document id, field name or value is
checked here, before any handler runs, so bad input is a 4xx that writes nothing and never a 500:

* path segments (memory, conversation, review ids ...) and token subjects follow Firestore's
  document-id rules: 1..:data:`MAX_ID_CHARS` characters, no ``/``, no control characters, not
  ``.`` / ``..``, not ``__...__`` (reserved);
* JSON bodies are ``application/json``, nested at most :data:`MAX_JSON_DEPTH` deep, hold no
  ``NaN``/``Infinity``, no number that is not finite, no integer outside int64, no string with a lone
  UTF-16 surrogate or a control character other than tab / newline / carriage return, and no
  object key that is empty, reserved (``__...__``) or longer than :data:`MAX_ID_CHARS`;
* query parameters are the route's declared ones (others are 400) and their values obey the same
  string rule;
* an ``Idempotency-Key`` header on a write is at most :data:`MAX_IDEMPOTENCY_KEY` characters (a
  longer one is a 400, never cut: two keys that differ past the cut would replay each other).
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.errors import BadRequest, NotFound, UnsupportedMediaType

MAX_ID_CHARS = 512
MAX_IDEMPOTENCY_KEY = 200  # characters of an Idempotency-Key header; a longer one is a 400, never cut
MAX_JSON_DEPTH = 32
INT64 = (-(2**63), 2**63 - 1)

_RESERVED = re.compile(r"^__.*__$", re.DOTALL)
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
_ID_BAD_CHARS = re.compile(r"[/\x00-\x1f\x7f\ud800-\udfff]")
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


def valid_id(value: str) -> bool:
    """Whether ``value`` can name a Firestore document (and is a sane id at all)."""
    return (0 < len(value) <= MAX_ID_CHARS and value not in (".", "..") and not _RESERVED.match(value)
            and not _ID_BAD_CHARS.search(value))


def check_path_params(params: dict[str, str]) -> None:
    """An id no document can have names nothing: 404, like any other unknown id."""
    for name, value in params.items():
        if not valid_id(value):
            raise NotFound(f"no such {name.removesuffix('_id').replace('_', ' ')}", code="not_found")


def check_text(value: str, where: str) -> None:
    if _BAD_CHARS.search(value):
        raise BadRequest(f"{where}: control characters and lone surrogates are not allowed",
                         code="validation_error")


def idempotency_key(headers: dict[str, str]) -> str | None:
    """The request's ``Idempotency-Key`` (None when absent or empty), whole: one over
    :data:`MAX_IDEMPOTENCY_KEY` characters or with a control character is a 400."""
    key = headers.get("idempotency-key", "")
    if len(key) > MAX_IDEMPOTENCY_KEY:
        raise BadRequest(f"Idempotency-Key: at most {MAX_IDEMPOTENCY_KEY} characters, this one has {len(key)}",
                         code="validation_error")
    check_text(key, "Idempotency-Key")
    return key or None


def is_json_media_type(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json"


def _depth(raw: bytes) -> int:
    """Nesting depth of a JSON text, counted without parsing it (brackets inside strings ignored)."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub(b'""', raw)):
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _parse_int(text: str) -> int:
    value = int(text)
    if not INT64[0] <= value <= INT64[1]:
        raise BadRequest(f"integer {text[:40]} is out of range (64-bit signed)", code="validation_error")
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise BadRequest(f"number {text[:40]} is out of range", code="validation_error")
    return value


def _refuse_constant(text: str) -> Any:
    raise BadRequest(f"{text} is not a JSON number", code="validation_error")


def _check_value(value: Any, where: str) -> None:
    if isinstance(value, str):
        check_text(value, where)
    elif isinstance(value, dict):
        for key, inner in value.items():
            if not key or _RESERVED.match(key) or len(key) > MAX_ID_CHARS:
                raise BadRequest(f"{where}: field name {key[:40]!r} is not allowed", code="validation_error")
            check_text(key, where)
            _check_value(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _check_value(inner, f"{where}[{index}]")


def parse_json_body(raw: bytes, content_type: str | None) -> Any:
    """The request body as JSON, or a 4xx saying why not."""
    if not is_json_media_type(content_type):
        raise UnsupportedMediaType("request body must be application/json")
    if _depth(raw) > MAX_JSON_DEPTH:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", code="validation_error")
    try:
        text = raw.decode("utf-8") if raw else "null"
        data = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BadRequest("request body is not valid JSON", code="malformed_json") from exc
    _check_value(data, "body")
    return data

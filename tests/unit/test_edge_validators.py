"""The edge validators of the API (core/api/edge.py) and the dispatcher's 404/405, without servers.

Expected values come from Firestore's documented document-id rules (not ``.``/``..``, not
``__.*__``, no ``/``), RFC 8259 JSON and int64 bounds, computed independently here."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.api import edge
from core.api.app import dispatch
from core.errors import BadRequest, NotFound

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"))),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(alphabet="abcxyz[]{}\"\\", min_size=1, max_size=5), inner, max_size=3),
    max_leaves=20)


def _reference_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_reference_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_reference_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=200, derandomize=True)
@given(JSON)
def test_depth_scanner_agrees_with_the_parsed_depth(value: Any) -> None:
    raw = json.dumps(value).encode()
    assert edge._depth(raw) == _reference_depth(value)
    if _reference_depth(value) <= edge.MAX_JSON_DEPTH and not _has_reserved_key(value):
        assert edge.parse_json_body(raw, "application/json") == value


def _has_reserved_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k.startswith("__") and k.endswith("__") and len(k) >= 4 for k in value) or any(
            _has_reserved_key(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_reserved_key(v) for v in value)
    return False


@pytest.mark.parametrize("raw", [
    b"[" * 50_000 + b"]" * 50_000, b'{"a": ' * 40 + b"1" + b"}" * 40, b'{"n": 18446744073709551616}',
    b'{"n": -9223372036854775809}', b'{"x": 1e309}', b'{"x": -1e999}', b'{"x": NaN}', b'{"x": Infinity}',
    b'{"x": "\\ud800"}', b'{"x": "a\\u0000b"}', b'{"x": "\\u001b[31m"}', b'{"__x__": 1}', b'{"": 1}',
    b'{"a": [{"__name__": 2}]}', b"\xff\xfe", b'{"a": 1', b"1" * 5000,
])
def test_hostile_json_is_bad_request(raw: bytes) -> None:
    with pytest.raises(BadRequest):
        edge.parse_json_body(raw, "application/json")


def test_bounds_are_inclusive() -> None:
    body = json.dumps({"max": 2**63 - 1, "min": -(2**63), "tab": "a\tb\nc\r", "deep": [[[]]]}).encode()
    assert edge.parse_json_body(body, "application/json; charset=utf-8")["max"] == 2**63 - 1
    nested = b"[" * edge.MAX_JSON_DEPTH + b"]" * edge.MAX_JSON_DEPTH
    assert edge.parse_json_body(nested, "application/json") is not None


@pytest.mark.parametrize("content_type", [None, "", "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/jsonp"])
def test_non_json_media_types_are_415(content_type: str | None) -> None:
    with pytest.raises(edge.UnsupportedMediaType):
        edge.parse_json_body(b'{"content": "x"}', content_type)


@pytest.mark.parametrize("value", [".", "..", "__main__", "__x__", "____", "a/b", "", "x" * 513, "a\x00b", "\ud800"])
def test_ids_no_document_can_have(value: str) -> None:
    assert not edge.valid_id(value)
    with pytest.raises(NotFound):
        edge.check_path_params({"memory_id": value})


@pytest.mark.parametrize("value", ["mem_0123abcd", "review:mem_1:r2:mem_3,mem_4", "_x", "x__", "__x", "...",
                                   "c-morning-standup", "x" * 512])
def test_ids_documents_can_have(value: str) -> None:
    assert edge.valid_id(value)
    edge.check_path_params({"memory_id": value})


def test_dispatcher_answers_unknown_paths_and_methods_in_json() -> None:
    status, body, headers = dispatch(None, "GET", "/nope", {}, {}, b"", None)  # type: ignore[arg-type]
    assert status == 404 and body["error"]["code"] == "no_route"
    status, body, headers = dispatch(None, "TRACE", "/v1/memories", {}, {}, b"", None)  # type: ignore[arg-type]
    assert status == 405 and body["error"]["code"] == "method_not_allowed"
    assert headers["Allow"] == "DELETE, GET, HEAD, POST"  # list, create, delete all
    status, body, _ = dispatch(None, "GET", "/v1/memories/__main__", {}, {}, b"", None)  # type: ignore[arg-type]
    assert status == 404


def test_declared_query_parameters_are_parsed_strictly() -> None:
    from core.api.params import Query

    limit = Query("limit", "integer", 100, 1, 500)
    assert limit.parse([]) == 100 and limit.parse(["7"]) == 7
    scope = Query("device_scope", enum=("current", "all"), default="all")
    ids = Query("device_ids", "array", max_length=8)
    for query, values in [(limit, [""]), (limit, ["0"]), (limit, ["501"]), (limit, ["1.5"]),
                          (Query("cascade", "boolean", True), [""]), (Query("cascade", "boolean", True), ["maybe"]),
                          (scope, [""]), (scope, ["nearby"]), (ids, ["ios_0a1b2c3d9"])]:
        with pytest.raises(BadRequest):
            query.parse(values)
    assert ids.parse(["a,b", "c"]) == ["a", "b", "c"]

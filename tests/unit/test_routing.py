"""One declaration per operation drives dispatch (werkzeug's URL map), the 405 with its Allow header,
and the OpenAPI document, whose error statuses come from core/errors.py's classes.

The oracles are the contract (docs/api.md: which method and path is which operation,
which errors each kind of route answers) and the error tree (each class's status and code)."""

from __future__ import annotations

from typing import Any

import pytest

from core import errors
from core.api import routes
from core.api.app import dispatch  # imports every route module
from core.api.declare import ROUTES, match_route, route
from core.api.openapi import document
from core.errors import MethodNotAllowed, NotFound

WRITES = ("post", "patch", "put", "delete")
DELETE_ONE = {"/v1/memories/{memory_id}", "/v3/memories/{memory_id}", "/v1/mcp/memories/{memory_id}", "/v1/tools/memories/{memory_id}"}


@pytest.mark.parametrize(("method", "path", "handler", "params"), [
    ("GET", "/v1/memories", "v1_list", {}),
    ("GET", "/v1/memories/mem_1", "v1_get", {"memory_id": "mem_1"}),
    ("GET", "/v1/memories/search", "v1_search", {}),  # a static segment wins over {memory_id}
    ("GET", "/v1/memories/export", "v1_export", {}),
    ("GET", "/v1/memories/archive/search", "v1_archive_search", {}),
    ("GET", "/v1/memories/mem_1/history", "v1_history", {"memory_id": "mem_1"}),
    ("POST", "/v3/memories/batch", "v3_batch", {}),
    ("PATCH", "/v3/memories/batch", "v3_edit", {"memory_id": "batch"}),  # only POST is static there
    ("GET", "/v3/memories/review-queue", "v3_review_queue", {}),
    ("POST", "/v3/memories/review-queue/r:1/resolve", "v3_review_resolve", {"review_id": "r:1"}),
    ("DELETE", "/v1/conversations/c-1", "v1_conversation_delete", {"conversation_id": "c-1"}),
    ("HEAD", "/healthz", "healthz", {}),  # HEAD comes with GET
    ("PUT", "/v1/users/developer/webhooks/memory_created", "webhook_put", {"webhook_type": "memory_created"}),
])
def test_contract_paths_reach_their_operation(method: str, path: str, handler: str, params: dict[str, str]) -> None:
    matched, found = match_route(method, path)
    assert (matched.handler.__name__, found) == (handler, params)


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("TRACE", "/v1/memories", ["DELETE", "GET", "HEAD", "POST"]),
    ("PUT", "/v3/memories", ["DELETE", "GET", "HEAD", "POST"]),
    ("GET", "/v1/knowledge-graph/rebuild", ["POST"]),
    ("POST", "/v1/knowledge-graph", ["DELETE", "GET", "HEAD"]),
    ("PATCH", "/v1/users/developer/webhooks/memory_created", ["DELETE", "GET", "HEAD", "PUT"]),
])
def test_a_method_the_path_does_not_take_is_405_naming_the_ones_it_does(method: str, path: str,
                                                                       allowed: list[str]) -> None:
    with pytest.raises(MethodNotAllowed) as caught:
        match_route(method, path)
    assert caught.value.allowed == allowed
    status, body, headers = dispatch(None, method, path + "/", {}, {}, b"", None)  # type: ignore[arg-type]
    assert (status, body["error"]["code"], headers["Allow"]) == (405, "method_not_allowed", ", ".join(allowed))


@pytest.mark.parametrize("path", ["/nope", "/v1/memories/a/b/c", "/v1", "//v1/memories"])
def test_an_unknown_path_is_404_no_route(path: str) -> None:
    with pytest.raises(NotFound):
        match_route("GET", path)
    status, body, _ = dispatch(None, "GET", path, {}, {}, b"", None)  # type: ignore[arg-type]
    assert (status, body["error"]["code"]) == (404, "no_route")


def test_two_operations_cannot_share_a_name() -> None:
    with pytest.raises(ValueError, match="v1_get"):
        route("GET", "/v9/other", "dup")(routes.v1_get)


# ------------------------------------------------------------------------------------------ OpenAPI
def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, ops in document(ROUTES)["paths"].items() for method, op in ops.items()]


def test_every_declared_route_is_one_documented_operation() -> None:
    assert sorted((p, m.upper()) for p, m, _ in _operations()) == sorted((r.pattern, r.method) for r in ROUTES)


@pytest.mark.parametrize(("path", "method", "op"), _operations(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_operation_documents_the_errors_its_kind_can_answer(path: str, method: str, op: dict[str, Any]) -> None:
    responses = op["responses"]
    codes = {int(status): r.get("x-error-codes", []) for status, r in responses.items()}
    assert "400" in responses and "validation_error" in codes[400]  # an unknown query parameter
    if "security" in op:
        assert "unauthorized" in codes[401] and "retryable" in codes[503]
        if method in WRITES and "409" in responses and codes[409]:
            assert {"writes_blocked", "account_generation_changed"} <= set(codes[409])
            assert "writes_disabled" in codes[503]
    if "{" in path:
        assert "not_found" in codes[404]
    if "requestBody" in op:
        assert codes[413] == ["payload_too_large"] and codes[415] == ["unsupported_media_type"]
        assert "malformed_json" in codes[400]
    assert ("402" in responses) == (path in DELETE_ONE and method == "delete")
    if path in DELETE_ONE and method == "delete":
        assert codes[402] == ["memory_locked"]
    assert "405" not in responses  # no operation answers it: see components.responses
    for status, response in responses.items():
        schema = response["content"][next(iter(response["content"]))]["schema"]
        if int(status) >= 400:
            assert schema == {"$ref": "#/components/schemas/Error"}, (status, schema)


def test_every_documented_error_code_agrees_with_the_error_tree() -> None:
    by_code = {cls.code: cls.status for cls in vars(errors).values()
               if isinstance(cls, type) and issubclass(cls, errors.StrataError)}
    for path, method, op in _operations():
        for status, response in op["responses"].items():
            for code in response.get("x-error-codes", []):
                # reprocess answers a transcript that grounds nothing with 422 grounding_failed (the
                # contract's), while a capture's GroundingError is a 400 of the same code
                if code in by_code and (status, code) != ("422", "grounding_failed"):
                    assert by_code[code] == int(status), (path, method, status, code)


def test_success_models_resolve_and_405_is_documented_once() -> None:
    doc = document(ROUTES)
    schemas = doc["components"]["schemas"]
    for path, method, op in _operations():
        success = [s for s in op["responses"] if int(s) < 300]
        for status in success:
            for media in op["responses"][status]["content"].values():
                ref = media["schema"].get("$ref", "")
                assert not ref or ref.rsplit("/", 1)[1] in schemas, (path, method)
    assert doc["paths"]["/v3/memories"]["post"]["responses"]["201"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/V3Memory"}
    not_allowed = doc["components"]["responses"]["MethodNotAllowed"]
    assert "Allow" in not_allowed["headers"] and not_allowed["x-error-codes"] == ["method_not_allowed"]

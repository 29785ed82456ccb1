"""The OpenAPI document as a client generator reads it (issue 31): method-like operation ids, the
package version, every ``/v1`` route with request and response schemas, the compatibility routes
deprecated with the route to use; and the position cursors of the searches and the review queue."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from core.api import routes
from core.api.app import ROUTES
from core.api.openapi import document
from core.errors import BadRequest

REPO = Path(__file__).resolve().parents[2]
# The original system's routes, kept for its clients (docs/api.md, "Compatibility routes").
LISTS = {"memories", "reviews", "keys", "commits", "nodes", "edges", "conversations"}  # list-shaped answers
COMPATIBILITY = re.compile(r"^(/v3/|/memory/|/v1/mcp/memories|/v1/tools/memories)")


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, ops in document(ROUTES)["paths"].items() for method, op in ops.items()]


def test_info_version_is_the_package_version() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert document(ROUTES)["info"]["version"] == project["version"]


def test_operation_ids_read_as_methods_and_are_unique() -> None:
    ids = [op["operationId"] for _, _, op in _operations()]
    assert len(ids) == len(set(ids))
    for operation_id in ids:
        assert re.fullmatch(r"[a-z]+(?:[A-Z0-9][a-z0-9]*)*", operation_id), operation_id
    named = {(path, method): op["operationId"] for path, method, op in _operations()}
    assert named["/v1/memories", "get"] == "listMemories"
    assert named["/v1/memories", "post"] == "createMemory"
    assert named["/v1/memories/{memory_id}", "patch"] == "updateMemory"
    assert named["/v1/memories/{memory_id}", "delete"] == "deleteMemory"


def test_compatibility_routes_are_deprecated_and_name_a_v1_route_that_exists() -> None:
    served = {f"{method.upper()} {path}" for path, method, _ in _operations()}
    for path, method, op in _operations():
        if not COMPATIBILITY.match(path):
            assert "deprecated" not in op, (method, path)
            continue
        assert op.get("deprecated") is True, (method, path)
        named = re.findall(r"\b(GET|POST|PATCH|DELETE) (/v1/[^\s,()]*[^\s,().])", op["description"])
        assert named, (method, path, op["description"])
        for replacement in named:
            assert " ".join(replacement) in served and not COMPATIBILITY.match(replacement[1]), replacement


def test_every_v1_route_has_request_and_response_schemas() -> None:
    by_operation = {(r.pattern, r.method.lower()): r for r in ROUTES}
    for path, method, op in _operations():
        if not path.startswith("/v1/") or op.get("deprecated"):
            continue
        declared = by_operation[path, method]
        # the declared answer: a success, or the refusal of the two graph routes that always refuse
        [content] = op["responses"][str(declared.status)]["content"].values()
        assert content["schema"], (method, path)
        if declared.body_model is not None:
            assert op["requestBody"]["content"]["application/json"]["schema"]["$ref"], (method, path)
        if method in ("post", "patch", "put") and declared.body_model is None:
            # a write without a body takes no input but its path (reprocess, rebuild)
            assert "requestBody" not in op


def test_every_v1_list_answer_is_cursor_paged() -> None:
    """A list-shaped /v1 answer takes a cursor and answers next_cursor; the exceptions are the
    bounded single pages docs/api.md names (the keys, at most 25; what a key wrote, at most 1,000
    of each with ``truncated``)."""
    single_page = {"/v1/keys", "/v1/keys/{key_id}/writes"}
    schemas = document(ROUTES)["components"]["schemas"]
    for path, method, op in _operations():
        if method != "get" or not path.startswith("/v1/") or op.get("deprecated") or path in single_page:
            continue
        ref = op["responses"]["200"]["content"].get("application/json", {}).get("schema", {}).get("$ref")
        if not ref:
            continue
        properties = schemas[ref.rsplit("/", 1)[1]].get("properties", {})
        if LISTS & set(properties):
            assert "next_cursor" in properties, path
            assert "cursor" in {p["name"] for p in op.get("parameters", [])}, path


def test_a_position_cursor_round_trips_and_is_bound_to_its_query() -> None:
    cursor = routes.encode_offset(20, "keyword\nchillies")
    assert routes.decode_offset(cursor, "keyword\nchillies") == 20
    assert routes.decode_offset(None, "keyword\nchillies") == 0
    for bad in (cursor, "not-a-cursor", routes.encode_offset(-1, "keyword\nbasil")):
        with pytest.raises(BadRequest) as refused:
            routes.decode_offset(bad, "keyword\nbasil")
        assert refused.value.code == "bad_cursor"


def test_a_key_cursor_round_trips_and_is_bound_to_its_resource() -> None:
    cursor = routes.encode_key(41, "history\nmem_a")
    assert routes.decode_key(cursor, "history\nmem_a", int) == 41
    assert routes.decode_key(None, "history\nmem_a", int) is None
    assert routes.decode_key(routes.encode_key("edge_x", "knowledge-graph"), "knowledge-graph", str) == "edge_x"
    for bad, scope, kind in ((cursor, "history\nmem_b", int), (cursor, "knowledge-graph", str),
                             ("not-a-cursor", "knowledge-graph", str),
                             (routes.encode_key("7", "history\nmem_a"), "history\nmem_a", int)):
        with pytest.raises(BadRequest) as refused:
            routes.decode_key(bad, scope, kind)
        assert refused.value.code == "bad_cursor"


@pytest.mark.parametrize(("ranked", "offset", "limit", "page", "next_offset", "limited"), [
    (5, 0, 2, [0, 1], 2, False),          # more follow
    (5, 4, 2, [4], None, False),          # the last page
    (3, 0, 3, [0, 1, 2], None, False),    # exactly one page, nothing more
    (10, 8, 2, [8, 9], None, True),       # stopped at the depth limit (10) with the ranking full
    (9, 8, 2, [8], None, False),          # the ranking ended before the limit
])
def test_an_offset_page(ranked: int, offset: int, limit: int, page: list[int], next_offset: int | None,
                        limited: bool) -> None:
    # ``ranked`` rows: what the route asked the service for (one past the page, at most the depth)
    rows = list(range(min(ranked, offset + limit + 1, 10)))
    got, cursor, depth_limited = routes.offset_page(rows, offset, limit, 10, "s")
    assert got == page and depth_limited is limited
    assert (routes.decode_offset(cursor, "s") if cursor else None) == next_offset


def test_a_search_walk_serves_each_memory_once_though_the_ranking_reorders() -> None:
    """Each page re-runs the ranking to a deeper cut, which may reorder it (a fusion of two
    rankings does): the cursor carries what was served, so nothing repeats and nothing is missed."""
    rankings = [["c", "a", "b"], ["a", "d", "c", "b", "e"], ["e", "b", "d", "a", "c"]]
    walked, cursor = [], None
    for ranking in rankings:
        served = routes.decode_served(cursor, "s")
        assert len(served) == len(walked)
        page, cursor, limited = routes.served_page(ranking, served, 2, 10, "s", str)
        walked += page
        assert limited is False
    assert walked == ["c", "a", "d", "b", "e"] and cursor is None
    with pytest.raises(BadRequest):
        routes.decode_served(routes.encode_served([b"abcdef"], "s"), "t")
    for bad in ("not-a-cursor", "%%%", routes.encode_offset(2, "s")):
        with pytest.raises(BadRequest):
            routes.decode_served(bad, "s")


def test_a_search_walk_stops_at_the_depth_limit() -> None:
    ranking = [str(i) for i in range(12)]
    served = [routes._mark(str(i)) for i in range(8)]
    page, cursor, limited = routes.served_page(ranking, served, 2, 10, "s", str)
    assert page == ["8", "9"] and cursor is None and limited is True


def test_the_routes_a_key_may_call_declare_the_server_key_and_x_strata_user() -> None:
    """A server key acts for the user ``X-Strata-User`` names (core.api.auth): every operation a key
    may call declares the header (so the generated clients take it) and the ``serverKey`` scheme,
    and documents the 403 ``acting_user`` of a header naming another user; the ID-token-only
    operations declare neither."""
    doc = document(ROUTES)
    assert doc["components"]["securitySchemes"]["serverKey"]["scheme"] == "bearer"
    keyed = 0
    for path, method, op in _operations():
        headers = [p for p in op.get("parameters", []) if p["in"] == "header"]
        schemes = {name for requirement in op.get("security", []) for name in requirement}
        if "x-key-scope" not in op:
            assert not headers and "serverKey" not in schemes, (method, path)
            continue
        keyed += 1
        [header] = headers
        assert header["name"] == "X-Strata-User" and header["required"] is False, (method, path)
        assert re.fullmatch(header["schema"]["pattern"], "user-42@example.com"), header
        assert {"serverKey": [op["x-key-scope"]]} in op["security"], (method, path)
        assert "acting_user" in op["responses"]["403"]["x-error-codes"], (method, path)
    named = {(path, method) for path, method, op in _operations() if "x-key-scope" in op}
    assert {("/v1/memories", "get"), ("/v1/memories", "post"), ("/v1/conversations", "post")} <= named
    assert ("/v1/keys", "post") not in named and keyed > 10

"""The device scope on every retrieval surface of the running stack (issue 27, point 14).

The spec's device identity section makes ``device_scope=current|all|explicit`` a *universal*
retrieval filter over the denormalised ``capture_device_ids``: ``current`` is the requesting device
(``X-Device-Id-Hash`` + ``X-App-Platform``), ``explicit`` the devices named in ``device_ids``,
``all`` everything (memories of an unknown device included). So every list and search answers only
memories captured on a device in the scope, on ``/v3``, ``/v1``, the search aliases, the MCP and
tool adapters and the MCP server's tools; the list responses say the scope is supported
(``X-Omi-Memory-Device-Scope-Supported``). Legacy rows have no device (the spec: legacy data has
``client_device_id=null``), so a scoped read never shows one.

A scope that matches nothing answers nothing, and must not read the store to find that out: the
Firestore reads of such a read are counted (a counting client on the emulator) and do not grow
with the user's memories.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from core import config
from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.services import reads, search
from strata_dev.bench.counting import counting_client
from tests.support.firestore_checks import wait_for

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
SCOPE_HEADER = "X-Omi-Memory-Device-Scope-Supported"
IOS = {"X-Device-Id-Hash": "0a1b2c3d", "X-App-Platform": "ios"}
ANDROID = {"X-Device-Id-Hash": "11223344", "X-App-Platform": "android"}
IOS_ID, ANDROID_ID = "ios_0a1b2c3d", "android_11223344"
NOBODY = "web_99999999"  # a well-formed device id no memory was captured on
MANY_DEVICES = [f"web_{n:08x}" for n in range(40)]  # forty devices no memory was captured on
FACTS = {"ios": "Every weekday I write in my paper journal",
         "android": "Every weekday I take the train to the office",
         "plain": "Every weekday I walk along the river"}
QUERY = "weekday"


def _uid() -> str:
    return f"dev-{uuid.uuid4().hex[:12]}"


def _auth(uid: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}", **(headers or {})}


class _Quiet:
    """A publisher that publishes nothing (reads under count publish nothing anyway)."""

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        return None


@pytest.fixture(scope="module")
def three(stack: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """A user with one memory captured on an iPhone, one on an Android phone and one of no known
    device, all projected to both indexes. Returns (uid, {"ios"|"android"|"plain": memory id})."""
    uid = _uid()
    made: dict[str, str] = {}
    with httpx.Client(base_url=stack["api_url"], timeout=60.0) as http:
        for key, headers in (("ios", IOS), ("android", ANDROID), ("plain", {})):
            response = http.post("/v3/memories", json={"content": FACTS[key]}, headers=_auth(uid, headers))
            assert response.status_code == 201, response.text
            made[key] = response.json()["id"]
    ctx = Context()
    wanted = {ids.provider_id(uid, mid) for mid in made.values()}
    wait_for(lambda: wanted <= ctx.keyword_index.provider_ids(uid) and wanted <= ctx.vector_index.provider_ids(uid),
             timeout=90, interval=0.25, what="the three memories to be projected")
    return uid, made


# Every HTTP retrieval surface: (name, request) where request(http, uid, params, headers) -> ids.
_TOOL_ID = re.compile(r"\bid (\S+)\)")


def _ids(rows: list[dict[str, Any]]) -> set[str]:
    return {row["id"] for row in rows}


def _get(path: str, extra: dict[str, str] | None = None) -> Callable[[httpx.Client, str, dict[str, str], dict[str, str]], httpx.Response]:
    def call(http: httpx.Client, uid: str, params: dict[str, str], headers: dict[str, str]) -> httpx.Response:
        return http.get(path, params={**(extra or {}), **params}, headers=_auth(uid, headers))
    return call


def _tool_search(http: httpx.Client, uid: str, params: dict[str, str], headers: dict[str, str]) -> httpx.Response:
    return http.post("/v1/tools/memories/search", params=params, json={"query": QUERY, "limit": 10},
                     headers=_auth(uid, headers))


def _listed(name: str, response: httpx.Response) -> set[str]:
    body = response.json()
    if name.startswith("tools"):
        return set(_TOOL_ID.findall(body["result_text"]))
    if isinstance(body, list):  # /v3/memories, /v1/mcp/memories
        return _ids(body)
    return _ids(body["memories"])


SURFACES = {
    "v3 list": _get("/v3/memories"),
    "v1 list": _get("/v1/memories"),
    "v1 keyword search": _get("/v1/memories/search", {"q": QUERY}),
    "v1 vector search": _get("/v1/memories/vector-search", {"q": QUERY}),
    "v1 hybrid search": _get("/v1/memories/hybrid-search", {"q": QUERY}),
    "keyword alias": _get("/memory/memory/search", {"q": QUERY}),
    "vector alias": _get("/memory/vector/search", {"q": QUERY}),
    "mcp adapter list": _get("/v1/mcp/memories"),
    "mcp adapter search": _get("/v1/mcp/memories", {"q": QUERY}),
    "tools list": _get("/v1/tools/memories"),
    "tools search": _tool_search,
}


def _expected(made: dict[str, str], devices: set[str] | None) -> set[str]:
    """The spec's filter: a memory is in scope when one of its capture devices is (``None``: all)."""
    captured = {"ios": {IOS_ID}, "android": {ANDROID_ID}, "plain": set()}
    return {mid for key, mid in made.items() if devices is None or captured[key] & devices}


CASES = [  # (params, request headers, the devices of the scope; None = all)
    ({}, IOS, None),
    ({"device_scope": "all"}, IOS, None),
    ({"device_scope": "current"}, IOS, {IOS_ID}),
    ({"device_scope": "current"}, ANDROID, {ANDROID_ID}),
    ({"device_scope": "explicit", "device_ids": ANDROID_ID}, IOS, {ANDROID_ID}),
    ({"device_scope": "explicit", "device_ids": f"{ANDROID_ID},{IOS_ID}"}, {}, {ANDROID_ID, IOS_ID}),
    ({"device_scope": "explicit", "device_ids": NOBODY}, IOS, {NOBODY}),
    # More devices than one Firestore array_contains_any takes (30): the scope is still all of them.
    ({"device_scope": "explicit", "device_ids": ",".join([*MANY_DEVICES, ANDROID_ID])}, {},
     {*MANY_DEVICES, ANDROID_ID}),
]


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_every_retrieval_surface_takes_the_device_scope(http: httpx.Client, three: tuple[str, dict[str, str]],
                                                         surface: str) -> None:
    uid, made = three
    call = SURFACES[surface]
    for params, headers, devices in CASES:
        response = call(http, uid, params, headers)
        assert response.status_code == 200, (surface, params, response.text)
        assert response.headers.get(SCOPE_HEADER) == "true", (surface, dict(response.headers))
        assert _listed(surface, response) == _expected(made, devices), (surface, params, headers)
    # A scope that cannot be applied is a clear 400, on every surface alike.
    for params, headers in (({"device_scope": "current"}, {}), ({"device_scope": "explicit"}, IOS),
                            ({"device_scope": "nearby"}, IOS), ({"device_scope": "explicit", "device_ids": "ios"}, {})):
        response = call(http, uid, params, headers)
        assert response.status_code == 400, (surface, params, response.status_code, response.text)
        assert response.json()["error"]["code"] == "validation_error"


def test_archive_search_takes_the_device_scope(http: httpx.Client, three: tuple[str, dict[str, str]]) -> None:
    uid, _ = three
    for path in ("/v1/memories/archive/search", "/memory/archive/search"):
        response = http.get(path, params={"q": QUERY, "device_scope": "current"}, headers=_auth(uid, IOS))
        assert response.status_code == 200 and response.json()["memories"] == [], response.text  # nothing archived
        assert response.headers.get(SCOPE_HEADER) == "true"
        bad = http.get(path, params={"q": QUERY, "device_scope": "current"}, headers=_auth(uid))
        assert bad.status_code == 400, bad.text


def test_the_mcp_tools_take_the_device_scope(stack: dict[str, Any], three: tuple[str, dict[str, str]]) -> None:
    uid, made = three

    async def run(headers: dict[str, str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        async with httpx2.AsyncClient(headers=_auth(uid, headers), timeout=60.0) as client, \
                Client(streamable_http_client(stack["api_url"] + "/mcp", http_client=client)) as mcp:
            return [await mcp.call_tool(name, arguments) for name, arguments in calls]

    for arguments, headers, devices in [({}, IOS, None), ({"device_scope": "current"}, IOS, {IOS_ID}),
                                        ({"device_scope": "current"}, ANDROID, {ANDROID_ID}),
                                        ({"device_scope": "explicit", "device_ids": [ANDROID_ID, IOS_ID]}, {},
                                         {ANDROID_ID, IOS_ID}),
                                        ({"device_scope": "explicit", "device_ids": [NOBODY]}, {}, {NOBODY})]:
        found, listed = anyio.run(run, headers, [("search_memories", {"query": QUERY, **arguments}),
                                                 ("list_memories", arguments)])
        for result in (found, listed):
            assert not result.is_error, result.content
            assert _ids(result.structured_content["memories"]) == _expected(made, devices), (arguments, headers)
    # current without the device headers: a tool error carrying the REST code, not a crash
    [refused] = anyio.run(run, {}, [("list_memories", {"device_scope": "current"})])
    assert refused.is_error and "validation_error" in refused.content[0].text


def test_a_legacy_row_is_outside_every_device_scope(http: httpx.Client, ctx: Context) -> None:
    uid = _uid()
    ctx.paths.doc(uid, "memories", "legacy-row-1").set(
        {"content": "Every weekday I feed the neighbour's cat", "created_at": datetime.now(UTC) - timedelta(days=400),
         "category": "interesting"})
    mine = http.post("/v3/memories", json={"content": FACTS["ios"]}, headers=_auth(uid, IOS)).json()["id"]
    every = http.get("/v1/memories", headers=_auth(uid, IOS)).json()["memories"]
    assert _ids(every) == {"legacy-row-1", mine}
    scoped = http.get("/v1/memories", params={"device_scope": "current"}, headers=_auth(uid, IOS)).json()
    assert _ids(scoped["memories"]) == {mine}
    listed = http.get("/v1/memories", params={"layer": "long_term", "device_scope": "current"},
                      headers=_auth(uid, IOS)).json()
    assert listed["memories"] == []


# ---------------------------------------------------------------------------- bounded reads
MANY = 120  # memories on the iPhone: more than one page of every scan
LEGACY = 30


def test_a_scope_that_matches_nothing_reads_nothing_of_the_store(stack: dict[str, Any], http: httpx.Client) -> None:
    uid = _uid()
    for start in range(0, MANY, 60):
        batch = [{"content": f"Note {n} about the weekday timetable"} for n in range(start, start + 60)]
        response = http.post("/v3/memories/batch", json={"memories": batch}, headers=_auth(uid, IOS))
        assert response.status_code == 201, response.text
    client = counting_client(config.load().project_id)
    ctx = Context(client=client, publisher=_Quiet())
    old = datetime.now(UTC) - timedelta(days=500)
    for n in range(LEGACY):
        ctx.paths.doc(uid, "memories", f"old-{n:03d}").set({"content": f"Old weekday note {n}",
                                                            "created_at": old + timedelta(minutes=n)})

    def reads_of(call: Callable[[], Any]) -> tuple[Any, int]:
        client.counts.reset()
        value = call()
        return value, client.counts.snapshot()["reads"]

    # The unscoped list reads the store it lists (the baseline the scoped reads are held against).
    listed, baseline = reads_of(lambda: reads.list_memories(ctx, uid, reads.ListQuery(limit=500)))
    assert len(listed[0]) == MANY + LEGACY and baseline >= MANY + LEGACY

    nobody = frozenset({NOBODY})
    scoped = reads.ListQuery(limit=500, device_ids=nobody)
    # One empty query of the default read class (Firestore bills one read for an empty answer).
    (items, cursor), cost = reads_of(lambda: reads.list_memories(ctx, uid, scoped))
    assert items == [] and cursor is None and cost <= 1, cost
    with_archive = reads.ListQuery(limit=500, include_archive=True, device_ids=nobody)
    (items, _), cost = reads_of(lambda: reads.list_memories(ctx, uid, with_archive))
    assert items == [] and cost <= 2, cost  # the default and the archive read class
    for name, run in (("keyword", search.keyword), ("vector", search.vector), ("archive", search.archive)):
        found, cost = reads_of(lambda run=run: run(ctx, uid, QUERY, 10, devices=nobody))  # type: ignore[misc]
        assert found == [] and cost <= 1, (name, cost)
    found, cost = reads_of(lambda: search.hybrid(ctx, uid, QUERY, 10, devices=nobody))
    assert found == [] and cost <= 2, cost  # its keyword and its vector half

    # A scope that matches: one page of the device's memories, not the store.
    (items, _), cost = reads_of(lambda: reads.list_memories(ctx, uid, reads.ListQuery(limit=10,
                                                                                       device_ids=frozenset({IOS_ID}))))
    assert len(items) == 10 and all(IOS_ID in i.capture_device_ids for i in items)
    assert cost < MANY, cost


def test_a_scoped_search_finds_the_scope_s_memory_among_many_others(http: httpx.Client, ctx: Context) -> None:
    """The filter is applied by the search, not to its first page: a user's one iPhone memory is
    found by an iPhone-scoped search even when thirty memories of another device match better."""
    uid = _uid()
    others = [{"content": f"Every weekday at {7 + n % 12}:{n:02d} I check the weekday bus timetable"} for n in range(30)]
    response = http.post("/v3/memories/batch", json={"memories": others}, headers=_auth(uid, ANDROID))
    assert response.status_code == 201, response.text
    mine = http.post("/v3/memories", json={"content": "On a weekday I sometimes bake bread"},
                     headers=_auth(uid, IOS)).json()["id"]
    every = {m["id"] for m in response.json()["memories"]} | {mine}
    wanted = {ids.provider_id(uid, mid) for mid in every}
    wait_for(lambda: wanted <= ctx.keyword_index.provider_ids(uid) and wanted <= ctx.vector_index.provider_ids(uid),
             timeout=120, interval=0.25, what="the 31 memories to be projected")
    for path in ("/v1/memories/search", "/v1/memories/vector-search", "/v1/memories/hybrid-search"):
        found = http.get(path, params={"q": "weekday bus timetable", "limit": "3", "device_scope": "current"},
                         headers=_auth(uid, IOS)).json()["memories"]
        assert [m["id"] for m in found] == [mine], (path, [m["content"] for m in found])

"""Issue 14: historical rows (``users/{uid}/memories``, ``users/{uid}/short_term``) on every surface.

Legacy rows are seeded straight into Firestore in the original's shapes. The reads go through the
deployed API (HTTP, every read surface); the materialisation test and the pagination property run
the services in this process (to inject a cleanup failure and to interleave mutations between
pages), so this file is an integration test and says so.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem
from core.services import deletion, edits, legacy, reads
from tests.support import trace

pytestmark = pytest.mark.integration

BASE = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
CELLO = "I play the cello on Sundays with a string quartet of old friends from the conservatory in Ghent"


class QuietPublisher:
    """Keeps projection nudges in this process: only the in-process drain (``trace.converge``)
    delivers this file's outbox events, so nothing writes under the user while reads are checked."""

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        pass


@pytest.fixture
def ctx(stack: dict[str, Any]) -> Context:
    return Context(publisher=QuietPublisher())


class Api:
    def __init__(self, stack: dict[str, Any], uid: str) -> None:
        self.url = stack["api_url"]
        self.headers = {"Authorization": "Bearer " + emulator_token(uid, stack["project_id"])}

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.url + path, headers=self.headers, timeout=60, **kwargs)

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.call(method, path, **kwargs)
        assert response.status_code == 200, (path, response.status_code, response.text)
        return response.json()

    def export(self) -> dict[str, dict[str, Any]]:
        """The export's memory lines, by id (each id must occur once)."""
        response = self.call("GET", "/v1/memories/export")
        assert response.status_code == 200
        memories: dict[str, dict[str, Any]] = {}
        for line in response.text.splitlines():
            record = json.loads(line)
            if record["kind"] == "memory":
                assert record["id"] not in memories, f"{record['id']} exported twice"
                memories[record["id"]] = record["data"]
        return memories


def _uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def seed(ctx: Context, uid: str) -> None:
    """Legacy rows in the original's shapes: categories of the old taxonomy, the ``memory_id``
    conversation mirror, ``is_locked``, a deleted row, a row without a date, a same-text pair and a
    different-text pair under one id across the two collections, and a row a canonical tombstone
    suppresses."""
    rows: dict[str, dict[str, Any]] = {
        "memories/leg-ghent": {"content": "I used to live in Ghent", "category": "core", "visibility": "public",
                               "conversation_id": "old-conv-1", "created_at": BASE, "updated_at": BASE,
                               "reviewed": True, "user_review": True, "manually_added": False, "edited": False,
                               "deleted": False, "scoring": "00_998_1714564800", "tags": []},
        "memories/leg-cello": {"content": CELLO, "category": "hobbies", "memory_id": "old-conv-2", "is_locked": True,
                               "created_at": BASE + timedelta(days=1), "updated_at": BASE + timedelta(days=1)},
        "short_term/st-dutch": {"content": "I am learning Dutch", "status": "pending_consolidation",
                                "conversation_id": "old-conv-1", "created_at": BASE + timedelta(days=2),
                                "allowed_uses": ["chat"], "scope": "user"},
        "memories/leg-deleted": {"content": "I once owned a red bicycle", "deleted": True, "created_at": BASE},
        "memories/leg-nodate": {"content": "I collect postcards from lighthouses", "category": "interests"},
        "memories/leg-same": {"content": "I drink green tea", "category": "habits", "created_at": BASE},
        "short_term/leg-same": {"content": "I drink green tea", "status": "pending", "created_at": BASE},
        "memories/leg-split": {"content": "I live in Antwerp", "created_at": BASE},
        "short_term/leg-split": {"content": "I live in Brussels", "created_at": BASE},
        "memories/leg-gone": {"content": "I sold my piano", "created_at": BASE},
        "short_term/st-rejected": {"content": "I dislike mornings", "status": "rejected", "created_at": BASE},
    }
    batch = ctx.client.batch()
    for path, data in rows.items():
        collection, doc_id = path.split("/")
        batch.set(ctx.paths.doc(uid, collection, doc_id), data)
    batch.commit()

    def tombstone(view: ApplyView) -> Plan:
        return Plan(items=[MemoryItem(id="leg-gone", uid=uid, content="", layer="long_term", status="tombstoned",
                                      processing_state="processed", created_at=BASE, deleted_by_user=True)])

    ctx.store.apply(uid, "test.tombstone", {"id": "leg-gone"}, tombstone, item_ids=["leg-gone"])
    trace.converge(ctx, uid)


SHOWN = {"leg-ghent", "leg-cello", "st-dutch", "leg-same"}  # in the list order's reach (dated)


def documents(ctx: Context, uid: str) -> dict[str, tuple[Any, dict[str, Any]]]:
    """Every document under the user, recursively: path → (update time, data)."""
    out: dict[str, tuple[Any, dict[str, Any]]] = {}

    def walk(collection: Any, prefix: str) -> None:
        for snap in collection.stream():
            out[f"{prefix}/{snap.id}"] = (snap.update_time, snap.to_dict())
            for child in snap.reference.collections():
                walk(child, f"{prefix}/{snap.id}/{child.id}")

    for collection in ctx.paths.user(uid).collections():
        walk(collection, collection.id)
    return out


def test_every_read_surface_shows_legacy_rows_and_writes_nothing(stack: dict[str, Any], ctx: Context) -> None:
    uid = _uid("legread")
    seed(ctx, uid)
    api = Api(stack, uid)
    before = documents(ctx, uid)

    v1 = api.ok("GET", "/v1/memories")["memories"]
    assert [m["id"] for m in v1] == ["st-dutch", "leg-cello", "leg-same", "leg-ghent"]  # newest first, then id
    ghent = next(m for m in v1 if m["id"] == "leg-ghent")
    assert (ghent["layer"], ghent["category"], ghent["visibility"], ghent["conversation_id"], ghent["reviewed"],
            ghent["subject_attribution"]) == ("long_term", "system", "public", "old-conv-1", True, "legacy_assumed")
    assert ghent["created_at"] == BASE.isoformat()
    assert next(m for m in v1 if m["id"] == "leg-cello")["conversation_id"] == "old-conv-2"  # the old mirror
    # Spec, canonical mapping: a retired short_term row is Short-term (layer=short_term), a memories
    # row grandfathered Long-term (leg-same: the memories row wins the same-text tie).
    assert {m["id"] for m in api.ok("GET", "/v1/memories", params={"layer": "long_term"})["memories"]} == (
        SHOWN - {"st-dutch"})
    assert [m["id"] for m in api.ok("GET", "/v1/memories", params={"layer": "short_term"})["memories"]] == [
        "st-dutch"]
    dutch = next(m for m in v1 if m["id"] == "st-dutch")
    # Its deadline: created_at (BASE + 2 days) plus the stack's 30-day Short-term TTL, long past.
    assert (dutch["layer"], dutch["expires_at"], dutch["expired"]) == (
        "short_term", (BASE + timedelta(days=32)).isoformat(), True)
    page = api.ok("GET", "/v1/memories", params={"limit": 2})
    rest = api.ok("GET", "/v1/memories", params={"limit": 2, "cursor": page["next_cursor"]})
    assert [m["id"] for m in page["memories"] + rest["memories"]] == [m["id"] for m in v1]

    v3 = api.ok("GET", "/v3/memories")
    assert {m["id"] for m in v3} == SHOWN
    cello = next(m for m in v3 if m["id"] == "leg-cello")
    assert cello["is_locked"] is True and cello["content"] == CELLO[:70] + "..."
    # A row without a category is in the original's default one, ``interesting``.
    assert [m["id"] for m in api.ok("GET", "/v3/memories", params={"categories": "interesting"})] == ["st-dutch"]

    for memory_id in (*SHOWN, "leg-nodate"):
        assert api.ok("GET", f"/v1/memories/{memory_id}")["id"] == memory_id
    assert api.ok("GET", "/v1/memories/leg-nodate")["created_at"] is None
    assert api.ok("GET", "/v1/memories/leg-same")["content"] == "I drink green tea"
    assert api.ok("GET", "/v1/memories/leg-ghent/history") == {"commits": [], "next_cursor": None}
    for missing in ("leg-deleted", "leg-gone", "st-rejected", "nothing-here"):
        assert api.call("GET", f"/v1/memories/{missing}").status_code == 404, missing
    split = api.call("GET", "/v1/memories/leg-split")
    assert split.status_code == 409 and split.json()["error"]["code"] == "legacy_collision"

    for route in ("/v1/memories/search", "/v1/memories/vector-search", "/v1/memories/hybrid-search",
                  "/memory/memory/search"):
        hits = api.ok("GET", route, params={"q": "Where did I live, Ghent?"})["memories"]
        assert [h["id"] for h in hits][:1] == ["leg-ghent"], route
        assert "leg-split" not in {h["id"] for h in hits}
    assert api.ok("GET", "/v1/memories/archive/search", params={"q": "Ghent"})["memories"] == []

    mcp = api.ok("GET", "/v1/mcp/memories")
    assert {m["id"] for m in mcp} == SHOWN and all(set(m) == {"id", "content", "category"} for m in mcp)
    assert next(m for m in mcp if m["id"] == "leg-cello")["content"] == CELLO[:70] + "..."
    assert [m["id"] for m in api.ok("GET", "/v1/mcp/memories", params={"q": "green tea"})] == ["leg-same"]
    tools = api.ok("GET", "/v1/tools/memories")
    assert tools["tool_name"] == "get_memories" and not tools["is_error"]
    assert all(f"id {mid})" in tools["result_text"] for mid in SHOWN)
    found = api.ok("POST", "/v1/tools/memories/search", json={"query": "Dutch lessons"})
    assert "id st-dutch)" in found["result_text"]

    exported = api.export()
    assert set(exported) == SHOWN | {"leg-nodate"}
    assert exported["leg-cello"]["content"] == CELLO  # the user's own data, whole

    after = documents(ctx, uid)
    assert len(after) == len(before)
    assert after == before  # same paths, same update times, same data: the reads wrote nothing
    assert trace.provider_sets(ctx, uid) == (set(), set())  # nothing was embedded or indexed


def test_materialising_keeps_id_and_date_and_a_row_left_behind_never_resurrects(
        stack: dict[str, Any], ctx: Context) -> None:
    uid = _uid("legmat")
    seed(ctx, uid)
    api = Api(stack, uid)

    # A metadata edit materialises the row (same id, same created_at) and removes it in the same
    # commit. A row left beside its successor (a cleanup of an earlier release that failed) is put
    # back: it stays suppressed.
    row = ctx.paths.doc(uid, "memories", "leg-ghent")
    original = row.get().to_dict()
    item = edits.set_visibility(ctx, uid, "leg-ghent", "private")
    assert (item.id, item.layer, item.grandfathered_long_term, item.visibility, item.created_at) == (
        "leg-ghent", "long_term", True, "private", BASE)
    assert not row.get().exists
    row.set(original)
    # A delete of another row: its tombstone and the row's removal are one commit.
    assert deletion.delete_memory(ctx, uid, "st-dutch")["deleted"] == ["st-dutch"]
    assert not ctx.paths.doc(uid, "short_term", "st-dutch").get().exists
    trace.converge(ctx, uid)

    listed = api.ok("GET", "/v1/memories", params={"limit": 500})["memories"]
    assert [m["id"] for m in listed].count("leg-ghent") == 1 and "st-dutch" not in {m["id"] for m in listed}
    assert next(m for m in listed if m["id"] == "leg-ghent")["visibility"] == "private"
    assert api.ok("GET", "/v1/memories/leg-ghent")["visibility"] == "private"
    assert api.call("GET", "/v1/memories/st-dutch").status_code == 404
    assert api.ok("GET", "/v1/memories/search", params={"q": "Ghent"})["memories"][0]["id"] == "leg-ghent"
    for route in ("/v1/memories/search", "/v1/memories/hybrid-search"):
        assert "st-dutch" not in {h["id"] for h in api.ok("GET", route, params={"q": "Dutch"})["memories"]}
    exported = api.export()
    assert exported["leg-ghent"]["visibility"] == "private" and "st-dutch" not in exported
    assert api.call("DELETE", "/v3/memories/st-dutch").status_code == 404  # gone stays gone
    # The materialised item is canonical now: it is projected like any other.
    assert trace.assert_converged(ctx, uid) == {ids.provider_id(uid, "leg-ghent")}

    # Locked: /v3, MCP and tools refuse a one-by-one delete (402) and write nothing.
    before = documents(ctx, uid)
    for path in ("/v3/memories/leg-cello", "/v1/mcp/memories/leg-cello", "/v1/tools/memories/leg-cello"):
        response = api.call("DELETE", path)
        assert response.status_code == 402 and response.json()["error"]["code"] == "memory_locked", path
    assert documents(ctx, uid) == before

    # A content edit through the API removes the row left behind in its commit.
    edited = api.ok("PATCH", "/v3/memories/leg-ghent", params={"value": "I used to live in Ghent and Leuven"})
    assert (edited["id"], edited["layer"], edited["is_locked"]) == ("leg-ghent", "short_term", False)
    assert not ctx.paths.doc(uid, "memories", "leg-ghent").get().exists

    # Delete-all covers both origins (the locked row too) until both
    # are logically and physically empty.
    assert api.ok("DELETE", "/v3/memories")["deleted"] >= 3
    assert api.ok("GET", "/v1/memories", params={"include_archive": "true"})["memories"] == []
    assert api.call("GET", "/v1/memories/leg-nodate").status_code == 404
    for collection in legacy.COLLECTIONS:
        assert list(ctx.paths.col(uid, collection).stream()) == [], collection
    assert api.export() == {}
    trace.converge(ctx, uid)
    assert trace.provider_sets(ctx, uid) == (set(), set())


def test_conversation_delete_retracts_the_legacy_rows_that_cite_it(stack: dict[str, Any], ctx: Context) -> None:
    uid = _uid("legconv")
    seed(ctx, uid)
    api = Api(stack, uid)
    # One of the two rows that cite old-conv-1 is canonical already (materialised by an edit): the
    # cascade finds it through its conversation evidence, the other through the legacy query.
    assert edits.set_visibility(ctx, uid, "leg-ghent", "private").evidence[0].source_id == "old-conv-1"
    ctx.paths.doc(uid, "conversations", "old-conv-1").set({"status": "in_progress", "transcript_segments": []})
    result = api.ok("DELETE", "/v1/conversations/old-conv-1")
    assert result["cascade"]["retracted"] == 2  # leg-ghent (conversation_id) and st-dutch
    ids_left = {m["id"] for m in api.ok("GET", "/v1/memories")["memories"]}
    assert ids_left == {"leg-cello", "leg-same"}
    assert not ctx.paths.doc(uid, "memories", "leg-ghent").get().exists
    # The old ``memory_id`` mirror cites a conversation too.
    ctx.paths.doc(uid, "conversations", "old-conv-2").set({"status": "in_progress", "transcript_segments": []})
    assert api.ok("DELETE", "/v1/conversations/old-conv-2")["cascade"]["retracted"] == 1
    assert {m["id"] for m in api.ok("GET", "/v1/memories")["memories"]} == {"leg-same"}
    assert set(api.export()) == {"leg-same", "leg-nodate"}

    # The assistant adapters delete legacy rows through the same service; create enters Short-term.
    assert api.ok("DELETE", "/v1/mcp/memories/leg-same") == {"status": "ok"}
    deleted = api.ok("DELETE", "/v1/tools/memories/leg-nodate")
    assert (deleted["tool_name"], deleted["is_error"]) == ("delete_memory", False)
    for path in ("/v1/mcp/memories/leg-same", "/v1/tools/memories/leg-nodate"):
        assert api.call("DELETE", path).status_code == 404
    created = api.ok("POST", "/v1/mcp/memories", json={"content": "I am learning to bake sourdough bread"})
    assert created["layer"] == "short_term"
    saved = api.ok("POST", "/v1/tools/memories", json={"content": "I prefer trains to planes"})
    assert saved["tool_name"] == "create_memory"
    assert api.export().keys() == {created["id"], saved["result_text"].split()[2].rstrip(":")}
    assert {m["id"] for m in api.ok("GET", "/v1/mcp/memories")} == set(api.export())
    # Physically left: only rows no surface shows (deleted, settled, suppressed, colliding).
    left = {collection: {snap.id for snap in ctx.paths.col(uid, collection).stream()}
            for collection in legacy.COLLECTIONS}
    assert left == {"memories": {"leg-deleted", "leg-split", "leg-gone"}, "short_term": {"leg-split", "st-rejected"}}


def test_the_rows_citing_a_conversation_come_in_one_keys_only_query_per_collection(stack: dict[str, Any]) -> None:
    """The historical-rows scan every capture runs: a row citing the conversation under either field
    name (or both) is found once, whichever collection holds it, by one OR query per collection on
    the emulator (single-field indexes serve each disjunct); the bound holds."""
    from core import config
    from strata_dev.bench.counting import counting_client

    client = counting_client(config.load().project_id)
    ctx = Context(client=client, publisher=QuietPublisher())
    uid = _uid("legciting")
    rows = {"memories/by-conv": {"conversation_id": "c1"}, "memories/by-mirror": {"memory_id": "c1"},
            "memories/by-both": {"conversation_id": "c1", "memory_id": "c1"},
            "short_term/st-mirror": {"memory_id": "c1"}, "short_term/by-both": {"conversation_id": "c1"},
            "memories/other": {"conversation_id": "c2", "memory_id": "c3"}, "short_term/none": {"content": "x"}}
    batch = client.batch()
    for path, data in rows.items():
        batch.set(ctx.paths.doc(uid, *path.split("/")), {"content": "I keep bees", **data})
    batch.commit()
    client.counts.reset()
    assert sorted(legacy.ids_citing(ctx, uid, "c1", 10)) == ["by-both", "by-conv", "by-mirror", "st-mirror"]
    counts = client.counts.snapshot()
    assert (counts["queries"], counts["rpcs"]) == (len(legacy.COLLECTIONS), len(legacy.COLLECTIONS)), counts
    bounded = legacy.ids_citing(ctx, uid, "c1", 2)
    assert len(bounded) == 2 and set(bounded) <= {"by-both", "by-conv", "by-mirror", "st-mirror"}
    assert legacy.ids_citing(ctx, uid, "c9", 10) == []


# ------------------------------------------------------------------------------ mixed pagination
def _instant(minute: int) -> datetime:
    return BASE + timedelta(minutes=minute)


def _write_canonical(ctx: Context, uid: str, rows: dict[str, int]) -> None:
    def plan(view: ApplyView) -> Plan:  # default-visible canonical items (Short-term: no receipt needed)
        return Plan(items=[MemoryItem(id=mid, uid=uid, content=f"canonical fact {mid}", layer="short_term",
                                      processing_state="processed", created_at=_instant(minute))
                           for mid, minute in rows.items()])

    ctx.store.apply(uid, "test.seed", {"ids": sorted(rows)}, plan, item_ids=list(rows))


def _write_legacy(ctx: Context, uid: str, rows: dict[str, tuple[str, int]]) -> None:
    batch = ctx.client.batch()
    for mid, (collection, minute) in rows.items():
        batch.set(ctx.paths.doc(uid, collection, mid), {"content": f"legacy fact {mid}", "category": "other",
                                                        "created_at": _instant(minute)})
    batch.commit()


minute = st.integers(0, 6)  # few distinct instants: many ties, broken by id
account = st.fixed_dictionaries({
    "canonical": st.dictionaries(st.sampled_from([f"c{i}" for i in range(8)]), minute, max_size=6),
    "legacy": st.dictionaries(st.sampled_from([f"l{i}" for i in range(8)]),
                              st.tuples(st.sampled_from(legacy.COLLECTIONS), minute), max_size=6),
})
mutation = st.one_of(
    st.tuples(st.just("insert_canonical"), minute),
    st.tuples(st.just("insert_legacy"), minute),
    st.tuples(st.just("delete"), st.integers(0, 20)),
    st.tuples(st.just("materialise"), st.integers(0, 20)),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(start=account, limit=st.integers(1, 3), mutations=st.lists(mutation, max_size=5))
def test_mixed_pagination_never_repeats_or_skips_a_stable_item(ctx: Context, start: dict[str, Any], limit: int,
                                                              mutations: list[tuple[str, int]]) -> None:
    uid = _uid("legpage")
    if start["canonical"]:
        _write_canonical(ctx, uid, start["canonical"])
    _write_legacy(ctx, uid, start["legacy"])
    present = set(start["canonical"]) | set(start["legacy"])
    stable = set(present)  # existed from the first page to the last
    ever = set(present)
    legacy_rows = set(start["legacy"])
    seen: list[str] = []
    cursor: str | None = None
    pending = list(mutations)
    for _page in range(100):
        items, cursor = reads.list_memories(ctx, uid, reads.ListQuery(limit=limit, cursor=cursor))
        seen.extend(i.id for i in items)
        if cursor is None:
            break
        if pending:  # between two pages, another client changes the account
            kind, value = pending.pop(0)
            new_id = f"n{len(pending)}-{value}"
            if kind == "insert_canonical":
                _write_canonical(ctx, uid, {new_id: value})
                present.add(new_id)
                ever.add(new_id)
            elif kind == "insert_legacy":
                _write_legacy(ctx, uid, {new_id: ("memories", value)})
                present.add(new_id)
                ever.add(new_id)
            elif present:
                target = sorted(present)[value % len(present)]
                if kind == "delete":
                    deletion.delete_memory(ctx, uid, target)
                    present.discard(target)
                    stable.discard(target)
                elif target in legacy_rows:
                    edits.set_user_review(ctx, uid, target, True)  # materialise: same id, same created_at
                    legacy_rows.discard(target)
    assert cursor is None
    assert len(seen) == len(set(seen)), f"repeated: {sorted(x for x in seen if seen.count(x) > 1)}"
    assert stable <= set(seen), f"skipped: {sorted(stable - set(seen))}"
    assert set(seen) <= ever

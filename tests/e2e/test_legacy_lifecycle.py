"""Historical rows on the whole local stack: their lifecycle, their source's reprocess, their edits
(issue 27, points 4-7).

Legacy rows are seeded straight into Firestore in the original's shapes (``users/{uid}/memories``,
the retired ``users/{uid}/short_term``), with a legacy ``{uid}-{id}`` vector beside them; every
step after that goes through a deployed path (the HTTP ``api`` function, the Firestore trigger to
``on_conversation_complete`` through the Eventarc relay, the ``consolidate`` function, projection on
Pub/Sub push). Expectations come from the spec:

* canonical mapping: a ``memories`` row is grandfathered Long-term, a retired ``short_term`` row is
  Short-term (``layer=short_term``), and its Short-term deadline is reported as ``expired``;
* docs/data-model.md (the memory record, legal states) and the historical rules: ``status`` other than active is excluded from normal reads, so a row its own
  ``superseded_by`` / ``invalid_at`` invalidated is not listed or found; a row's ``memory_tier``
  is its layer (``archive`` only with the archive);
* boundary rules: no Long-term without an admission receipt, except the grandfathered historical
  ``memories`` rows; only consolidation admits;
* Q7 and the delete/privacy matrix's reprocess row: a successful extraction (an empty one too)
  replaces the source across all stores and vectors, the legacy rows that cite it included;
* issue 27 point 7: an edit is processed in its own request as an explicit create is, and stays
  listed with its new content while consolidation re-admits it.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.domain.admission import receipt_problems
from core.domain.records import MemoryItem
from tests.support import trace
from tests.support.firestore_checks import (
    assert_all_items_legal,
    assert_ledger_gapless,
    relay_deliveries,
    user_documents,
    wait_for,
)
from tests.support.lifecycle_model import OTHER_LINES, OWNER_LINES

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
DEADLINE_S = 90.0
OLD = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)  # before any Short-term deadline that is still running
TTL_DAYS = 30  # the stack runs with the default STRATA_SHORT_TERM_TTL_DAYS


class Api:
    def __init__(self, stack: dict[str, Any], uid: str) -> None:
        self.stack, self.uid = stack, uid
        self.headers = {"Authorization": "Bearer " + emulator_token(uid, PROJECT)}

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = httpx.request(method, self.stack["api_url"] + path, headers=self.headers, timeout=DEADLINE_S,
                                 **kwargs)
        assert response.status_code < 500, (method, path, response.status_code, response.text)
        return response

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.call(method, path, **kwargs)
        assert response.status_code == 200, (path, response.status_code, response.text)
        return response.json()

    def listed(self, **params: str) -> dict[str, dict[str, Any]]:
        rows = self.ok("GET", "/v1/memories", params={"limit": "500", **params})["memories"]
        out = {m["id"]: m for m in rows}
        assert len(out) == len(rows), "a memory listed twice"
        return out

    def exported(self) -> set[str]:
        import json

        response = self.call("GET", "/v1/memories/export")
        assert response.status_code == 200
        return {record["id"] for line in response.text.splitlines()
                if (record := json.loads(line))["kind"] == "memory"}

    def consolidate(self) -> dict[str, Any]:
        response = httpx.post(self.stack["consolidate_url"], json={"uid": self.uid}, timeout=120)
        assert response.status_code == 200, response.text
        return dict(response.json())


def _uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _seed(ctx: Context, uid: str, rows: dict[str, dict[str, Any]]) -> None:
    batch = ctx.client.batch()
    for path, data in rows.items():
        collection, doc_id = path.split("/")
        batch.set(ctx.paths.doc(uid, collection, doc_id), data)
    batch.commit()


def _seed_legacy_vectors(ctx: Context, uid: str, memory_ids: list[str]) -> None:
    """The original's vectors of these rows: id ``{uid}-{id}`` in the memories namespace."""
    host = ctx.settings.pinecone_host
    values = ctx.embedder.embed(["an old vector"])[0]
    response = httpx.post(f"{host}/vectors/upsert", headers={"Api-Key": ctx.settings.pinecone_api_key or "local"},
                          timeout=30, json={"namespace": ctx.settings.pinecone_namespace, "vectors": [
                              {"id": f"{uid}-{mid}", "values": values, "metadata": {"uid": uid, "memory_id": mid}}
                              for mid in memory_ids]})
    assert response.status_code == 200, response.text


def _legacy_rows(ctx: Context, uid: str) -> dict[str, set[str]]:
    return {collection: {snap.id for snap in ctx.paths.col(uid, collection).stream()}
            for collection in ("memories", "short_term")}


def _write_conversation(stack: dict[str, Any], ctx: Context, uid: str, cid: str, doc: dict[str, Any]) -> None:
    """Write the conversation as an app does and wait until the trigger's capture answered."""
    document = f"users/{uid}/conversations/{cid}"
    before = relay_deliveries(stack, document)
    ctx.paths.doc(uid, "conversations", cid).set(doc)
    wait_for(lambda: relay_deliveries(stack, document) > before, timeout=DEADLINE_S, interval=0.1,
             what=f"on_conversation_complete to answer the event for {cid}")


def _settle(ctx: Context, uid: str) -> None:
    wait_for(lambda: not trace.outbox(ctx, uid), timeout=DEADLINE_S, interval=0.2,
             what="the outbox to drain through Pub/Sub")


def _doc(cid: str, owner: tuple[str, ...], other: str = OTHER_LINES[0]) -> dict[str, Any]:
    lines = [(OWNER_LINES[k], True) for k in owner] + [(other, False)]
    segments = [{"id": f"{cid}-s{i}", "text": text, "speaker": "SPEAKER_00" if mine else "SPEAKER_01",
                 "speaker_id": 0 if mine else 1, "is_user": mine, "start": i * 5.0, "end": i * 5.0 + 4.0}
                for i, (text, mine) in enumerate(lines)]
    return {"status": "completed", "discarded": False, "source": "omi", "language": "en",
            "structured": {"title": cid, "overview": ""}, "transcript_segments": segments}


def _item(ctx: Context, uid: str, memory_id: str) -> MemoryItem:
    snap = ctx.paths.doc(uid, "memory_items", memory_id).get()
    assert snap.exists, memory_id
    return MemoryItem.from_store(snap.to_dict())


def _receipt_ok(ctx: Context, uid: str, item: MemoryItem) -> list[str]:
    snap = ctx.paths.doc(uid, "memory_graph_assertions", item.id).get()
    return receipt_problems(item, snap.to_dict() if snap.exists else None)


# ------------------------------------------------------------------ points 4 and 5: what a row states
def test_historical_rows_are_read_in_the_lifecycle_they_state(stack: dict[str, Any]) -> None:
    ctx, uid = Context(), _uid("leglife")
    api = Api(stack, uid)
    now = datetime.now(UTC)
    _seed(ctx, uid, {
        "memories/m-ghent": {"content": "I used to live in Ghent", "category": "core", "created_at": OLD},
        "short_term/st-dutch": {"content": "I am learning Dutch", "status": "pending_consolidation",
                                "created_at": OLD + timedelta(days=1), "allowed_uses": ["chat"], "scope": "user"},
        "short_term/st-fresh": {"content": "I am reading about tides", "status": "pending_consolidation",
                                "created_at": now - timedelta(days=1)},
        "memories/m-tier-st": {"content": "I want to learn to row", "memory_tier": "short_term",
                               "created_at": OLD + timedelta(days=2)},
        "memories/m-archived": {"content": "I once kept a weather diary", "memory_tier": "archive",
                                "created_at": OLD + timedelta(days=3)},
        "memories/m-superseded": {"content": "I live in Antwerp", "superseded_by": "m-ghent",
                                  "created_at": OLD + timedelta(days=4)},
        "memories/m-invalid": {"content": "I work at a bakery in Bruges", "invalid_at": OLD + timedelta(days=9),
                               "created_at": OLD + timedelta(days=5)},
        "short_term/st-invalid": {"content": "I am moving to Leuven", "invalid_at": OLD + timedelta(days=9),
                                  "created_at": OLD + timedelta(days=6)},
        "memories/m-deleted": {"content": "I owned a red bicycle", "deleted": True, "created_at": OLD},
    })

    default = api.listed()
    assert set(default) == {"m-ghent", "st-dutch", "st-fresh", "m-tier-st"}
    assert api.listed(layer="long_term").keys() == {"m-ghent"}
    assert api.listed(layer="short_term").keys() == {"st-dutch", "st-fresh", "m-tier-st"}
    assert api.listed(layer="archive").keys() == {"m-archived"}
    assert api.listed(include_archive="true").keys() == set(default) | {"m-archived"}
    # The retired Short-term rows carry the Short-term deadline: created_at + TTL, reported expired.
    dutch, fresh = default["st-dutch"], default["st-fresh"]
    assert (dutch["layer"], dutch["expired"]) == ("short_term", True)
    assert datetime.fromisoformat(dutch["expires_at"]) == OLD + timedelta(days=1 + TTL_DAYS)
    assert (fresh["layer"], fresh["expired"]) == ("short_term", False)
    assert default["m-ghent"]["layer"] == "long_term" and default["m-ghent"]["expires_at"] is None
    assert {m["id"] for m in api.ok("GET", "/v3/memories")} == set(default)
    assert {m["id"] for m in api.ok("GET", "/v1/mcp/memories")} == set(default)
    # Invalidated rows are in no search either.
    for route in ("/v1/memories/search", "/v1/memories/hybrid-search"):
        for words in ("Antwerp", "bakery Bruges", "moving to Leuven"):
            hits = api.ok("GET", route, params={"q": words})["memories"]
            assert not {"m-superseded", "m-invalid", "st-invalid"} & {h["id"] for h in hits}, (route, words)
    assert [h["id"] for h in api.ok("GET", "/v1/memories/search", params={"q": "Dutch"})["memories"]] == ["st-dutch"]
    assert [h["id"] for h in api.ok("GET", "/v1/memories/archive/search", params={"q": "weather diary"})[
        "memories"]] == ["m-archived"]
    assert "m-archived" not in {h["id"] for h in api.ok("GET", "/v1/memories/search",
                                                        params={"q": "weather diary"})["memories"]}
    # The export is the user's data: every row that is not deleted, in the lifecycle it states.
    assert api.exported() == set(default) | {"m-archived", "m-superseded", "m-invalid", "st-invalid"}
    assert api.call("GET", "/v1/memories/m-deleted").status_code == 404
    assert ctx.paths.col(uid, "memory_items").limit(1).get() == []  # reading wrote nothing

    # Materialised by an edit, a retired Short-term row is an ordinary Short-term item: no receipt,
    # no grandfathered exemption; only consolidation can bring it to Long-term, with a receipt.
    assert api.ok("PATCH", "/v3/memories/st-dutch/visibility", params={"value": "private"})["layer"] == "short_term"
    item = _item(ctx, uid, "st-dutch")
    assert (item.layer, item.status, item.processing_state, item.grandfathered_long_term, item.promotion) == (
        "short_term", "active", "processed", False, None)
    assert item.created_at == OLD + timedelta(days=1) and item.pending_route
    assert "st-dutch" not in _legacy_rows(ctx, uid)["short_term"]
    api.consolidate()
    for memory_id, data in trace.items(ctx, uid).items():
        if data.layer == "long_term" and data.record_status == "active":
            assert _receipt_ok(ctx, uid, data) == [], memory_id  # admitted, never grandfathered
    assert not _item(ctx, uid, "st-dutch").grandfathered_long_term
    _settle(ctx, uid)
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
    trace.assert_converged(ctx, uid)


# --------------------------------------------------------------------- point 6: Q7 reaches them too
@pytest.mark.parametrize("how", ["reprocess", "recomplete", "first_capture_empty"])
def test_a_successful_extraction_retracts_the_legacy_rows_that_cite_its_conversation(
        stack: dict[str, Any], how: str) -> None:
    ctx, uid = Context(), _uid(f"legq7-{how[:5]}")
    api = Api(stack, uid)
    cid = "conv-old"
    citing = {
        "memories/m-cites": {"content": "I used to sing in a choir in Ghent", "conversation_id": cid,
                             "created_at": OLD},
        "memories/m-mirror": {"content": "I grew tomatoes on a balcony", "memory_id": cid,
                              "created_at": OLD + timedelta(days=1)},
        "short_term/st-cites": {"content": "I am planning a trip to Porto", "status": "pending_consolidation",
                                "conversation_id": cid, "created_at": OLD + timedelta(days=2)},
        "memories/m-invalid": {"content": "I rented a flat near the station", "conversation_id": cid,
                               "invalid_at": OLD, "created_at": OLD},
    }
    other = {"memories/m-other": {"content": "I used to collect stamps", "conversation_id": "conv-else",
                                  "created_at": OLD}}
    retracted = {path.split("/")[1] for path in citing}
    if how == "first_capture_empty":
        # A historical conversation completed again in this system: its first capture here says
        # nothing about the owner (only the other speaker talks), a successful empty extraction.
        _seed(ctx, uid, {**citing, **other})
        _seed_legacy_vectors(ctx, uid, sorted(retracted | {"m-other"}))
        doc = _doc(cid, ())
        _write_conversation(stack, ctx, uid, cid, doc)
    else:
        _write_conversation(stack, ctx, uid, cid, _doc(cid, ("dog",)))
        _settle(ctx, uid)
        _seed(ctx, uid, {**citing, **other})
        _seed_legacy_vectors(ctx, uid, sorted(retracted | {"m-other"}))
        assert {"m-cites", "m-mirror", "st-cites", "m-other"} <= set(api.listed())
        if how == "reprocess":
            result = api.ok("POST", f"/v1/conversations/{cid}/reprocess")
            assert result["retracted"] >= 3, result
        else:  # the app writes the conversation again, completed, with one more line
            _write_conversation(stack, ctx, uid, cid, _doc(cid, ("dog", "cello")))
    _settle(ctx, uid)

    listed = api.listed(include_archive="true")
    assert not retracted & set(listed), sorted(retracted & set(listed))
    assert "m-other" in listed  # another conversation's row is untouched
    if how != "first_capture_empty":
        assert any(OWNER_LINES["dog"].split()[-1].rstrip(".") in m["content"] for m in listed.values())
    for memory_id in retracted:
        assert api.call("GET", f"/v1/memories/{memory_id}").status_code == 404, memory_id
        tombstone = _item(ctx, uid, memory_id)  # the canonical tombstone suppresses it for good
        assert (tombstone.record_status, tombstone.content) == ("tombstoned", "")
    assert _legacy_rows(ctx, uid) == {"memories": {"m-other"}, "short_term": set()}
    assert api.exported() & retracted == set()
    # The legacy vectors of the retracted rows are gone; the other row's stays (reading never
    # projects, and nothing retracted it).
    vectors = set(trace.pinecone_vectors(ctx, uid))
    assert not {f"{uid}-{mid}" for mid in retracted} & vectors
    assert f"{uid}-m-other" in vectors
    # Their words are nowhere under the user, in no index entry and in no export line.
    words = [citing[p]["content"] for p in citing]
    places = {path: str(data) for path, data in user_documents(ctx, uid).items()}
    places.update({f"typesense:{d['id']}": str(d) for d in trace.typesense_docs(ctx, uid)})
    places["export"] = api.call("GET", "/v1/memories/export").text
    assert not [(w, where) for w in words for where, blob in places.items() if w.casefold() in blob.casefold()]
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


# --------------------------------------------------------------------------- point 7: edits stay listed
def test_an_edited_legacy_row_stays_listed_with_its_new_words(stack: dict[str, Any]) -> None:
    ctx, uid = Context(), _uid("legedit")
    api = Api(stack, uid)
    _seed(ctx, uid, {
        "memories/m-ghent": {"content": "I used to live in Ghent", "category": "core", "conversation_id": "c-old",
                             "created_at": OLD},
        "short_term/st-dutch": {"content": "I am learning Dutch", "status": "pending_consolidation",
                                "created_at": OLD + timedelta(days=1)},
    })
    for memory_id, words in (("m-ghent", "I used to live in Ghent and Leuven"),
                             ("st-dutch", "I am learning Dutch and Frisian")):
        edited = api.ok("PATCH", f"/v3/memories/{memory_id}", params={"value": words})
        assert (edited["id"], edited["content"], edited["layer"]) == (memory_id, words, "short_term")
        # Listed at once, with the new words, in the default read and its layer.
        listed = api.listed()
        assert listed[memory_id]["content"] == words, listed.get(memory_id)
        assert memory_id in api.listed(layer="short_term")
        assert api.ok("GET", f"/v1/memories/{memory_id}")["content"] == words
        item = _item(ctx, uid, memory_id)
        assert (item.layer, item.processing_state, item.grandfathered_long_term, item.promotion) == (
            "short_term", "processed", False, None)
        assert item.created_at is not None and item.pending_route
    assert _legacy_rows(ctx, uid) == {"memories": set(), "short_term": set()}
    _settle(ctx, uid)
    for memory_id, term in (("m-ghent", "Leuven"), ("st-dutch", "Frisian")):
        hits = api.ok("GET", "/v1/memories/search", params={"q": term})["memories"]
        assert [h["id"] for h in hits] == [memory_id], (term, hits)
    assert trace.assert_converged(ctx, uid) == {ids.provider_id(uid, "m-ghent"), ids.provider_id(uid, "st-dutch")}

    summary = api.consolidate()
    assert summary["routes"] == {"promote": 2}, summary  # user-asserted: admitted, with receipts
    listed = api.listed()
    for memory_id in ("m-ghent", "st-dutch"):
        item = _item(ctx, uid, memory_id)
        assert (item.layer, item.status) == ("long_term", "active") and _receipt_ok(ctx, uid, item) == []
        assert listed[memory_id]["layer"] == "long_term"
    _settle(ctx, uid)
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


def test_an_edit_is_labelled_and_secret_checked_in_its_own_request(stack: dict[str, Any]) -> None:
    """Point 7's "processed as an explicit create is": the edit's words are sensitivity-labelled
    before anything projects them (restricted content is delete-only for every provider), and a
    secret is refused with a 400 that writes nothing."""
    ctx, uid = Context(), _uid("legsens")
    api = Api(stack, uid)
    _seed(ctx, uid, {"memories/m-walks": {"content": "I walk by the river every morning", "created_at": OLD}})
    _seed_legacy_vectors(ctx, uid, ["m-walks"])
    words = "I walk by the river every morning since my diabetes diagnosis"
    edited = api.ok("PATCH", "/v3/memories/m-walks", params={"value": words})
    assert edited["content"] == words
    listed = api.listed()
    assert (listed["m-walks"]["content"], listed["m-walks"]["restricted"]) == (words, True)
    item = _item(ctx, uid, "m-walks")
    assert "health" in item.sensitivity_labels and item.processing_state == "processed"
    _settle(ctx, uid)
    assert trace.provider_sets(ctx, uid) == (set(), set())  # never upserted; the old vector is gone too
    assert api.ok("GET", "/v1/memories/search", params={"q": "diabetes"})["memories"] == []

    before = {path: data for path, data in user_documents(ctx, uid).items()}
    refused = api.call("PATCH", "/v3/memories/m-walks", params={"value": "my bank password is hunter22"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "secret_content"
    assert user_documents(ctx, uid) == before
    assert api.listed()["m-walks"]["content"] == words

"""TypesenseIndex against a real Typesense server (started by the session fixture)."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import uuid
from dataclasses import replace

import httpx
import pytest

from core.adapters.typesense_index import SCHEMA_FIELDS, TypesenseIndex
from core.errors import PermanentError, ProviderUnavailable
from core.ports import ProjectionDoc

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pid(uid: str, memory_id: str) -> str:
    """A stand-in for the domain's provider id: deterministic and per user."""
    return "memproj:" + hashlib.sha256(json.dumps([uid, memory_id]).encode()).hexdigest()[:40]


def doc(uid: str, memory_id: str, content: str, layer: str = "long_term", revision: int = 1,
        quote: str = "") -> ProjectionDoc:
    return ProjectionDoc(provider_id=pid(uid, memory_id), uid=uid, memory_id=memory_id, layer=layer,
                         revision=revision, content=content, updated_at=1_700_000_000.0 + revision, quote=quote)


@pytest.fixture
def index(typesense_server) -> TypesenseIndex:
    idx = TypesenseIndex(typesense_server.url, typesense_server.api_key, collection="memories_test")
    idx.ensure_ready()
    return idx


def _raw(typesense_server, method: str, path: str, **kwargs) -> httpx.Response:
    return httpx.request(method, f"{typesense_server.url}{path}",
                         headers={"X-TYPESENSE-API-KEY": typesense_server.api_key}, timeout=10, **kwargs)


def test_ensure_ready_is_idempotent_and_collection_has_explicit_schema(typesense_server):
    name = f"coll_{uuid.uuid4().hex[:8]}"
    first = TypesenseIndex(typesense_server.url, typesense_server.api_key, collection=name)
    second = TypesenseIndex(typesense_server.url, typesense_server.api_key, collection=name)
    first.ensure_ready()
    first.ensure_ready()
    second.ensure_ready()
    fields = {f["name"]: f["type"] for f in _raw(typesense_server, "GET", f"/collections/{name}").json()["fields"]}
    assert fields == {"uid": "string", "memory_id": "string", "layer": "string", "revision": "int64",
                      "content": "string", "category": "string", "updated_at": "float", "quote": "string",
                      "capture_device_ids": "string[]"}


def test_an_older_collection_gains_the_quote_field_in_place(typesense_server, unique_uid):
    name = f"coll_{uuid.uuid4().hex[:8]}"
    old = [f for f in SCHEMA_FIELDS if f["name"] not in ("quote", "capture_device_ids")]
    made = _raw(typesense_server, "POST", "/collections",
                json={"name": name, "fields": old, "default_sorting_field": "updated_at"})
    assert made.status_code == 201, made.text
    idx = TypesenseIndex(typesense_server.url, typesense_server.api_key, collection=name)
    idx.ensure_ready()
    TypesenseIndex(typesense_server.url, typesense_server.api_key, collection=name).ensure_ready()  # idempotent
    fields = {f["name"] for f in _raw(typesense_server, "GET", f"/collections/{name}").json()["fields"]}
    assert {"quote", "capture_device_ids"} <= fields
    idx.upsert([doc(unique_uid, "m", "User plays the cello", quote="I play the cello")])
    assert [h.memory_id for h in idx.search(unique_uid, "cello", layers=["long_term"], limit=5)] == ["m"]


def test_the_segment_text_for_the_vector_side_is_never_stored_in_typesense(index, typesense_server, unique_uid):
    """docs/data-model.md: the quoted segments' whole text is embedded by the vector side only; the
    keyword index keeps the content and the quote."""
    segment = "Mostly quiet weekends. I play the cello on Sundays with two friends."
    idx_doc = replace(doc(unique_uid, "m", "User plays the cello", quote="I play the cello on Sundays"), context=segment)
    index.upsert([idx_doc])
    stored = _raw(typesense_server, "GET", f"/collections/memories_test/documents/{idx_doc.provider_id}").json()
    assert "context" not in stored and "quiet weekends" not in json.dumps(stored)
    assert stored["content"] == "User plays the cello" and stored["quote"] == "I play the cello on Sundays"


def test_concurrent_creators_race_safely(typesense_server):
    name = f"coll_{uuid.uuid4().hex[:8]}"
    errors: list[BaseException] = []

    def create() -> None:
        try:
            TypesenseIndex(typesense_server.url, typesense_server.api_key, collection=name).ensure_ready()
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _raw(typesense_server, "GET", f"/collections/{name}").status_code == 200


def test_a_client_that_checked_the_collection_writes_after_it_is_dropped(typesense_server, unique_uid):
    """A drain worker that was warm when an operator dropped the collection (before a rebuild):
    its purges, deletes and upserts create the collection again instead of failing on 404."""
    name = f"coll_{uuid.uuid4().hex[:8]}"
    idx = TypesenseIndex(typesense_server.url, typesense_server.api_key, collection=name)
    idx.upsert([doc(unique_uid, "m1", "I keep bees on the roof")])
    for write in (lambda: idx.purge_user(unique_uid), lambda: idx.delete(unique_uid, ["m1"]),
                  lambda: idx.upsert([doc(unique_uid, "m2", "I sing in a choir")])):
        assert _raw(typesense_server, "DELETE", f"/collections/{name}").status_code == 200
        write()
        assert _raw(typesense_server, "GET", f"/collections/{name}").status_code == 200
    assert idx.provider_ids(unique_uid) == {pid(unique_uid, "m2")}


def test_incompatible_existing_schema_is_a_permanent_error(typesense_server):
    name = f"coll_{uuid.uuid4().hex[:8]}"
    _raw(typesense_server, "POST", "/collections",
         json={"name": name, "fields": [{"name": "uid", "type": "string"}]}).raise_for_status()
    with pytest.raises(PermanentError):
        TypesenseIndex(typesense_server.url, typesense_server.api_key, collection=name).ensure_ready()


def test_upsert_replaces_legacy_rows_of_the_same_memory(index, typesense_server, unique_uid):
    other = unique_uid + "-other"
    legacy = [
        {"id": "m1", "uid": unique_uid, "memory_id": "m1", "layer": "long_term", "revision": 0,
         "content": "old bare id row", "category": "interesting", "updated_at": 1.0},
        {"id": f"{unique_uid}-m1", "uid": unique_uid, "memory_id": "m1", "layer": "long_term", "revision": 0,
         "content": "old uid-prefixed row", "category": "interesting", "updated_at": 1.0},
        {"id": f"{other}-m1", "uid": other, "memory_id": "m1", "layer": "long_term", "revision": 0,
         "content": "another user's row", "category": "interesting", "updated_at": 1.0},
    ]
    body = "\n".join(json.dumps(row) for row in legacy)
    resp = _raw(typesense_server, "POST", "/collections/memories_test/documents/import?action=upsert", content=body)
    assert all(json.loads(line)["success"] for line in resp.text.splitlines())
    assert index.provider_ids(unique_uid) == {"m1", f"{unique_uid}-m1"}

    index.upsert([doc(unique_uid, "m1", "I prefer green tea in the morning", revision=2)])
    assert index.provider_ids(unique_uid) == {pid(unique_uid, "m1")}
    assert index.provider_ids(other) == {f"{other}-m1"}  # another user's same memory id untouched

    index.upsert([doc(unique_uid, "m1", "I prefer black coffee now", revision=3)])
    stored = _raw(typesense_server, "GET", f"/collections/memories_test/documents/{pid(unique_uid, 'm1')}").json()
    assert stored["revision"] == 3 and stored["content"] == "I prefer black coffee now"
    assert index.provider_ids(unique_uid) == {pid(unique_uid, "m1")}


def test_delete_removes_only_named_memories(index, unique_uid):
    index.upsert([doc(unique_uid, f"m{i}", f"memory number {i}") for i in range(5)])
    index.delete(unique_uid, ["m1", "m3", "never-existed"])
    assert index.provider_ids(unique_uid) == {pid(unique_uid, m) for m in ("m0", "m2", "m4")}


def test_purge_user_keeps_other_users(index, unique_uid):
    other = unique_uid + "-b"
    index.upsert([doc(unique_uid, "a", "alpha"), doc(unique_uid, "b", "beta"), doc(other, "a", "alpha")])
    index.purge_user(unique_uid)
    assert index.provider_ids(unique_uid) == set()
    assert index.provider_ids(other) == {pid(other, "a")}


def test_search_filters_by_uid_and_layer_and_ranks_best_match_first(index, unique_uid):
    other = unique_uid + "-x"
    index.upsert([
        doc(unique_uid, "tea", "I drink green tea every morning", layer="long_term"),
        doc(unique_uid, "car", "My car is a blue hatchback", layer="long_term"),
        doc(unique_uid, "tea-st", "Bought green tea today", layer="short_term"),
        doc(unique_uid, "tea-arch", "Used to hate green tea", layer="archive"),
        doc(other, "tea", "green tea is the best", layer="long_term"),
    ])
    hits = index.search(unique_uid, "green tea", layers=["long_term", "short_term"], limit=10)
    assert {h.memory_id for h in hits} == {"tea", "tea-st"}
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].provider_id == pid(unique_uid, hits[0].memory_id)

    hits = index.search(unique_uid, "green tea morning", layers=["long_term"], limit=10)
    assert [h.memory_id for h in hits][0] == "tea"
    assert 0.0 < hits[0].score <= 1.0
    assert index.search(unique_uid, "green tea", layers=["archive"], limit=10)[0].memory_id == "tea-arch"
    assert index.search(unique_uid, "green tea", layers=[], limit=10) == []


def test_search_filters_by_capture_device(index, unique_uid):
    """The device scope: a document matches when one of its capture devices is in the scope."""
    both = ("ios_0a1b2c3d", "android_11223344")
    index.upsert([
        ProjectionDoc(provider_id=pid(unique_uid, "ios"), uid=unique_uid, memory_id="ios", layer="long_term",
                      revision=1, content="green tea on the phone", capture_device_ids=(both[0],)),
        ProjectionDoc(provider_id=pid(unique_uid, "two"), uid=unique_uid, memory_id="two", layer="long_term",
                      revision=1, content="green tea on two phones", capture_device_ids=both),
        doc(unique_uid, "none", "green tea of no device"),
    ])

    def found(devices: list[str] | None) -> set[str]:
        return {h.memory_id for h in index.search(unique_uid, "green tea", layers=["long_term"], limit=5,
                                                  devices=devices)}

    assert found(None) == {"ios", "two", "none"}
    assert found(["ios_0a1b2c3d"]) == {"ios", "two"}
    assert found(["android_11223344"]) == {"two"}
    assert found(["web_99999999"]) == set()
    assert found([]) == set()


def test_search_matches_any_term_rarer_terms_and_content_weigh_more(index, unique_uid):
    index.upsert([
        doc(unique_uid, "lisbon", "User flew to Lisbon in May"),
        doc(unique_uid, "may", "User started pottery in May"),
        doc(unique_uid, "quoted", "User went on a trip", quote="we had a week in Lisbon"),
        doc(unique_uid, "april", "User moved flats in April"),
        doc(unique_uid, "june", "User visited Porto in June"),
    ])
    # No document holds every term; each term is matched on its own.
    hits = index.search(unique_uid, "Lisbon May holiday", layers=["long_term"], limit=10)
    ids = [h.memory_id for h in hits]
    assert ids[0] == "lisbon"  # matches two of the three terms
    assert set(ids) == {"lisbon", "may", "quoted"}
    # Same term: a match in the content outranks a match only in the quote.
    assert ids.index("quoted") > ids.index("lisbon")
    scores = {h.memory_id: h.score for h in hits}
    assert 0.0 < scores["quoted"] < scores["lisbon"] < 1.0
    only = index.search(unique_uid, "Lisbon", layers=["long_term"], limit=10)
    assert [h.memory_id for h in only] == ["lisbon", "quoted"]
    # BM25F: the quote-only match counts its term at the quote's weight, so it scores below.
    assert only[0].score > only[1].score > 0.0


def test_search_normalises_by_length(index, unique_uid):
    """BM25's length normalisation: the same single match in a short memory outranks it in a long one."""
    index.upsert([
        doc(unique_uid, "long", "User talked for an hour about the garden, the neighbours, the weather and kayaking"),
        doc(unique_uid, "short", "User loves kayaking"),
        doc(unique_uid, "other", "User bought a new lamp for the living room"),
    ])
    hits = index.search(unique_uid, "kayaking", layers=["long_term"], limit=10)
    assert [h.memory_id for h in hits] == ["short", "long"]
    assert hits[0].score > hits[1].score > 0.0


def test_filter_values_with_special_characters(index):
    uid = f"user:{uuid.uuid4().hex[:6]} & co,"
    index.upsert([doc(uid, "mem,1 && x", "special characters survive")])
    assert index.provider_ids(uid) == {pid(uid, "mem,1 && x")}
    assert [h.memory_id for h in index.search(uid, "special", layers=["long_term"], limit=5)] == ["mem,1 && x"]
    index.delete(uid, ["mem,1 && x"])
    assert index.provider_ids(uid) == set()


def test_import_failures_are_checked_per_document(index, unique_uid):
    good = doc(unique_uid, "ok", "fine")
    bad = doc(unique_uid, "bad", "revision out of int64 range", revision=2**70)  # HTTP 200, line fails
    with pytest.raises(PermanentError) as err:
        index.upsert([good, bad])
    assert pid(unique_uid, "bad") in str(err.value)
    assert index.provider_ids(unique_uid) == {pid(unique_uid, "ok")}


def test_server_down_is_provider_unavailable():
    idx = TypesenseIndex(f"http://127.0.0.1:{free_port()}", "k", timeout_s=1.0, num_retries=0)
    with pytest.raises(ProviderUnavailable) as err:
        idx.ensure_ready()
    assert err.value.retryable
    with pytest.raises(ProviderUnavailable):
        idx.upsert([doc("u", "m", "c")])


def test_wrong_api_key_is_permanent(typesense_server):
    idx = TypesenseIndex(typesense_server.url, "wrong-key", collection="memories_test")
    with pytest.raises(PermanentError):
        idx.ensure_ready()

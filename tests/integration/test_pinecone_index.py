"""PineconeIndex (official SDK) against the local Pinecone-compatible endpoint, and the endpoint itself.

When ``PINECONE_API_KEY`` and ``STRATA_PINECONE_HOST`` are set, the adapter contract tests also run
against that real index (in a throw-away namespace) through the ``real_or_local`` parameter.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from pinecone import Pinecone
from pinecone.errors.exceptions import ApiError

from core.adapters import pinecone_index
from core.adapters.embeddings import HashingEmbedder
from core.adapters.pinecone_index import PineconeIndex
from core.errors import PermanentError, ProviderUnavailable
from core.ports import ProjectionDoc
from strata_dev.localstack.pinecone_local import serve

pytestmark = pytest.mark.integration

EMBED = HashingEmbedder(384)
REAL = bool(os.environ.get("PINECONE_API_KEY") and os.environ.get("STRATA_PINECONE_HOST"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pid(uid: str, memory_id: str) -> str:
    return "memproj:" + hashlib.sha256(json.dumps([uid, memory_id]).encode()).hexdigest()[:40]


def doc(uid: str, memory_id: str, content: str, layer: str = "long_term", revision: int = 1) -> ProjectionDoc:
    return ProjectionDoc(provider_id=pid(uid, memory_id), uid=uid, memory_id=memory_id, layer=layer,
                         revision=revision, content=content)


def upsert(index: PineconeIndex, docs: list[ProjectionDoc]) -> None:
    index.upsert(docs, EMBED.embed([d.content for d in docs]))


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(params=["local", "real"] if REAL else ["local"])
def index(request, pinecone_endpoint) -> PineconeIndex:
    namespace = f"test-{uuid.uuid4().hex[:10]}"
    if request.param == "real":
        idx = PineconeIndex(os.environ["PINECONE_API_KEY"], os.environ["STRATA_PINECONE_HOST"], namespace)
    else:
        idx = PineconeIndex("local-key", pinecone_endpoint.url, namespace)
    idx.ensure_ready()
    return idx


@pytest.fixture
def raw(pinecone_endpoint):
    return Pinecone(api_key="local-key").Index(host=pinecone_endpoint.url)


# --------------------------------------------------------------------------- adapter contract
def test_upsert_replaces_legacy_vectors_of_the_same_memory(index, raw, unique_uid):
    if index.host != raw.host:
        pytest.skip("seeds legacy rows through the local endpoint only")
    other = unique_uid + "-other"
    vec = EMBED.embed_one("old")
    raw.upsert(vectors=[
        {"id": "m1", "values": vec, "metadata": {"uid": unique_uid, "memory_id": "m1", "layer": "long_term"}},
        {"id": f"{unique_uid}-m1", "values": vec, "metadata": {"uid": unique_uid, "memory_id": "m1"}},
        {"id": f"{other}-m1", "values": vec, "metadata": {"uid": other, "memory_id": "m1"}},
    ], namespace=index.namespace)
    assert index.provider_ids(unique_uid) == {"m1", f"{unique_uid}-m1"}

    upsert(index, [doc(unique_uid, "m1", "green tea every morning", revision=2)])
    assert index.provider_ids(unique_uid) == {pid(unique_uid, "m1")}
    assert index.provider_ids(other) == {f"{other}-m1"}
    stored = raw.fetch(ids=[pid(unique_uid, "m1")], namespace=index.namespace).vectors[pid(unique_uid, "m1")]
    assert stored.metadata == {"uid": unique_uid, "memory_id": "m1", "layer": "long_term", "revision": 2,
                               "capture_device_ids": []}


def test_delete_and_purge_user(index, unique_uid):
    other = unique_uid + "-b"
    upsert(index, [doc(unique_uid, f"m{i}", f"memory {i}") for i in range(4)] + [doc(other, "m0", "memory 0")])
    index.delete(unique_uid, ["m1", "m2", "missing"])
    assert index.provider_ids(unique_uid) == {pid(unique_uid, "m0"), pid(unique_uid, "m3")}
    index.purge_user(unique_uid)
    assert index.provider_ids(unique_uid) == set()
    assert index.provider_ids(other) == {pid(other, "m0")}


def test_upsert_in_batches_and_purge_many(index, unique_uid, monkeypatch):
    monkeypatch.setattr(pinecone_index, "FETCH_PAGE", 40)  # walk several fetch_by_metadata pages
    docs = [doc(unique_uid, f"bulk-{i:03d}", f"bulk memory {i}") for i in range(230)]
    upsert(index, docs)
    assert index.provider_ids(unique_uid) == {d.provider_id for d in docs}
    index.purge_user(unique_uid)
    assert index.provider_ids(unique_uid) == set()


def test_search_filters_by_capture_device(index, unique_uid):
    """The device scope: a vector matches when one of its capture devices is in the scope."""
    both = ("ios_0a1b2c3d", "android_11223344")
    upsert(index, [
        ProjectionDoc(provider_id=pid(unique_uid, "ios"), uid=unique_uid, memory_id="ios", layer="long_term",
                      revision=1, content="green tea on the phone", capture_device_ids=(both[0],)),
        ProjectionDoc(provider_id=pid(unique_uid, "two"), uid=unique_uid, memory_id="two", layer="long_term",
                      revision=1, content="green tea on two phones", capture_device_ids=both),
        doc(unique_uid, "none", "green tea of no device"),
    ])
    query = EMBED.embed_one("green tea")

    def found(devices: list[str] | None) -> set[str]:
        return {h.memory_id for h in index.search(unique_uid, query, layers=["long_term"], limit=5, devices=devices)}

    assert found(None) == {"ios", "two", "none"}
    assert found(["ios_0a1b2c3d"]) == {"ios", "two"}
    assert found(["android_11223344"]) == {"two"}
    assert found(["web_99999999"]) == set()
    assert found([]) == set()


def test_search_filters_by_uid_and_layer(index, unique_uid):
    other = unique_uid + "-x"
    upsert(index, [
        doc(unique_uid, "tea", "I drink green tea every morning"),
        doc(unique_uid, "car", "My car is a blue hatchback"),
        doc(unique_uid, "tea-arch", "green tea every morning, years ago", layer="archive"),
        doc(other, "tea", "I drink green tea every morning"),
    ])
    query = EMBED.embed_one("green tea in the morning")
    hits = index.search(unique_uid, query, layers=["long_term", "short_term"], limit=5)
    assert [h.memory_id for h in hits] == ["tea", "car"]
    assert hits[0].provider_id == pid(unique_uid, "tea")
    assert hits[0].score > hits[1].score
    assert [h.memory_id for h in index.search(unique_uid, query, layers=["archive"], limit=5)] == ["tea-arch"]
    assert index.search(unique_uid, query, layers=[], limit=5) == []


def test_wrong_dimension_is_permanent(index, unique_uid):
    with pytest.raises(PermanentError):
        index.upsert([doc(unique_uid, "m", "x")], [[1.0, 0.0, 0.0]])


def test_mismatched_docs_and_vectors_refused(index, unique_uid):
    with pytest.raises(PermanentError):
        index.upsert([doc(unique_uid, "m", "x")], [])


# --------------------------------------------------------------------------- failures
def test_server_down_is_provider_unavailable():
    idx = PineconeIndex("k", f"http://127.0.0.1:{free_port()}", "ns", timeout_s=2.0)
    with pytest.raises(ProviderUnavailable) as err:
        idx.provider_ids("u")
    assert err.value.retryable
    with pytest.raises(ProviderUnavailable):
        idx.upsert([doc("u", "m", "x")], EMBED.embed(["x"]))


def test_wrong_api_key_is_permanent(tmp_path):
    server = serve("127.0.0.1", 0, tmp_path, 8, api_key="right")
    try:
        with pytest.raises(PermanentError):
            PineconeIndex("wrong", server.url, "ns").ensure_ready()
        PineconeIndex("right", server.url, "ns").ensure_ready()
    finally:
        server.shutdown()


# --------------------------------------------------------------------------- the local endpoint
def test_request_log_shows_metadata_without_content(index, pinecone_endpoint, unique_uid):
    if index.host != pinecone_endpoint.url:
        pytest.skip("local endpoint only")
    secret = f"my secret diary entry {uuid.uuid4().hex}"
    upsert(index, [doc(unique_uid, "diary", secret)])
    index.delete(unique_uid, ["diary"])
    entries = [e for e in read_log(pinecone_endpoint.request_log) if unique_uid in json.dumps(e)]
    upserts = [e for e in entries if e["path"] == "/vectors/upsert"]
    assert len(upserts) == 1
    (vector,) = upserts[0]["body"]["vectors"]
    assert vector["id"] == pid(unique_uid, "diary")
    assert vector["metadata"] == {"uid": unique_uid, "memory_id": "diary", "layer": "long_term", "revision": 1,
                                  "capture_device_ids": []}
    assert len(vector["values"]) == 384
    assert upserts[0]["body"]["namespace"] == index.namespace
    assert all(secret not in json.dumps(e) for e in read_log(pinecone_endpoint.request_log))
    deletes = [e for e in read_log(pinecone_endpoint.request_log)
               if e["path"] == "/vectors/delete" and pid(unique_uid, "diary") in json.dumps(e)]
    assert deletes and deletes[-1]["body"]["ids"] == [pid(unique_uid, "diary")]
    assert all(e["api_version"] for e in entries)


def test_filters_and_sdk_surface(raw, pinecone_endpoint):
    ns = f"filters-{uuid.uuid4().hex[:8]}"
    base = [0.0] * pinecone_endpoint.dimension

    def vec(i: int) -> list[float]:
        v = list(base)
        v[i] = 1.0
        return v

    raw.upsert(vectors=[
        ("a", vec(0), {"kind": "x", "n": 1, "tags": ["red", "blue"]}),
        ("b", vec(1), {"kind": "y", "n": 2}),
        ("c", vec(2), {"kind": "x", "n": 3}),
    ], namespace=ns)

    def ids(flt) -> set[str]:
        return {m.id for m in raw.query(vector=vec(0), top_k=10, filter=flt, namespace=ns).matches}

    assert ids({"kind": "x"}) == {"a", "c"}
    assert ids({"kind": {"$ne": "x"}}) == {"b"}
    assert ids({"kind": {"$in": ["y", "z"]}}) == {"b"}
    assert ids({"kind": {"$nin": ["y"]}}) == {"a", "c"}
    assert ids({"$or": [{"kind": "y"}, {"n": {"$gte": 3}}]}) == {"b", "c"}
    assert ids({"$and": [{"kind": "x"}, {"n": {"$lt": 3}}]}) == {"a"}
    assert ids({"tags": {"$in": ["blue"]}}) == {"a"}
    assert ids({"tags": "red"}) == {"a"}

    top = raw.query(vector=vec(0), top_k=1, namespace=ns, include_values=True, include_metadata=True).matches[0]
    assert top.id == "a" and top.score == pytest.approx(1.0) and top.values == vec(0)
    by_id = raw.query(id="c", top_k=1, namespace=ns).matches
    assert by_id[0].id == "c"
    assert set(raw.fetch(ids=["a", "nope"], namespace=ns).vectors) == {"a"}
    pages = list(raw.list(prefix="", limit=2, namespace=ns))
    assert [[v.id for v in p.vectors] for p in pages] == [["a", "b"], ["c"]]
    assert raw.describe_index_stats().namespaces[ns].vector_count == 3

    with pytest.raises(ApiError) as err:
        raw.upsert(vectors=[("bad", [1.0, 2.0])], namespace=ns)
    assert err.value.status_code == 400

    raw.delete(filter={"kind": {"$eq": "x"}}, namespace=ns)
    assert {m.id for m in raw.query(vector=vec(1), top_k=10, namespace=ns).matches} == {"b"}
    raw.delete(delete_all=True, namespace=ns)
    assert raw.query(vector=vec(1), top_k=10, namespace=ns).matches == []


def test_persistence_across_restart(tmp_path, unique_uid):
    server = serve("127.0.0.1", 0, tmp_path, 384)
    try:
        idx = PineconeIndex("k", server.url, "persist")
        upsert(idx, [doc(unique_uid, "m1", "kept across restarts"), doc(unique_uid, "m2", "deleted")])
        idx.delete(unique_uid, ["m2"])
    finally:
        server.shutdown()
    assert list((tmp_path / "namespaces").glob("*.json"))
    server = serve("127.0.0.1", 0, tmp_path, 384)
    try:
        idx = PineconeIndex("k", server.url, "persist")
        assert idx.provider_ids(unique_uid) == {pid(unique_uid, "m1")}
        hits = idx.search(unique_uid, EMBED.embed_one("kept across restarts"), layers=["long_term"], limit=3)
        assert hits[0].memory_id == "m1" and hits[0].score == pytest.approx(1.0)
    finally:
        server.shutdown()


def test_runs_as_a_module(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "strata_dev.localstack.pinecone_local", "--host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(tmp_path), "--dimension", "16"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).json()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        assert health == {"status": "ok", "dimension": 16}
        assert PineconeIndex("k", f"http://127.0.0.1:{port}", "ns").dimension == 16
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0

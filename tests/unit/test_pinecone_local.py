"""The local Pinecone endpoint's store: matrix scoring, column-wise filters and journaled persistence.

The HTTP surface and the SDK round trip are covered in tests/integration/test_pinecone_index.py;
these tests pin the store against a plain-Python reference (cosine of lists, per-record filter).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata_dev.localstack.pinecone_local import ApiFailure, VectorStore, matches

DIM = 4


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def store(tmp_path: Path) -> VectorStore:
    return VectorStore(tmp_path, DIM)


def rec(vid: str, values: list[float], **metadata: Any) -> dict[str, Any]:
    return {"id": vid, "values": values, "metadata": metadata}


# --------------------------------------------------------------------------- filters
META = {"kind": "x", "n": 2, "flag": True, "tags": ["red", "blue"]}


@pytest.mark.parametrize(("flt", "expected"), [
    ({}, True),
    ({"kind": "x"}, True),
    ({"kind": "y"}, False),
    ({"kind": {"$ne": "y"}}, True),
    ({"missing": {"$ne": "y"}}, True),
    ({"missing": {"$eq": "y"}}, False),
    ({"kind": {"$in": ["x", "z"]}}, True),
    ({"kind": {"$nin": ["x"]}}, False),
    ({"missing": {"$nin": ["x"]}}, True),
    ({"tags": "red"}, True),
    ({"tags": {"$in": ["green", "blue"]}}, True),
    ({"tags": {"$nin": ["blue"]}}, False),
    ({"n": {"$gt": 1}}, True),
    ({"n": {"$lte": 1.5}}, False),
    ({"flag": {"$gt": 0}}, False),  # booleans are not numbers
    ({"missing": {"$lt": 10}}, False),
    ({"n": {"$exists": True}, "missing": {"$exists": False}}, True),
    ({"n": 2.0}, True),
    ({"$or": [{"kind": "y"}, {"n": {"$gte": 2}}]}, True),
    ({"$and": [{"kind": "x"}, {"n": {"$lt": 2}}]}, False),
    ({"kind": "x", "n": 3}, False),
    ({"kind": {"$in": [["x"], "x"]}}, True),  # an unhashable choice still compares by equality
])
def test_filter_semantics(flt: dict[str, Any], expected: bool) -> None:
    assert matches(META, flt) is expected


@pytest.mark.parametrize("flt", [
    {"$and": []}, {"$or": {"kind": "x"}}, {"$not": {"kind": "x"}}, {"kind": {"$regex": "x"}},
    {"kind": {"$in": "x"}}, {"n": {"$gt": "1"}}, {"n": {"$gt": True}}, {"$and": ["kind"]},
])
def test_malformed_filters_are_400(flt: dict[str, Any]) -> None:
    with pytest.raises(ApiFailure) as err:
        matches(META, flt)
    assert err.value.status == 400


def test_malformed_filter_is_refused_even_on_an_empty_namespace(tmp_path: Path) -> None:
    with pytest.raises(ApiFailure):
        store(tmp_path).query("empty", {"vector": [1.0, 0, 0, 0], "topK": 3, "filter": {"kind": {"$bad": 1}}})


# --------------------------------------------------------------------------- scoring
vectors = st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0]), min_size=DIM, max_size=DIM).filter(any)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(vectors, st.sampled_from(["a", "b"])), min_size=1, max_size=30),
       probe=vectors, top_k=st.integers(1, 12), deletes=st.sets(st.integers(0, 29), max_size=8))
def test_query_matches_a_plain_python_ranking(tmp_path_factory: pytest.TempPathFactory, rows: list[Any],
                                              probe: list[float], top_k: int, deletes: set[int]) -> None:
    vs = store(tmp_path_factory.mktemp("ns"))
    vs.upsert("ns", [rec(f"v{i:02d}", values, group=group) for i, (values, group) in enumerate(rows)])
    vs.delete("ns", {"ids": [f"v{i:02d}" for i in deletes]})
    live = {f"v{i:02d}": (values, group) for i, (values, group) in enumerate(rows) if i not in deletes}
    flt = {"group": {"$eq": "a"}}
    got = vs.query("ns", {"vector": probe, "topK": top_k, "filter": flt, "includeMetadata": True})
    reference = sorted(((cosine(probe, values), vid) for vid, (values, group) in live.items() if group == "a"),
                       key=lambda item: (-item[0], item[1]))[:top_k]
    assert [m["id"] for m in got] == [vid for _, vid in reference]
    assert [m["score"] for m in got] == pytest.approx([score for score, _ in reference], abs=1e-12)
    assert all(m["metadata"]["group"] == "a" and m["values"] == [] for m in got)


def test_ties_at_the_cut_are_ordered_by_id(tmp_path: Path) -> None:
    vs = store(tmp_path)
    vs.upsert("ns", [rec(vid, [1.0, 0.0, 0.0, 0.0]) for vid in ("d", "b", "c", "a")]
              + [rec("z", [0.0, 1.0, 0.0, 0.0])])
    got = vs.query("ns", {"vector": [1.0, 0.0, 0.0, 0.0], "topK": 2})
    assert [m["id"] for m in got] == ["a", "b"]


def test_values_metadata_and_update_round_trip(tmp_path: Path) -> None:
    vs = store(tmp_path)
    vs.upsert("ns", [rec("a", [0.1, 0.2, 0.3, 0.4], kind="x"), rec("b", [1, 0, 0, 0], kind="y")])
    assert vs.fetch("ns", ["a", "nope"]) == {"a": {"id": "a", "values": [0.1, 0.2, 0.3, 0.4],
                                                    "metadata": {"kind": "x"}}}
    assert vs.update("ns", {"id": "a", "setMetadata": {"n": 1}}) == 1
    assert vs.update("ns", {"id": "nope", "setMetadata": {"n": 1}}) == 0
    assert [m["id"] for m in vs.query("ns", {"vector": [1, 0, 0, 0], "topK": 5, "filter": {"n": 1}})] == ["a"]
    vs.delete("ns", {"filter": {"kind": "y"}})
    assert vs.list_ids("ns", "", 10, None) == (["a"], None)
    assert vs.stats(None)["namespaces"] == {"ns": {"vectorCount": 1}}


# --------------------------------------------------------------------------- persistence
def test_journal_replays_after_a_crash_and_ignores_a_torn_last_line(tmp_path: Path) -> None:
    vs = store(tmp_path)
    vs.upsert("ns/1", [rec("a", [1, 0, 0, 0], k="x"), rec("b", [0, 1, 0, 0], k="y")])
    vs.delete("ns/1", {"ids": ["b"]})
    vs.upsert("ns/1", [rec("c", [0, 0, 1, 0])])
    journal = next((tmp_path / "namespaces").glob("*.journal"))
    with journal.open("a") as fh:
        fh.write('{"put": {"d"')  # a crash mid-append: never answered, so never happened
    reloaded = store(tmp_path)  # no close(): as if the process had died
    assert set(reloaded.fetch("ns/1", ["a", "b", "c", "d"])) == {"a", "c"}
    assert reloaded.fetch("ns/1", ["a"])["a"]["metadata"] == {"k": "x"}


def test_compaction_folds_the_journal_into_the_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(VectorStore, "COMPACT_MIN_BYTES", 200)
    vs = store(tmp_path)
    for i in range(10):
        vs.upsert("ns", [rec(f"v{i}", [float(i + 1), 0, 0, 0], i=i)])
    vs.delete("ns", {"ids": ["v3"]})
    snapshot = tmp_path / "namespaces" / "ns-ns.json"
    assert snapshot.exists()
    vs.close()
    assert not list((tmp_path / "namespaces").glob("*.journal"))
    stored = json.loads(snapshot.read_text())["vectors"]
    assert sorted(stored) == sorted(f"v{i}" for i in range(10) if i != 3)
    assert store(tmp_path).fetch("ns", ["v9"])["v9"]["values"] == [10.0, 0.0, 0.0, 0.0]


def test_emptied_namespace_leaves_no_files(tmp_path: Path) -> None:
    vs = store(tmp_path)
    vs.upsert("gone", [rec("a", [1, 0, 0, 0])])
    vs.close()
    vs.upsert("gone", [rec("b", [1, 0, 0, 0])])
    vs.delete("gone", {"deleteAll": True})
    assert not list((tmp_path / "namespaces").iterdir())
    assert vs.stats(None)["namespaces"] == {}
    assert store(tmp_path).namespaces == {}

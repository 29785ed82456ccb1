"""The drain's citation lookup: which stored edges cite each memory of a batch.

It reads them with one ``array-contains-any`` query per 30 memories (Firestore's limit) instead of
one ``array-contains`` query per memory; the reference here is the per-memory answer, computed by
brute force over the stored edges: for each memory, every edge whose stored ``memory_ids`` holds it,
in edge-id order (what a query for that memory alone returns)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain import paths
from core.services import graph
from tests.unit.fakes.ports import world

MEMORIES = [f"mem_{i:02d}" for i in range(80)]  # more than two chunks of 30 can be asked for at once
EDGES = [f"edge_{i:02d}" for i in range(15)]


@settings(max_examples=60, deadline=None)
@given(stored=st.dictionaries(st.sampled_from(EDGES), st.lists(st.sampled_from(MEMORIES), max_size=6)),
       asked=st.lists(st.sampled_from(MEMORIES), unique=True, max_size=75))
def test_each_memory_gets_exactly_the_edges_a_query_of_its_own_would_return(
        stored: dict[str, list[str]], asked: list[str]) -> None:
    w = world()
    uid = "u-citations"
    for edge_id, cited in stored.items():
        w.store.put(paths.doc(uid, "knowledge_edges", edge_id),
                    {"id": edge_id, "source": "user", "target": f"fact_{edge_id}", "label": "is",
                     "memory_ids": cited})
    w.store.put(paths.doc("someone-else", "knowledge_edges", "edge_00"), {"id": "edge_00", "memory_ids": MEMORIES})

    got = graph._edges_citing(w.ctx, uid, asked)

    want = {m: [e for e in sorted(stored) if m in stored[e]] for m in asked}
    assert {m: [snap.id for snap in snaps] for m, snaps in got.items()} == {m: e for m, e in want.items() if e}
    for snaps in got.values():
        for snap in snaps:  # the stored edge itself, unpruned
            assert snap.data["memory_ids"] == stored[snap.id]

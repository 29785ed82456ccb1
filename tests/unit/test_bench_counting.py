"""How the bench's RPC counter tells sequential round trips from overlapping ones
(strata_dev.bench.counting.Counts.sequential): intervals are set by hand, no clock involved."""

from __future__ import annotations

from strata_dev.bench.counting import Counts


def _counts(*intervals: tuple[float, float]) -> Counts:
    counts = Counts()
    counts.intervals = [list(i) for i in intervals]
    return counts


def test_no_rpcs_no_round_trips() -> None:
    assert Counts().sequential() == 0


def test_one_after_another_each_count() -> None:
    assert _counts((0, 1), (1, 2), (2.5, 3)).sequential() == 3


def test_overlapping_rpcs_count_once() -> None:
    # a fence read and two queries sent together, then a commit after all of them answered
    assert _counts((0, 1), (0.1, 1.2), (0.2, 0.9), (1.3, 2)).sequential() == 2


def test_a_long_stream_does_not_hide_a_chain_beside_it() -> None:
    # a stream consumed lazily (open 0..10) beside three sequential lookups: three round trips
    assert _counts((0, 10), (1, 2), (3, 4), (5, 6)).sequential() == 3


def test_reset_forgets_intervals() -> None:
    counts = _counts((0, 1))
    counts.reset()
    assert counts.sequential() == 0 and counts.snapshot()["rpcs"] == 0


def test_recorded_writes_come_back_as_documents_at_their_paths() -> None:
    """A recorded ``Write`` names its document by full resource name
    (``projects/{project}/databases/{database}/documents/{path}``); the replay writes the document
    at that path, a delete as no data, a masked update as a merge."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import firestore
    from google.cloud.firestore_v1.types import write as write_types

    from strata_dev.bench.counting import as_documents, retarget

    client = firestore.Client(project="p", credentials=AnonymousCredentials())
    root = "projects/p/databases/(default)/documents/"
    update = write_types.Write.pb(write_types.Write(update={"name": root + "users/u1/memory_items/m1",
                                                            "fields": {"content": {"string_value": "Lisbon"}}}))
    merge = write_types.Write.pb(write_types.Write(update={"name": root + "users/u1/documents/d1"},
                                                   update_mask={"field_paths": ["x"]}))
    delete = write_types.Write.pb(write_types.Write(delete=root + "users/u1/conversations/c1"))
    documents = as_documents(client, retarget([update, merge, delete], "u1", "u2"))
    assert [(ref.path, data, merged) for ref, data, merged in documents] == [
        ("users/u2/memory_items/m1", {"content": "Lisbon"}, False),
        ("users/u2/documents/d1", {}, True),
        ("users/u2/conversations/c1", None, False),
    ]

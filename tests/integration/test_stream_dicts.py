"""The list path's own protobuf decoding returns exactly what the SDK's snapshots return."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from google.cloud.firestore_v1 import GeoPoint

from core.adapters.firestore.client import stream_dicts
from core.bootstrap import Context

pytestmark = pytest.mark.integration


def test_decoded_documents_equal_the_sdks(stack: dict[str, Any]) -> None:
    ctx = Context()
    col = ctx.paths.col(f"decode-{uuid.uuid4().hex[:10]}", "memory_items")
    ref = ctx.client.document("users/x/memory_items/y")
    docs = {
        "a": {"s": "text ✓", "i": 7, "f": 1.5, "b": True, "n": None, "t": datetime(2026, 11, 30, 1, 2, 3, 456789,
                                                                                   tzinfo=UTC),
              "bytes": b"\x00\x01", "ref": ref, "geo": GeoPoint(38.7, -9.1), "empty_map": {}, "empty_list": [],
              "nested": {"list": [1, "two", {"three": [3.0, None]}], "map": {"k": datetime(2020, 1, 1, tzinfo=UTC)}}},
        "b": {"s": "", "i": -1, "big": 2**62},
    }
    for doc_id, data in docs.items():
        col.document(doc_id).set(data)
    query = col.order_by("__name__")
    fast = stream_dicts(query)
    sdk = [(s.reference, s.to_dict()) for s in query.stream()]
    assert [r.path for r, _ in fast] == [r.path for r, _ in sdk]
    assert [d for _, d in fast] == [d for _, d in sdk]
    assert fast[0][1]["t"] == docs["a"]["t"] and fast[0][1]["ref"].path == "users/x/memory_items/y"


def test_documents_written_and_read_in_a_transaction_by_the_wire_codec_equal_the_sdks(stack: dict[str, Any]) -> None:
    from google.cloud import firestore

    from core.adapters.firestore.wire import get_all, set_document

    ctx = Context()
    col = ctx.paths.col(f"wire-{uuid.uuid4().hex[:10]}", "memory_items")
    data = {"s": "text ✓", "i": 7, "f": 1.5, "b": False, "n": None, "bytes": b"\x00",
            "t": datetime(2026, 11, 30, 1, 2, 3, 456789, tzinfo=UTC), "geo": GeoPoint(1.0, 2.0),
            "ref": ctx.client.document("users/x/memory_items/y"), "empty": {}, "list": [1, {"k": [None, "v"]}, {}]}
    ours, theirs, missing = col.document("ours"), col.document("theirs"), col.document("missing")

    @firestore.transactional
    def write(transaction: Any) -> None:
        set_document(transaction, ours, data)
        transaction.set(theirs, data)

    write(ctx.client.transaction())

    @firestore.transactional
    def read(transaction: Any) -> list[Any]:
        return get_all(ctx.client, [ours, theirs, missing], transaction)

    snaps = {s.reference.path: s for s in read(ctx.client.transaction())}
    sdk = {s.reference.path: s for s in ctx.client.get_all([ours, theirs, missing])}
    assert set(snaps) == set(sdk) == {ours.path, theirs.path, missing.path}
    for path, snap in snaps.items():
        assert snap.exists == sdk[path].exists
        assert snap.to_dict() == sdk[path].to_dict()
    assert snaps[ours.path].to_dict() == snaps[theirs.path].to_dict()
    assert snaps[ours.path].to_dict() is not snaps[ours.path].to_dict()  # a fresh dict per call, as the SDK's

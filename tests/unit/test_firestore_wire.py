"""The apply path's own document encoding is byte for byte the SDK's ``set`` (no merge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.cloud.firestore_v1 import SERVER_TIMESTAMP, GeoPoint, _helpers
from hypothesis import given, settings
from hypothesis import strategies as st

from core.adapters.firestore import codec, wire

PATH = "projects/p/databases/(default)/documents/users/u/memory_items/m"
CLIENT = firestore.Client(project="p", credentials=AnonymousCredentials())

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**63, max_value=2**63 - 1),
    st.floats(allow_nan=False), st.text(max_size=20), st.binary(max_size=8),
    st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))])),
    st.datetimes(),  # naive: the SDK takes it as UTC
    st.builds(lambda s, n: DatetimeWithNanoseconds.from_rfc3339(f"2026-01-02T03:04:{s:02d}.{n:09d}Z"),
              st.integers(0, 59), st.integers(0, 999_999_999)),
    st.builds(GeoPoint, st.floats(-90, 90), st.floats(-180, 180)),
    st.sampled_from(["users/a/memory_items/b", "memory_controls/global"]).map(CLIENT.document),
)
keys = st.text(min_size=1, max_size=8)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                        st.dictionaries(keys, inner, max_size=4)), max_leaves=20)
documents = st.dictionaries(keys, values, max_size=8)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_encoded_writes_equal_the_sdks_and_decode_as_the_sdk_decodes(data: dict[str, Any]) -> None:
    # Both properties on each generated document: a document costs more to draw than to check.
    write = wire.encode_document(PATH, data)
    [sdk_write] = _helpers.pbs_for_set_no_merge(PATH, data)
    assert write.SerializeToString(deterministic=True) == type(sdk_write).pb(sdk_write).SerializeToString(
        deterministic=True)
    decoded = codec.decode_fields(write.update.fields, codec.client_references(CLIENT))
    assert decoded == _helpers.decode_dict(sdk_write.update.fields, CLIENT)


class _Recorder:
    """Stands in for a transaction or batch: records what reaches it."""

    def __init__(self) -> None:
        self.write_pbs: list[Any] = []
        self.sdk_sets: list[tuple[Any, dict[str, Any]]] = []

    def _add_write_pbs(self, pbs: list[Any]) -> None:
        self.write_pbs.extend(pbs)

    def set(self, ref: Any, data: dict[str, Any]) -> None:
        self.sdk_sets.append((ref, data))


def test_values_only_the_sdk_encodes_go_to_the_sdk() -> None:
    ref = CLIENT.document("users/u/memory_items/m")
    for data in ({"at": SERVER_TIMESTAMP}, {"nested": {"at": SERVER_TIMESTAMP}}, {"": 1}, {"x": object()},
                 {"x": {1: "int key"}}, {"big": 2**64}):
        recorder = _Recorder()
        wire.set_document(recorder, ref, data)
        assert recorder.sdk_sets == [(ref, data)] and recorder.write_pbs == []
    recorder = _Recorder()
    wire.set_document(recorder, ref, {"plain": [1, {"a": datetime(2026, 1, 1, tzinfo=UTC)}]})
    assert recorder.sdk_sets == [] and len(recorder.write_pbs) == 1

"""The Firestore value codec against the published REST ``Value`` format, and its protobuf round trips.

Expectations come from the format Firestore's REST reference publishes for ``Value`` (a oneof of
``nullValue``, ``booleanValue``, ``integerValue`` as a decimal string, ``doubleValue``,
``timestampValue`` as RFC 3339 UTC with up to nine fractional digits, ``stringValue``,
``bytesValue`` as base64, ``referenceValue`` as a full resource name, ``geoPointValue`` with
``latitude``/``longitude``, ``arrayValue.values`` and ``mapValue.fields``): each generated value is
drawn together with the JSON this test writes for it by those rules, not with anything the codec
computes.
"""

from __future__ import annotations

import base64
import calendar
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.cloud.firestore_v1 import GeoPoint
from google.cloud.firestore_v1.types import document as firestore_types
from google.events.cloud.firestore_v1.types import data as event_types
from hypothesis import given, settings
from hypothesis import strategies as st

from core.adapters.cloudevents import decode_document_event
from core.adapters.firestore import codec
from strata_dev.cloudevents import conversation_event

CLIENT = firestore.Client(project="p", credentials=AnonymousCredentials())
ROOT = "projects/p/databases/(default)/documents/"
MIN_SECONDS = -62_135_596_800  # 0001-01-01T00:00:00Z, the earliest timestamp Firestore takes
MAX_SECONDS = 253_402_300_799  # 9999-12-31T23:59:59Z, the latest
_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z")

Pair = tuple[Any, dict[str, Any]]  # (Python value, its REST JSON Value)


def _timestamp(seconds: int, nanos: int) -> Pair:
    when = datetime(1, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds - MIN_SECONDS)
    value = DatetimeWithNanoseconds(when.year, when.month, when.day, when.hour, when.minute, when.second,
                                    nanosecond=nanos, tzinfo=UTC)
    text = (f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:"
            f"{when.second:02d}.{nanos:09d}Z")
    return value, {"timestampValue": text}


def _double(x: float) -> Pair:
    if math.isinf(x):  # JSON has no infinity: proto3's JSON mapping spells it
        return x, {"doubleValue": "Infinity" if x > 0 else "-Infinity"}
    return x, {"doubleValue": x}


def _reference(path: str) -> Pair:
    return CLIENT.document(path), {"referenceValue": ROOT + path}


paths = st.lists(st.text(alphabet="abcxyz019-_", min_size=1, max_size=6), min_size=1, max_size=3).map(
    lambda ids: "/".join(f"c{i}/{doc_id}" for i, doc_id in enumerate(ids)))
scalars: st.SearchStrategy[Pair] = st.one_of(
    st.just((None, {"nullValue": None})),
    st.booleans().map(lambda b: (b, {"booleanValue": b})),
    st.integers(-2**63, 2**63 - 1).map(lambda i: (i, {"integerValue": str(i)})),
    st.floats(allow_nan=False).map(_double),
    st.text(max_size=20).map(lambda s: (s, {"stringValue": s})),
    st.binary(max_size=12).map(lambda b: (b, {"bytesValue": base64.b64encode(b).decode()})),
    st.builds(_timestamp, st.integers(MIN_SECONDS, MAX_SECONDS), st.integers(0, 999_999_999)),
    st.builds(lambda lat, lng: (GeoPoint(lat, lng), {"geoPointValue": {"latitude": lat, "longitude": lng}}),
              st.floats(-90, 90), st.floats(-180, 180)),
    paths.map(_reference),
)
keys = st.text(min_size=1, max_size=8)


def _array(members: list[Pair]) -> Pair:
    return [m[0] for m in members], {"arrayValue": {"values": [m[1] for m in members]}}


def _map(members: dict[str, Pair]) -> Pair:
    return {k: m[0] for k, m in members.items()}, {"mapValue": {"fields": {k: m[1] for k, m in members.items()}}}


values: st.SearchStrategy[Pair] = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4).map(_array),
                                     st.dictionaries(keys, inner, max_size=4).map(_map)), max_leaves=20)


def canon(value: Any) -> Any:
    """A Python value with its type spelled out (``1 == 1.0 == True`` in Python; not in Firestore) and
    a timestamp as (seconds, nanoseconds), which ``datetime`` equality would cut to microseconds."""
    if isinstance(value, DatetimeWithNanoseconds):
        return ("timestamp", calendar.timegm(value.utctimetuple()), value.nanosecond)
    if isinstance(value, dict):
        return ("map", {k: canon(v) for k, v in value.items()})
    if isinstance(value, list):
        return ("array", [canon(v) for v in value])
    if isinstance(value, GeoPoint):
        return ("geo", value.latitude, value.longitude)
    if isinstance(value, firestore.DocumentReference):
        return ("reference", value.path)
    return (type(value).__name__, value)


def canon_rest(rest: Any) -> Any:
    """REST JSON with each timestamp as (seconds, nanoseconds): RFC 3339 allows 0 to 9 digits."""
    if isinstance(rest, dict):
        if set(rest) == {"timestampValue"}:
            match = _RFC3339.fullmatch(rest["timestampValue"])
            assert match, rest
            *parts, fraction = match.groups()
            seconds = calendar.timegm(tuple(int(p) for p in parts) + (0, 0, 0))
            return ("timestamp", seconds, int((fraction or "").ljust(9, "0")))
        return {k: canon_rest(v) for k, v in rest.items()}
    if isinstance(rest, list):
        return [canon_rest(v) for v in rest]
    return (type(rest).__name__, rest)


@settings(max_examples=300, deadline=None)
@given(values)
def test_a_value_encodes_to_its_published_rest_form_and_that_form_decodes_to_it(pair: Pair) -> None:
    # Both directions on each generated pair: a pair costs more to draw than to check.
    value, rest = pair
    assert canon_rest(codec.to_rest(value)) == canon_rest(rest)
    assert canon(codec.from_rest(rest, codec.client_references(CLIENT))) == canon(value)


@settings(max_examples=300, deadline=None)
@given(values)
def test_a_value_survives_the_firestore_and_the_events_protobufs(pair: Pair) -> None:
    value, _ = pair
    for message in (firestore_types.Value.pb(), event_types.Value.pb()):
        out = message()
        codec.fill(out, value)
        again = message.FromString(out.SerializeToString())
        assert canon(codec.decode(again, codec.client_references(CLIENT))) == canon(value)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(keys, values, max_size=6))
def test_a_trigger_event_carries_the_document_it_was_built_from(members: dict[str, Pair]) -> None:
    document = {k: m[0] for k, m in members.items()}
    body, headers = conversation_event("p", "u1", "c1", document)

    class Event:
        data = body

        @staticmethod
        def get(name: str) -> str:
            return headers.get(f"ce-{name}", "")

    decoded = decode_document_event(Event())
    assert decoded.path == "users/u1/conversations/c1"
    # without a client at hand, a reference decodes to its document path
    assert canon(decoded.value) == _references_as_paths(canon(document))


def _references_as_paths(canonical: Any) -> Any:
    if isinstance(canonical, tuple) and canonical[0] == "reference":
        return ("str", canonical[1])
    if isinstance(canonical, tuple) and canonical[0] in ("map", "array"):
        inner = canonical[1]
        return (canonical[0], {k: _references_as_paths(v) for k, v in inner.items()} if isinstance(inner, dict)
                else [_references_as_paths(v) for v in inner])
    return canonical


def test_other_spellings_of_the_published_format_decode() -> None:
    assert codec.from_rest({"timestampValue": "2026-01-02T03:04:05Z"}) == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    stamp = codec.from_rest({"timestampValue": "2026-01-02T03:04:05.000000007Z"})
    assert (stamp.microsecond, stamp.nanosecond) == (0, 7)
    assert codec.from_rest({"doubleValue": 2}) == 2.0 and isinstance(codec.from_rest({"doubleValue": 2}), float)
    assert codec.from_rest({"integerValue": 7}) == 7
    assert math.isnan(codec.from_rest({"doubleValue": "NaN"}))
    assert codec.from_rest({"mapValue": {}}) == {} and codec.from_rest({"arrayValue": {}}) == []
    assert codec.from_rest({"referenceValue": ROOT + "users/u1"}) == "users/u1"
    assert codec.from_rest({"bytesValue": "-_8="}) == b"\xfb\xff"  # the URL-safe alphabet is accepted too


def test_what_is_not_a_value_is_refused() -> None:
    for rest in ({"integerValue": "seven"}, {"stringValue": 1}, {"noSuchValue": 1}):
        try:
            codec.from_rest(rest)
        except ValueError:
            continue
        raise AssertionError(f"{rest} decoded")
    for value in (object(), {1: "int key"}, {"": 1}, 2**64, DatetimeWithNanoseconds.now):
        try:
            codec.to_rest(value)
        except (TypeError, ValueError):
            continue
        raise AssertionError(f"{value!r} encoded")


def test_encoder_spellings_that_decode_to_their_canonical_form() -> None:
    naive = datetime(2026, 1, 2, 3, 4, 5, 6)  # naive: taken as UTC, as the SDK does
    assert codec.to_rest(naive) == {"timestampValue": "2026-01-02T03:04:05.000006Z"}
    assert codec.to_rest((1, "a")) == {"arrayValue": {"values": [{"integerValue": "1"}, {"stringValue": "a"}]}}
    assert codec.to_rest(True) == {"booleanValue": True} and codec.to_rest(1) == {"integerValue": "1"}


def test_a_datetime_with_nanoseconds_made_from_microseconds_keeps_its_fraction() -> None:
    """A DatetimeWithNanoseconds built from microseconds (as a copy or ``replace`` makes one) has
    ``nanosecond == 0``; its fraction is in ``microsecond`` and must reach the Timestamp, or a
    re-written ``created_at`` moves to the whole second (and a list cursor's key moves with it)."""
    value = DatetimeWithNanoseconds(2026, 12, 3, 16, 0, 0, 123456, tzinfo=UTC)
    assert codec.to_rest(value) == {"timestampValue": "2026-12-03T16:00:00.123456Z"}
    precise = DatetimeWithNanoseconds.from_rfc3339("2026-12-03T16:00:00.123456789Z")
    assert codec.to_rest(precise) == {"timestampValue": "2026-12-03T16:00:00.123456789Z"}


def test_a_resource_name_gives_its_document_path() -> None:
    """Firestore names a document ``projects/{project}/databases/{database}/documents/{path}``; the
    path is everything after the first ``/documents/``, even where the path itself has a collection
    called ``documents``. A name that is already a path comes back as it is."""
    assert codec.document_path(ROOT + "users/u1/conversations/c1") == "users/u1/conversations/c1"
    named = "projects/p/databases/strata-db/documents/users/u1/documents/d1"
    assert codec.document_path(named) == "users/u1/documents/d1"
    assert codec.document_path("users/u1/memories/m1") == "users/u1/memories/m1"

"""The Firestore value codec: Python values to and from Firestore ``Value`` messages, both ways.

One codec serves every place a Firestore document crosses a wire:

- the apply path's commits and reads (``wire.py``, ``client.py``): the ``google.firestore.v1``
  protobufs the RPCs send and receive;
- the Firestore trigger's CloudEvents (``core/adapters/cloudevents.py``) and the events tests and
  benchmarks build (``strata_dev/cloudevents.py``): ``google.events.cloud.firestore.v1`` protobufs,
  the same ``Value`` schema under another package;
- the REST API's JSON (``strata smoke`` writes as the user through it): the published
  ``Value`` JSON (``{"stringValue": ...}``, ``{"integerValue": "7"}``, ``{"timestampValue":
  "2026-01-02T03:04:05.123456789Z"}`` ...), made from the same protobuf by protobuf's own
  ``json_format``.

The protobuf directions are written here rather than taken from the SDK (``_helpers.encode_value``
/ ``decode_value``) because the SDK goes through proto-plus wrappers: decoding a 20-segment conversation trigger's
document takes 135 µs here against 323 µs through the SDK's ``decode_dict`` (and 360 µs for
``json_format`` alone to make the REST dict of it), best of 15 rounds on the 2-core machine. Values decode as the SDK's ``to_dict()`` would: ``None``, ``bool``,
``int``, ``float``, ``str``, ``bytes``, ``DatetimeWithNanoseconds`` (nanoseconds kept),
``GeoPoint``, lists and dicts; a reference decodes to what ``reference`` makes of its full
resource name (by default its document path, ``users/u1/...``). Typed maps (vectors, BSON values)
stay plain maps. The encoder takes the same values, plus tuples, naive datetimes (as UTC) and any
object with a ``_document_path`` (a ``DocumentReference``); anything else raises ``TypeError``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.cloud.firestore_v1 import GeoPoint
from google.cloud.firestore_v1.types import document as document_types
from google.protobuf import json_format

_VALUE = document_types.Value.pb()
_DOCUMENTS = "/documents/"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def document_path(name: str) -> str:
    """``users/u1/c/x`` from a full resource name (``projects/p/databases/d/documents/users/u1/c/x``);
    a name without the ``/documents/`` part is returned as it is."""
    return name.split(_DOCUMENTS, 1)[1] if _DOCUMENTS in name else name


# -- Python to protobuf -------------------------------------------------------------------------


def fill(out: Any, value: Any) -> None:
    """Encode ``value`` into the (empty) ``Value`` protobuf ``out``, as the SDK's ``encode_value``
    would; ``TypeError`` for a value it has no encoding for, ``ValueError`` for an integer outside
    64 bits."""
    if value is None:
        out.null_value = 0
    elif value is True or value is False:
        out.boolean_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, int):
        out.integer_value = value
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, dict):
        out.map_value.SetInParent()  # an empty map is still a map
        fill_fields(out.map_value.fields, value)
    elif isinstance(value, list | tuple):
        values = out.array_value.values
        out.array_value.SetInParent()
        for member in value:
            fill(values.add(), member)
    elif isinstance(value, datetime.datetime):
        _fill_timestamp(out.timestamp_value, value)
    elif type(value) is bytes:  # bytes carrying a BSON subtype are the SDK's
        out.bytes_value = value
    elif isinstance(value, GeoPoint):
        out.geo_point_value.latitude = value.latitude
        out.geo_point_value.longitude = value.longitude
    elif isinstance(getattr(value, "_document_path", None), str):
        out.reference_value = value._document_path
    else:
        raise TypeError(type(value).__name__)


def fill_fields(out: Any, data: dict[str, Any]) -> None:
    """Encode ``data`` into the protobuf map ``out`` (a document's or a map value's ``fields``)."""
    for key, member in data.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"field name {key!r}")
        fill(out[key], member)


def _fill_timestamp(out: Any, value: datetime.datetime) -> None:
    """A datetime (naive: UTC) as a ``Timestamp``, nanoseconds kept. Whole seconds come from the
    exact ``timedelta`` to the epoch: ``DatetimeWithNanoseconds.timestamp_pb`` truncates a negative
    float toward zero and puts 1969-12-31T23:59:59.5Z a second late."""
    delta = (value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)) - _EPOCH
    out.seconds = delta.days * 86_400 + delta.seconds
    # ``nanosecond`` is 0 on a DatetimeWithNanoseconds made from microseconds (a copy, a replace):
    # its microseconds then carry the fraction, as ``timestamp_pb`` reads it.
    nanos = value.nanosecond if isinstance(value, DatetimeWithNanoseconds) else 0
    out.nanos = nanos or value.microsecond * 1000


# -- protobuf to Python -------------------------------------------------------------------------


def decode(value: Any, reference: Callable[[str], Any] = document_path) -> Any:
    """One ``Value`` protobuf as the Python value the SDK would return; a reference becomes
    ``reference(full resource name)``."""
    kind = value.WhichOneof("value_type")
    if kind == "string_value":
        return value.string_value
    if kind == "map_value":
        return {k: decode(v, reference) for k, v in value.map_value.fields.items()}
    if kind == "array_value":
        return [decode(v, reference) for v in value.array_value.values]
    if kind == "timestamp_value":
        return DatetimeWithNanoseconds.from_timestamp_pb(value.timestamp_value)
    if kind == "null_value" or kind is None:
        return None
    if kind == "reference_value":
        return reference(value.reference_value)
    if kind == "geo_point_value":
        return GeoPoint(value.geo_point_value.latitude, value.geo_point_value.longitude)
    return getattr(value, kind)  # boolean, integer, double, bytes


def decode_fields(fields: Any, reference: Callable[[str], Any] = document_path) -> dict[str, Any]:
    """A document's (or a map value's) ``fields`` protobuf map as a dict."""
    return {k: decode(v, reference) for k, v in fields.items()}


def client_references(client: Any) -> Callable[[str], Any]:
    """A ``reference`` argument that makes each reference a ``DocumentReference`` of ``client``."""
    return lambda name: client.document(document_path(name))


# -- Python to and from the REST API's JSON ------------------------------------------------------


def to_rest(value: Any) -> dict[str, Any]:
    """``value`` as the REST API's JSON ``Value`` (``{"integerValue": "7"}``, ...)."""
    out = _VALUE()
    fill(out, value)
    # every field printed: a geo point at 0.0 keeps its latitude, an empty map its ``fields``
    rest: dict[str, Any] = json_format.MessageToDict(out, always_print_fields_with_no_presence=True)
    return rest


def fields_to_rest(data: dict[str, Any]) -> dict[str, Any]:
    """A document's fields as the REST API's ``fields`` object."""
    return {key: to_rest(member) for key, member in data.items()}


def from_rest(rest: dict[str, Any], reference: Callable[[str], Any] = document_path) -> Any:
    """The Python value of a REST API JSON ``Value``; ``ValueError`` if it is not one."""
    out = _VALUE()
    try:
        json_format.ParseDict(rest, out)
    except json_format.ParseError as exc:
        raise ValueError(f"not a Firestore REST Value: {exc}") from exc
    return decode(out, reference)

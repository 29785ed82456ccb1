"""Decoding the Firestore trigger's DocumentEventData (google-events types) and Pub/Sub pushes."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from cloudevents.http import CloudEvent
from google.cloud.firestore_v1 import GeoPoint
from google.cloud.firestore_v1.types import document as sdk_document
from google.events.cloud.firestore_v1.types import data as events

from core.adapters.cloudevents import decode_document_event, decode_pubsub_json
from core.errors import BadRequest
from tests.support.cloudevents import conversation_written, encode_fields

NAME = "projects/demo-strata/databases/(default)/documents/users/u1/conversations/c1"


def _event(body: Any, **attrs: str) -> CloudEvent:
    return CloudEvent({"type": "google.cloud.firestore.document.v1.written", "source": "//firestore",
                       "id": "e1", **attrs}, body)


def test_written_event_round_trips_every_plain_type() -> None:
    doc = {"status": "completed", "n": 3, "x": 0.5, "ok": True, "none": None, "raw": b"\x00\x01",
           "at": datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
           "segments": [{"id": "s1", "text": "I live in Lisbon", "is_user": True}], "empty": {}}
    body, headers = conversation_written("u1", "c1", doc, {"status": "in_progress"})
    event = decode_document_event(_event(body, document=headers["ce-document"]))
    assert event.path == "users/u1/conversations/c1" and event.segments()[-1] == "c1"
    assert event.value == doc and event.old_value == {"status": "in_progress"}
    assert event.event_id == "e1" and event.updated_fields == ()


def test_delete_event_has_no_value_and_takes_the_path_from_the_old_document() -> None:
    payload = events.DocumentEventData(old_value=events.Document(name=NAME, fields=encode_fields({"a": 1})),
                                       update_mask=events.DocumentMask(field_paths=["a"]))
    event = decode_document_event(_event(events.DocumentEventData.serialize(payload)))
    assert event.value is None and event.old_value == {"a": 1}
    assert event.path == "users/u1/conversations/c1" and event.updated_fields == ("a",)


def test_geo_points_and_references_decode() -> None:
    fields = {"where": events.Value(geo_point_value={"latitude": 38.7, "longitude": -9.1}),
              "ref": events.Value(reference_value=NAME)}
    body = events.DocumentEventData.serialize(events.DocumentEventData(value=events.Document(name=NAME,
                                                                                             fields=fields)))
    event = decode_document_event(_event(body))
    assert event.value == {"where": GeoPoint(38.7, -9.1), "ref": "users/u1/conversations/c1"}


def test_wire_compatible_with_the_firestore_sdk_document() -> None:
    """Field 1 holding a Document serialized by the Firestore SDK's own type decodes the same."""
    sdk_doc = sdk_document.Document(name=NAME, fields={"status": {"string_value": "completed"}})
    raw = sdk_document.Document.serialize(sdk_doc)
    body = b"\x0a" + _varint(len(raw)) + raw
    assert decode_document_event(_event(body)).value == {"status": "completed"}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def test_emulator_base64_text_body_decodes() -> None:
    body, _ = conversation_written("u1", "c1", {"status": "completed"})
    assert decode_document_event(_event(base64.b64encode(body).decode())).value == {"status": "completed"}


@pytest.mark.parametrize("body", [b"\xff\xff not protobuf", {"value": {}}])
def test_undecodable_bodies_are_bad_requests(body: Any) -> None:
    with pytest.raises(BadRequest):
        decode_document_event(_event(body))


def test_pubsub_push() -> None:
    data = base64.b64encode(json.dumps({"uid": "u1"}).encode()).decode()
    assert decode_pubsub_json(_event({"message": {"data": data}})) == {"uid": "u1"}
    assert decode_pubsub_json(_event({"message": {}})) == {}
    for bad in ("not base64 json!", base64.b64encode(b"[1]").decode()):
        with pytest.raises(BadRequest):
            decode_pubsub_json(_event({"message": {"data": bad}}))

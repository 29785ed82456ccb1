"""Decoding the CloudEvents Strata's functions receive.

Firestore triggers (Eventarc in production, the emulator locally) deliver
``google.events.cloud.firestore.v1.DocumentEventData`` as protobuf (its message types come from the
``google-events`` package); Pub/Sub deliveries carry ``{"message": {"data": base64}}``. Only these
two shapes are decoded here.

Document fields decode with :mod:`core.adapters.firestore.codec` to the Python values the
Firestore client returns for the same document (``DatetimeWithNanoseconds``, ``GeoPoint``, lists,
dicts), except that a reference decodes to its document path (``users/u1/...``), no client being at
hand to make it a ``DocumentReference``, and typed maps (vectors, BSON values) stay plain maps.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from google.events.cloud.firestore_v1.types.data import DocumentEventData

from core.adapters.firestore import codec
from core.errors import BadRequest


@dataclass(frozen=True)
class DocumentEvent:
    event_id: str
    event_type: str
    path: str  # users/u1/conversations/c1
    value: dict[str, Any] | None
    old_value: dict[str, Any] | None
    updated_fields: tuple[str, ...]

    def segments(self) -> list[str]:
        return self.path.split("/")


def _doc(doc: Any) -> dict[str, Any] | None:
    return codec.decode_fields(doc.fields) if doc.name else None


def decode_document_event(cloud_event: Any) -> DocumentEvent:
    raw = cloud_event.data
    if isinstance(raw, str):
        raw = raw.encode()
    if isinstance(raw, dict):  # JSON-encoded events (e.g. some test harnesses)
        raise BadRequest("JSON-encoded Firestore events are not supported; send protobuf")
    try:
        data = DocumentEventData.deserialize(raw)
    except Exception:  # noqa: BLE001 - try the emulator's base64 text form
        try:
            data = DocumentEventData.deserialize(base64.b64decode(raw, validate=True))
        except (binascii.Error, Exception) as exc:  # noqa: BLE001
            raise BadRequest("event body is not a Firestore DocumentEventData") from exc
    pb = DocumentEventData.pb(data)
    value, old = _doc(pb.value), _doc(pb.old_value)
    name = pb.value.name or pb.old_value.name
    subject = cloud_event.get("document") or ""
    path = codec.document_path(name) if "/documents/" in name else subject.removeprefix("documents/")
    return DocumentEvent(
        event_id=str(cloud_event.get("id") or ""), event_type=str(cloud_event.get("type") or ""), path=path,
        value=value, old_value=old, updated_fields=tuple(pb.update_mask.field_paths),
    )


def decode_pubsub_json(cloud_event: Any) -> dict[str, Any]:
    data = cloud_event.data
    if isinstance(data, (bytes, str)):
        data = json.loads(data)
    message = (data or {}).get("message") or {}
    encoded = message.get("data") or ""
    try:
        payload = json.loads(base64.b64decode(encoded)) if encoded else {}
    except (ValueError, binascii.Error) as exc:
        raise BadRequest("Pub/Sub message data is not base64 JSON") from exc
    if not isinstance(payload, dict):
        raise BadRequest("Pub/Sub message must carry a JSON object")
    return payload

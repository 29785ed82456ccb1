"""Decoding the CloudEvents Strata's functions receive.

Firestore triggers (Eventarc in production, the emulator locally) deliver
``google.events.cloud.firestore.v1.DocumentEventData`` as protobuf; Pub/Sub deliveries carry
``{"message": {"data": base64}}``. Only these two shapes are decoded here.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

import proto
from google.cloud.firestore_v1 import _helpers
from google.cloud.firestore_v1.types import common, document

from core.errors import BadRequest


class DocumentEventData(proto.Message):
    """google/events/cloud/firestore/v1/data.proto (fields 1-3)."""

    value = proto.Field(proto.MESSAGE, number=1, message=document.Document)
    old_value = proto.Field(proto.MESSAGE, number=2, message=document.Document)
    update_mask = proto.Field(proto.MESSAGE, number=3, message=common.DocumentMask)


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
    if not doc.name:
        return None
    decoded: dict[str, Any] = _helpers.decode_dict(doc.fields, None)  # type: ignore[assignment]
    return decoded


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
    value, old = _doc(data.value), _doc(data.old_value)
    name = data.value.name or data.old_value.name
    subject = cloud_event.get("document") or ""
    path = name.split("/documents/", 1)[1] if "/documents/" in name else subject.removeprefix("documents/")
    return DocumentEvent(
        event_id=str(cloud_event.get("id") or ""), event_type=str(cloud_event.get("type") or ""), path=path,
        value=value, old_value=old, updated_fields=tuple(data.update_mask.field_paths),
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

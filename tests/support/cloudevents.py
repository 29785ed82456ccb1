"""The binary ``document.written`` CloudEvent Eventarc delivers for a conversation write.

Tests post it to the capture function (through the relay or straight) to redeliver an event late or
more than once, exactly as the Firestore emulator would have sent it. The body is a
``google.events.cloud.firestore.v1.DocumentEventData`` built with the ``google-events`` types.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from google.events.cloud.firestore_v1.types import data as events

PROJECT = "demo-strata"


def encode_value(value: Any) -> events.Value:
    """A Python value as the Firestore ``Value`` a trigger carries."""
    if value is None:
        return events.Value(null_value=0)
    if isinstance(value, bool):
        return events.Value(boolean_value=value)
    if isinstance(value, int):
        return events.Value(integer_value=value)
    if isinstance(value, float):
        return events.Value(double_value=value)
    if isinstance(value, str):
        return events.Value(string_value=value)
    if isinstance(value, bytes):
        return events.Value(bytes_value=value)
    if isinstance(value, datetime):
        return events.Value(timestamp_value=value)
    if isinstance(value, (list, tuple)):
        return events.Value(array_value=events.ArrayValue(values=[encode_value(v) for v in value]))
    if isinstance(value, dict):
        return events.Value(map_value=events.MapValue(fields=encode_fields(value)))
    raise TypeError(f"no Firestore value for {type(value).__name__}")


def encode_fields(doc: dict[str, Any]) -> dict[str, events.Value]:
    return {str(name): encode_value(value) for name, value in doc.items()}


def conversation_written(uid: str, conversation_id: str, doc: dict[str, Any], old: dict[str, Any] | None = None,
                         *, event_prefix: str = "redelivery") -> tuple[bytes, dict[str, str]]:
    """(protobuf body, CloudEvent headers) for a write of ``doc`` over ``old`` (None: a create)."""
    name = f"projects/{PROJECT}/databases/(default)/documents/users/{uid}/conversations/{conversation_id}"
    payload = events.DocumentEventData(value=events.Document(name=name, fields=encode_fields(doc)))
    if old is not None:
        payload.old_value = events.Document(name=name, fields=encode_fields(old))
    headers = {
        "ce-id": f"{event_prefix}-{uuid.uuid4().hex}", "ce-specversion": "1.0",
        "ce-source": f"//firestore.googleapis.com/projects/{PROJECT}/databases/(default)",
        "ce-type": "google.cloud.firestore.document.v1.written",
        "ce-subject": f"documents/users/{uid}/conversations/{conversation_id}",
        "ce-document": f"users/{uid}/conversations/{conversation_id}",
        "content-type": "application/protobuf",
    }
    return events.DocumentEventData.serialize(payload), headers

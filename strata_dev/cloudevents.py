"""The binary Firestore CloudEvents Eventarc delivers for a conversation, built by hand.

Tests post them to the capture and cascade functions to redeliver an event late or more than once,
and the startup benchmark posts them to a fresh function process, exactly as the Firestore emulator
would have sent them. The body is a ``google.cloud.firestore.v1.DocumentEventData`` built with the
``google-events`` types.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from google.events.cloud.firestore_v1.types import data as events


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


def conversation_event(project: str, uid: str, conversation_id: str, doc: dict[str, Any] | None,
                       old: dict[str, Any] | None = None, *, kind: str = "written",
                       event_prefix: str = "redelivery") -> tuple[bytes, dict[str, str]]:
    """(protobuf body, CloudEvent headers) of a ``kind`` event (``written`` or ``deleted``) for the
    conversation: ``doc`` is the new value (None for a delete), ``old`` the previous one."""
    name = f"projects/{project}/databases/(default)/documents/users/{uid}/conversations/{conversation_id}"
    payload = events.DocumentEventData()
    if doc is not None:
        payload.value = events.Document(name=name, fields=encode_fields(doc))
    if old is not None:
        payload.old_value = events.Document(name=name, fields=encode_fields(old))
    headers = {
        "ce-id": f"{event_prefix}-{uuid.uuid4().hex}", "ce-specversion": "1.0",
        "ce-source": f"//firestore.googleapis.com/projects/{project}/databases/(default)",
        "ce-type": f"google.cloud.firestore.document.v1.{kind}",
        "ce-subject": f"documents/users/{uid}/conversations/{conversation_id}",
        "ce-document": f"users/{uid}/conversations/{conversation_id}",
        "content-type": "application/protobuf",
    }
    return events.DocumentEventData.serialize(payload), headers

"""The binary Firestore CloudEvents Eventarc delivers for a conversation, built by hand.

Tests post them to the capture and cascade functions to redeliver an event late or more than once,
and the startup benchmark posts them to a fresh function process, exactly as the Firestore emulator
would have sent them. The body is a ``google.cloud.firestore.v1.DocumentEventData`` built with the
``google-events`` types, its values encoded by :mod:`core.adapters.firestore.codec`.
"""

from __future__ import annotations

import uuid
from typing import Any

from google.events.cloud.firestore_v1.types import data as events

from core.adapters.firestore import codec
from core.domain import paths


def encode_value(value: Any) -> events.Value:
    """A Python value as the Firestore ``Value`` a trigger carries."""
    out = events.Value.pb()()
    codec.fill(out, value)
    return events.Value.wrap(out)


def encode_fields(doc: dict[str, Any]) -> dict[str, events.Value]:
    return {str(name): encode_value(value) for name, value in doc.items()}


def _document(name: str, doc: dict[str, Any]) -> Any:
    out = events.Document.pb()(name=name)
    codec.fill_fields(out.fields, doc)
    return out


def conversation_event(project: str, uid: str, conversation_id: str, doc: dict[str, Any] | None,
                       old: dict[str, Any] | None = None, *, kind: str = "written",
                       event_prefix: str = "redelivery") -> tuple[bytes, dict[str, str]]:
    """(protobuf body, CloudEvent headers) of a ``kind`` event (``written`` or ``deleted``) for the
    conversation: ``doc`` is the new value (None for a delete), ``old`` the previous one."""
    name = f"projects/{project}/databases/(default)/documents/{paths.conversation(uid, conversation_id)}"
    payload = events.DocumentEventData.pb()()
    if doc is not None:
        payload.value.CopyFrom(_document(name, doc))
    if old is not None:
        payload.old_value.CopyFrom(_document(name, old))
    headers = {
        "ce-id": f"{event_prefix}-{uuid.uuid4().hex}", "ce-specversion": "1.0",
        "ce-source": f"//firestore.googleapis.com/projects/{project}/databases/(default)",
        "ce-type": f"google.cloud.firestore.document.v1.{kind}",
        "ce-subject": f"documents/{paths.conversation(uid, conversation_id)}",
        "ce-document": paths.conversation(uid, conversation_id),
        "content-type": "application/protobuf",
    }
    return payload.SerializeToString(), headers

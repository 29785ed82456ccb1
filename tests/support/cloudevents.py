"""The binary ``document.written`` CloudEvent Eventarc delivers for a conversation write.

Tests post it to the capture function (through the relay or straight) to redeliver an event late or
more than once, exactly as the Firestore emulator would have sent it (built by
:mod:`strata_dev.cloudevents`, which the startup benchmark shares).
"""

from __future__ import annotations

from typing import Any

from strata_dev.cloudevents import conversation_event, encode_fields, encode_value

PROJECT = "demo-strata"

__all__ = ["PROJECT", "conversation_written", "encode_fields", "encode_value"]


def conversation_written(uid: str, conversation_id: str, doc: dict[str, Any], old: dict[str, Any] | None = None,
                         *, event_prefix: str = "redelivery") -> tuple[bytes, dict[str, str]]:
    """(protobuf body, CloudEvent headers) for a write of ``doc`` over ``old`` (None: a create)."""
    return conversation_event(PROJECT, uid, conversation_id, doc, old, event_prefix=event_prefix)

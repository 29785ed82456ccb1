"""Conversations through the API: the same Firestore document apps write directly."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from core.domain import credentials, fence, paths
from core.domain.changes import Change
from core.domain.documents import CaptureRun
from core.errors import Conflict, KeyReused, NotFound
from core.ports import Ports, Write
from core.services import capture, controls, deletion

CREATE_ROUTE = "POST /v1/conversations"


def create(ctx: Ports, uid: str, body: dict[str, Any], device_id: str | None, platform: str | None,
           idempotency_key: str | None = None) -> str:
    """Write the conversation; its id. With ``idempotency_key`` the conversation and the key's record
    (``request_keys``: the request's fingerprint and the id) are written in one fenced transaction
    that first reads the record: a retry finds it and answers the first request's id, writing
    nothing; the same key with another body is a 422 (:class:`KeyReused`)."""
    controls.require_writes(ctx)
    fingerprint = _fingerprint(body, device_id, platform) if idempotency_key else ""
    conversation_id = body.pop("id", None) or uuid.uuid4().hex
    now = ctx.now()
    doc = mirror_legacy({k: v for k, v in body.items() if v is not None})
    doc.setdefault("client_device_id", device_id)
    doc.setdefault("client_platform", platform)
    created = doc.get("created_at")  # an app's own creation time (ISO 8601, checked at the edge) is kept
    doc.update({"created_at": _timestamp(created) if isinstance(created, str) else now,
                "finished_at": doc.get("finished_at") or now, "status": "completed"})
    if (credential := credentials.current()) is not None:
        doc["created_by"] = credential  # which credential wrote it: the user's token or a key id
    writes = [Write("set", paths.conversation(uid, conversation_id), doc)]
    if not idempotency_key:
        # Fenced like every API write: refused once a wipe of the account began or ran since the request did.
        ctx.store.write(Change("conversation.create", writes, fenced=uid))
        return conversation_id
    record = paths.request_key(uid, _key_digest(CREATE_ROUTE, idempotency_key))
    writes.append(Write("set", record, {"route": CREATE_ROUTE, "fingerprint": fingerprint,
                                        "conversation_id": conversation_id, "created_at": now,
                                        "expire_at": now + KEY_KEPT}))
    if ctx.store.write(Change("conversation.create_once", writes, fenced=uid, guard=record,
                              refuse=lambda first: first is not None)):
        return conversation_id
    first = ctx.store.get(record) or {}
    if first.get("fingerprint") != fingerprint:
        raise KeyReused("this Idempotency-Key already answered a request with another body; use a new key")
    return str(first["conversation_id"])


KEY_KEPT = timedelta(days=7)  # a retry replays within a week; Firestore's TTL policy removes the record


def _key_digest(route: str, key: str) -> str:
    return hashlib.sha256(f"{route}\n{key}".encode()).hexdigest()


def _fingerprint(body: dict[str, Any], device_id: str | None, platform: str | None) -> str:
    """What makes two requests the same request: the validated body and the device headers."""
    canonical = json.dumps([body, device_id, platform], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def mirror_legacy(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with the frozen legacy mirror filled in (spec: ``plugins_results`` mirrors
    ``apps_results``; each result's ``app_id`` is its ``plugin_id``). A client that sends only the
    old name (an old client) has ``apps_results`` filled from it; one that sends both keeps both."""
    apps, plugins = doc.get("apps_results"), doc.get("plugins_results")
    if apps is not None and plugins is None:
        doc["plugins_results"] = [{**{k: v for k, v in r.items() if k != "app_id"}, "plugin_id": r.get("app_id")}
                                  for r in apps]
    elif plugins is not None and apps is None:
        doc["apps_results"] = [{**{k: v for k, v in r.items() if k != "plugin_id"}, "app_id": r.get("plugin_id")}
                               for r in plugins]
    return doc


def _timestamp(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def reprocess(ctx: Ports, uid: str, conversation_id: str) -> capture.CaptureResult:
    """Re-extract now (complete replacement). The token makes this a new revision. It is written to
    the document only after the capture ran, so the trigger that write fires sees the revision already
    captured and does nothing (writing it first let the trigger win the race and this call report
    nothing kept or created)."""
    controls.require_writes(ctx)
    ref = paths.conversation(uid, conversation_id)
    stored = ctx.store.get(ref)
    if stored is None:
        raise NotFound("no such conversation")
    token = uuid.uuid4().hex
    doc = dict(stored, reprocess_token=token)
    result = capture.capture_conversation(ctx, uid, conversation_id, doc)
    if result.skipped == "conversation_deleted":
        raise Conflict("this conversation is being deleted", code="conversation_deleted")
    ctx.store.write(Change("conversation.reprocess_token",
                           [Write("update", ref, {"reprocess_token": token, "reprocess_requested_at": ctx.now()})]))
    return result


def delete(ctx: Ports, uid: str, conversation_id: str, cascade: bool = True) -> dict[str, Any]:
    """With ``cascade`` the conversation's memories are withdrawn in bounded pages first and the
    document is deleted in the same transaction as the last page (a failure part-way leaves the
    document, and calling again resumes); the delete trigger then finds the cascade done."""
    controls.require_writes(ctx)  # the cascade could not apply: keep the conversation with its memories
    ref = paths.conversation(uid, conversation_id)
    if ctx.store.get(ref) is None:
        raise NotFound("no such conversation")
    if not cascade:
        # the delete trigger honours the caller's choice (a fenced write: none lands in a wiped account)
        ctx.store.write(Change("conversation.no_cascade",
                               [Write("set", paths.capture_run(uid, conversation_id), {"cascade": False}, merge=True)],
                               fenced=uid))
        ctx.store.write(Change("conversation.delete", [Write("delete", ref)]))
        return {"deleted": True, "cascade": False}
    cascaded = deletion.cascade_conversation(ctx, uid, conversation_id, remove_document=True, receipt=True)
    return {"deleted": True, "cascade": cascaded, "receipt_id": cascaded.pop("receipt_id")}


def cascade_from_trigger(ctx: Ports, uid: str, conversation_id: str) -> dict[str, Any] | None:
    found = ctx.store.get_all([paths.account_deletion(uid), paths.capture_run(uid, conversation_id)])
    if fence.of(found[paths.account_deletion(uid)]).deleting:
        return None  # the account wipe deleting this conversation removes everything a cascade would
    if CaptureRun.from_store(found[paths.capture_run(uid, conversation_id)]).cascade_declined:
        return None
    return deletion.cascade_conversation(ctx, uid, conversation_id)

"""What the five functions do with their events, kept out of the functions' own ~10-line files.

An exception raised here means "retry me" to Eventarc / Pub/Sub; permanent problems are logged and
acknowledged so a poison event cannot loop forever.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from core.adapters.cloudevents import DocumentEvent, decode_document_event, decode_pubsub_json
from core.bootstrap import default_context
from core.errors import StrataError

log = logging.getLogger("strata")
logging.basicConfig(level=logging.INFO)


def _conversation_path(path: str) -> tuple[str, str] | None:
    parts = path.split("/")
    if len(parts) == 4 and parts[0] == "users" and parts[2] == "conversations":
        return parts[1], parts[3]
    return None


def _conversation_event(cloud_event: Any) -> tuple[DocumentEvent, str, str] | None:
    """The decoded event with (uid, conversation_id), or None for anything that is not a
    conversation document event (undecodable bodies are logged and acknowledged, not retried)."""
    try:
        event = decode_document_event(cloud_event)
    except StrataError as exc:
        log.error("undecodable Firestore event acknowledged: %s", exc.message)
        return None
    where = _conversation_path(event.path)
    return (event, *where) if where else None


def conversation_written(cloud_event: Any) -> None:
    from core.services import capture, webhooks

    decoded = _conversation_event(cloud_event)
    if decoded is None:
        return
    event, uid, conversation_id = decoded
    if event.value is None:  # a delete: delete_cascade's business
        return
    ctx = default_context()
    if event.old_value is None:
        webhooks.conversation_created(ctx, uid, conversation_id, event.value)
    result = capture.capture_conversation(ctx, uid, conversation_id, event.value)
    log.info(json.dumps({"event": "capture", "uid": uid, "conversation_id": conversation_id,
                         "skipped": result.skipped, "created": result.created, "kept": result.kept,
                         "retracted": result.retracted, "errors": result.errors}))
    if result.retry:
        raise RuntimeError(f"capture jobs failed and will be retried: {', '.join(result.retry)}")


def conversation_deleted(cloud_event: Any) -> None:
    from core.services import conversations

    decoded = _conversation_event(cloud_event)
    if decoded is None or decoded[0].value is not None:
        return
    _, uid, conversation_id = decoded
    conversations.cascade_from_trigger(default_context(), uid, conversation_id)


def projection_message(cloud_event: Any) -> None:
    from core.services import projection

    try:
        payload = decode_pubsub_json(cloud_event)
    except StrataError as exc:
        log.error("undecodable projection message acknowledged: %s", exc.message)
        return
    ctx = default_context()
    if payload.get("uid"):
        report = projection.drain_user(ctx, str(payload["uid"]))
    else:
        report = projection.sweep(ctx)
    log.info(json.dumps({"event": "drain", **report.as_dict()}))
    if report.retry_later:
        # Not an error: events are rescheduled with backoff in Firestore and the sweep returns.
        log.info("some projection events are waiting for retry")


def consolidate_request(request: Any) -> Any:
    import flask

    from core.services import consolidation

    body = request.get_json(silent=True) or {}
    ctx = default_context()
    try:
        if body.get("uid"):
            uid = str(body["uid"])
            summary = consolidation.run_pass(ctx, uid)
            if summary.get("skipped") is None:
                # Who asked: Cloud Tasks names itself in these headers; a direct call has none.
                headers = request.headers
                consolidation.record_pass(ctx, uid, summary, {
                    "task_name": headers.get("X-CloudTasks-TaskName"),
                    "queue_name": headers.get("X-CloudTasks-QueueName"),
                    "retry_count": headers.get("X-CloudTasks-TaskRetryCount"),
                })
        else:
            summary = consolidation.fan_out(ctx)
    except StrataError as exc:
        return flask.Response(json.dumps(exc.to_json()), status=exc.status, mimetype="application/json")
    return flask.Response(json.dumps(summary, default=str), status=200, mimetype="application/json")

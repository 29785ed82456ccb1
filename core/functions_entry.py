"""What the five functions do with their events, kept out of the functions' own ~10-line files.

An exception raised here means "retry me" to Eventarc / Pub/Sub; permanent problems are logged and
acknowledged so a poison event cannot loop forever.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from core import logs
from core.adapters.cloudevents import DocumentEvent, decode_document_event, decode_pubsub_json
from core.bootstrap import default_context
from core.errors import StrataError

log = logging.getLogger("strata")  # configured by core.logs when an entry point first runs


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


@logs.event_entry
def conversation_written(cloud_event: Any) -> None:
    from core.services import capture, webhooks

    decoded = _conversation_event(cloud_event)
    if decoded is None:
        return
    event, uid, conversation_id = decoded
    logs.set_uid(uid)
    if event.value is None:  # a delete: delete_cascade's business
        return
    ctx = default_context()
    try:
        result = capture.capture_conversation(ctx, uid, conversation_id, event.value, from_event=True)
    finally:  # after capture, whatever its outcome; never raises (a retried trigger is deduplicated)
        webhooks.conversation_written(ctx, uid, conversation_id, event.old_value, event.value)
    log.info(json.dumps({"event": "capture", "uid": uid, "conversation_id": conversation_id,
                         "skipped": result.skipped, "created": result.created, "kept": result.kept,
                         "retracted": result.retracted, "errors": result.errors}))
    if result.retry:
        raise RuntimeError(f"capture jobs failed and will be retried: {', '.join(result.retry)}")


@logs.event_entry
def conversation_deleted(cloud_event: Any) -> None:
    from core.services import conversations

    decoded = _conversation_event(cloud_event)
    if decoded is None or decoded[0].value is not None:
        return
    _, uid, conversation_id = decoded
    logs.set_uid(uid)
    summary = conversations.cascade_from_trigger(default_context(), uid, conversation_id)
    log.info(json.dumps({"event": "cascade", "uid": uid, "conversation_id": conversation_id,
                         "skipped": summary is None, "summary": summary}, default=str))


@logs.event_entry
def projection_message(cloud_event: Any) -> None:
    from core.services import accounts, projection

    try:
        payload = decode_pubsub_json(cloud_event)
    except StrataError as exc:
        log.error("undecodable projection message acknowledged: %s", exc.message)
        return
    ctx = default_context()
    logs.set_uid(str(payload.get("uid") or "") or None)
    if payload.get("uid") and payload.get("purge") == accounts.PURGE_REQUEST:
        # An account wipe asks for the keyword purge: only this function holds the write key.
        try:
            generation = int(payload["generation"])
        except (KeyError, TypeError, ValueError):
            log.error("purge request without a generation acknowledged")
            return
        done = accounts.purge_keyword_index(ctx, str(payload["uid"]), generation, str(payload.get("requested") or ""))
        log.info(json.dumps({"event": "account_keyword_purge", "generation": generation, "outcome": done}))
        return
    if payload.get("uid"):
        report = projection.drain_user(ctx, str(payload["uid"]))
    else:
        report = projection.sweep(ctx)
    log.info(json.dumps({"event": "drain", **report.as_dict()}))
    if report.retry_later:
        # Not an error: events are rescheduled with backoff in Firestore and the sweep returns.
        log.info("some projection events are waiting for retry")


@logs.http_entry
def consolidate_request(request: Any) -> Any:
    import flask

    from core.services import consolidation

    body = request.get_json(silent=True) or {}
    if not isinstance(body, dict):
        body = {}
    ctx = default_context()
    from core.api.auth import check_task_caller
    from core.errors import Unauthorized

    try:  # the OIDC token's audience is this function's run.app URL (production only)
        check_task_caller(request.headers.get("Authorization"), ctx.settings)
    except Unauthorized as exc:
        log.warning("consolidate call refused: %s", exc.message)
        return flask.jsonify({"error": {"code": "unauthorized", "message": exc.message}}), 401
    logs.set_uid(str(body.get("uid") or "") or None)
    if body.get("webhook"):
        return _webhook_delivery(ctx, body, request.headers)
    try:
        if body.get("uid"):
            uid = str(body["uid"])
            generation = ctx.store.read_fence(uid).generation  # the record is dropped if a wipe runs
            try:
                summary = consolidation.run_pass(ctx, uid)
            except StrataError:
                raise  # a refusal answered below, not a failure
            except Exception:
                # The task is retried; the line feeds the consolidation_pass_failures metric.
                log.exception(json.dumps({"event": "consolidation_pass_failed", "uid": uid}))
                raise
            log.info(json.dumps({"event": "consolidation_pass", "uid": uid, "routes": summary.get("routes"),
                                 "skipped": summary.get("skipped")}, default=str))
            if summary.get("skipped") is None:
                # Who asked: Cloud Tasks names itself in these headers; a direct call has none.
                headers = request.headers
                consolidation.record_pass(ctx, uid, summary, {
                    "task_name": headers.get("X-CloudTasks-TaskName"),
                    "queue_name": headers.get("X-CloudTasks-QueueName"),
                    "retry_count": headers.get("X-CloudTasks-TaskRetryCount"),
                }, generation=generation)
        else:
            summary = consolidation.fan_out(ctx)
    except StrataError as exc:
        return flask.Response(json.dumps(exc.to_json()), status=exc.status, mimetype="application/json")
    return flask.Response(json.dumps(summary, default=str), status=200, mimetype="application/json")


def _webhook_delivery(ctx: Any, body: dict[str, Any], headers: Any) -> Any:
    """A Cloud Task delivering one developer webhook (this function is invokable only by the tasks'
    service account in production). 200 = done for good (delivered, or given up); 503 = retry."""
    import flask

    from core.services import webhooks

    uid, conversation_id = body.get("uid"), body.get("conversation_id")
    try:
        if not (isinstance(uid, str) and uid and isinstance(conversation_id, str) and conversation_id
                and "/" not in uid + conversation_id and isinstance(body["webhook"], str)):
            raise StrataError("webhook task needs string uid and conversation_id", code="malformed_task")
        retry = str(headers.get("X-CloudTasks-TaskRetryCount") or "0")
        outcome = webhooks.deliver(ctx, uid, body["webhook"], conversation_id, int(retry) if retry.isdigit() else 0)
    except StrataError as exc:
        status = exc.status if exc.code != "malformed_task" else 400
        return flask.Response(json.dumps(exc.to_json()), status=status, mimetype="application/json")
    return flask.Response(json.dumps(outcome, default=str), status=200, mimetype="application/json")

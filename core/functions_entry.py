"""What the six functions do with their events, kept out of the functions' own ~10-line files.

One job, one name: each entry point here is named after the service step it runs (the deployed
function's name is its trigger contract and stays as it was):

====================================  =============================  ==========================================
function (``functions/<name>``)       entry point here               service step
====================================  =============================  ==========================================
``on_conversation_complete``          :func:`capture_conversation`   ``capture.capture_conversation`` (then
                                                                     ``webhooks.enqueue_delivery``)
``delete_cascade``                    :func:`cascade_from_trigger`   ``conversations.cascade_from_trigger``
``outbox_drain``                      :func:`drain_outbox`           ``projection.handle`` (a drain, the
                                                                     sweep, an account's keyword purge)
``consolidate``                       :func:`consolidate`            ``consolidation.run_pass`` / ``fan_out``
``deliver_webhook``                   :func:`deliver_webhook`        ``webhooks.deliver_webhook``
====================================  =============================  ==========================================

An exception raised here means "retry me" to Eventarc / Pub/Sub; permanent problems are logged and
acknowledged so a poison event cannot loop forever.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from core import logs, metering
from core.adapters.cloudevents import DocumentEvent, decode_document_event, decode_pubsub_json
from core.bootstrap import default_context
from core.domain import paths
from core.errors import StrataError

log = logging.getLogger("strata")  # configured by core.logs when an entry point first runs


def _conversation_path(path: str) -> tuple[str, str] | None:
    default_context()  # sets the layout (the conversations' path) the event's path is read against
    return paths.conversation_of(path)


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
def capture_conversation(cloud_event: Any) -> None:
    from core.services import capture, webhooks

    decoded = _conversation_event(cloud_event)
    if decoded is None:
        return
    event, uid, conversation_id = decoded
    logs.set_uid(uid)
    if event.value is None:  # a delete: delete_cascade's business
        return
    ctx = default_context()
    # The webhook's config is read in capture's first lookup: one round trip fewer per conversation.
    also_read = webhooks.read_with_capture(uid, event.old_value, event.value)
    result: capture.CaptureResult | None = None
    # The model's calls, tokens, fallbacks and estimated cost for this capture, logged on its line
    # (the strata/model_* log-based metrics read them).
    with metering.metered() as usage:
        try:
            result = capture.capture_conversation(ctx, uid, conversation_id, event.value, from_event=True,
                                                  also_read=also_read)
        finally:  # after capture, whatever its outcome; never raises (a retried trigger is deduplicated)
            webhooks.enqueue_delivery(ctx, uid, conversation_id, event.old_value, event.value,
                                      read=result.read if result is not None else None)
    log.info(json.dumps({"event": "capture", "uid": uid, "conversation_id": conversation_id,
                         "skipped": result.skipped, "created": result.created, "kept": result.kept,
                         "retracted": result.retracted, "errors": result.errors, **usage.log_fields()}))
    if result.retry:
        raise RuntimeError(f"capture jobs failed and will be retried: {', '.join(result.retry)}")


@logs.event_entry
def cascade_from_trigger(cloud_event: Any) -> None:
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
def drain_outbox(cloud_event: Any) -> None:
    from core.services import projection

    try:
        message = decode_pubsub_json(cloud_event)
    except StrataError as exc:
        log.error("undecodable projection message acknowledged: %s", exc.message)
        return
    logs.set_uid(str(message.get("uid") or "") or None)
    # Not an error when events wait: they are rescheduled with backoff in Firestore and the sweep returns.
    log.info(json.dumps(projection.handle(default_context(), message)))


@logs.http_entry
def consolidate(request: Any) -> Any:
    """Cloud Scheduler's fan-out (no uid) or a Cloud Task's per-user pass (``{"uid": ...}``)."""
    from core.services import consolidation

    body = request.get_json(silent=True) or {}
    if not isinstance(body, dict):
        body = {}
    ctx = default_context()
    refused = _refused_task_caller(ctx, request, "consolidate")
    if refused is not None:
        return refused
    logs.set_uid(str(body.get("uid") or "") or None)
    if body.get("webhook"):
        # Delivery tasks target deliver_webhook; one queued before that function existed still names
        # this URL, and is handed over to it (re-enqueued, not delivered here), so none is lost.
        return _hand_over_delivery(ctx, body)
    try:
        if body.get("uid"):
            uid = str(body["uid"])
            generation = ctx.store.read_fence(uid).generation  # the record is dropped if a wipe runs
            try:
                with metering.metered() as usage:  # the router's model calls, logged on the pass's line
                    summary = consolidation.run_pass(ctx, uid)
            except StrataError:
                raise  # a refusal answered below, not a failure
            except Exception:
                # The task is retried; the line feeds the consolidation_pass_failures metric.
                log.exception(json.dumps({"event": "consolidation_pass_failed", "uid": uid}))
                raise
            log.info(json.dumps({"event": "consolidation_pass", "uid": uid, "routes": summary.get("routes"),
                                 "skipped": summary.get("skipped"), **usage.log_fields()}, default=str))
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
        return _json(exc.to_json(), exc.status)
    return _json(summary, 200)


def _json(body: Any, status: int) -> Any:
    import flask

    return flask.Response(json.dumps(body, default=str), status=status, mimetype="application/json")


def _refused_task_caller(ctx: Any, request: Any, function: str) -> Any:
    """None when the caller may call this task worker, else the 401 to answer: the OIDC token's
    audience is the function's own run.app URL (production only; no check locally)."""
    from core.api.auth import check_task_caller
    from core.errors import Unauthorized

    try:
        check_task_caller(request.headers.get("Authorization"), ctx.settings)
    except Unauthorized as exc:
        log.warning("%s call refused: %s", function, exc.message)
        return _json({"error": {"code": "unauthorized", "message": exc.message}}, 401)
    return None


def _delivery_task(body: dict[str, Any]) -> tuple[str, str, str]:
    """The (uid, webhook type, conversation id) a delivery task names, or ``malformed_task``."""
    uid, conversation_id, webhook_type = body.get("uid"), body.get("conversation_id"), body.get("webhook")
    if not (isinstance(uid, str) and uid and isinstance(conversation_id, str) and conversation_id
            and "/" not in uid + conversation_id and isinstance(webhook_type, str) and webhook_type):
        raise StrataError("webhook task needs string webhook, uid and conversation_id", code="malformed_task")
    return uid, webhook_type, conversation_id


def _hand_over_delivery(ctx: Any, body: dict[str, Any]) -> Any:
    from core.services import webhooks

    try:
        outcome = webhooks.hand_over(ctx, *_delivery_task(body))
    except StrataError as exc:
        return _json(exc.to_json(), exc.status if exc.code != "malformed_task" else 400)
    return _json(outcome, 200)


@logs.http_entry
def deliver_webhook(request: Any) -> Any:
    """A Cloud Task delivering one developer webhook (the function is invokable only by the tasks'
    service account in production). 200 = done for good (delivered, or given up); 400 = a malformed
    task (dropped); 503 = retry."""
    from core.services import webhooks

    ctx = default_context()
    refused = _refused_task_caller(ctx, request, "deliver_webhook")
    if refused is not None:
        return refused
    body = request.get_json(silent=True)
    body = body if isinstance(body, dict) else {}
    uid = body.get("uid")
    logs.set_uid(uid if isinstance(uid, str) and uid else None)
    try:
        uid, webhook_type, conversation_id = _delivery_task(body)
        retry = str(request.headers.get("X-CloudTasks-TaskRetryCount") or "0")
        outcome = webhooks.deliver_webhook(ctx, uid, webhook_type, conversation_id,
                                           int(retry) if retry.isdigit() else 0)
    except StrataError as exc:
        return _json(exc.to_json(), exc.status if exc.code != "malformed_task" else 400)
    return _json(outcome, 200)

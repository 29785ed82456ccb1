"""Developer webhooks: a per-user URL and on/off switch per type, delivered through Cloud Tasks by
the ``deliver_webhook`` function (``STRATA_WEBHOOK_URL``; :func:`deliver_webhook` is its step).

``memory_created`` is a frozen legacy name: it fires when a *conversation* is first seen completed
and POSTs that conversation (dates as ISO strings) to the user's URL with ``?uid=`` appended.

Guarantees:
- Capture never waits for or fails because of a webhook: the trigger reads the user's config in
  capture's first lookup (:func:`read_with_capture`; no round trip of its own) and enqueues one task
  after capture ran, and nothing here raises into it.
- One delivery per (type, conversation): ``users/{uid}/webhook_deliveries/{delivery_id}`` is
  created before the task is enqueued (a duplicate trigger finds it and stops), and a delivery that
  already succeeded or gave up is not posted again when Cloud Tasks runs the task twice.
- Bounded: each POST is bounded by ``webhook_timeout_s``; at most :data:`MAX_ATTEMPTS` attempts,
  counted here as well as by the queue's retry config. 5xx / 408 / 429 / timeouts are retried;
  other answers are final.
- Server-side request forgery: the URL is checked when saved and again at delivery, on the
  addresses the host resolves to then; the POST connects to the checked address only.
- Delivery reads the config and the conversation when it runs: a webhook switched off or removed,
  or a conversation deleted meanwhile, sends nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from core.domain import paths
from core.domain import webhooks as policy
from core.domain.changes import Change
from core.domain.documents import WebhookConfig, WebhookDelivery
from core.domain.webhooks import MAX_ATTEMPTS, MEMORY_CREATED
from core.errors import (
    BadRequest,
    DeliveryPending,
    NotFound,
    ProviderUnavailable,
    RetryableError,
    TargetRefused,
    WritesBlocked,
)
from core.ports import Ports, Write

log = logging.getLogger(__name__)


def log_json(event: str, **fields: Any) -> None:
    log.info(json.dumps({"event": event, **fields}, default=str))
CONFIG_COLLECTION = paths.WEBHOOK_CONFIGS
DELIVERY_COLLECTION = paths.WEBHOOK_DELIVERIES
FINAL_STATES = ("delivered", "failed", "refused", "cancelled")
RECORD_DAYS = 30  # delivery records carry ``expire_at`` (a Firestore TTL policy in Terraform removes them)

__all__ = ["MEMORY_CREATED", "get_config", "put_config", "delete_config", "read_with_capture", "enqueue_delivery",
           "deliver_webhook", "hand_over"]


def _known(webhook_type: str) -> str:
    if webhook_type not in policy.TYPES:
        raise NotFound(f"unknown webhook type; known types: {', '.join(policy.TYPES)}", code="unknown_webhook_type")
    return webhook_type


def _public(webhook_type: str, config: WebhookConfig) -> dict[str, Any]:
    return {"type": webhook_type, "url": config.url, "enabled": bool(config.enabled)}


# ------------------------------------------------------------------------------------ configuration
def _config_path(uid: str, webhook_type: str) -> str:
    return paths.doc(uid, CONFIG_COLLECTION, _known(webhook_type))


def _config(ctx: Ports, uid: str, webhook_type: str) -> WebhookConfig:
    return WebhookConfig.from_store(ctx.store.get(_config_path(uid, webhook_type)))


def get_config(ctx: Ports, uid: str, webhook_type: str) -> dict[str, Any]:
    """``{type, url, enabled}``; ``url`` is null and ``enabled`` false when none is set."""
    return _public(webhook_type, _config(ctx, uid, webhook_type))


def check_target(ctx: Ports, url: str) -> list[str]:
    """The URL's checked addresses; :class:`TargetRefused` if its form or any address is refused."""
    local = ctx.settings.local
    host, port = policy.check_url(url, local=local)
    return policy.check_addresses(ctx.webhook_sender.resolve(host, port), local=local)


def put_config(ctx: Ports, uid: str, webhook_type: str, url: str, enabled: bool) -> dict[str, Any]:
    _known(webhook_type)
    try:
        check_target(ctx, url)
    except TargetRefused as exc:
        raise BadRequest(f"url refused: {exc}", code="webhook_url_refused") from exc
    if ctx.store.read_fence(uid).deleting:
        raise WritesBlocked("this account is being deleted")
    config = WebhookConfig(type=webhook_type, url=url, enabled=enabled, updated_at=ctx.now())
    ctx.store.write(Change("webhook.config_set", [Write("set", paths.doc(uid, CONFIG_COLLECTION, webhook_type),
                                                        config.to_store())]))
    log_json("webhook_configured", uid=uid, type=webhook_type, enabled=enabled)
    return _public(webhook_type, config)


def delete_config(ctx: Ports, uid: str, webhook_type: str) -> dict[str, Any]:
    ref = paths.doc(uid, CONFIG_COLLECTION, _known(webhook_type))
    existed = ctx.store.get(ref) is not None
    ctx.store.write(Change("webhook.config_delete", [Write("delete", ref)]))
    return {"type": webhook_type, "deleted": existed}


# ------------------------------------------------------------------------------------ the trigger
def read_with_capture(uid: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """The documents :func:`enqueue_delivery` reads for this write (the user's ``memory_created``
    config when the write completes the conversation, else none), for the trigger to read in
    capture's first lookup instead of a lookup of their own."""
    return [_config_path(uid, MEMORY_CREATED)] if policy.fires(old, new) else []


def enqueue_delivery(ctx: Ports, uid: str, conversation_id: str, old: dict[str, Any] | None,
                     new: dict[str, Any] | None, *, read: Mapping[str, dict[str, Any] | None] | None = None,
                     ) -> str | None:
    """Enqueue the ``memory_created`` delivery if this write completes the conversation and the
    user's webhook is on. ``read``: documents already read by path (capture's first lookup, asked
    for by :func:`read_with_capture`); the config is read here when it is not among them. Never
    raises: a webhook problem is logged, capture goes on."""
    try:
        return _enqueue(ctx, uid, conversation_id, old, new, read or {})
    except Exception:  # noqa: BLE001 - a webhook never fails or retries capture
        log.exception("webhook enqueue failed for %s/%s", uid, conversation_id)
        return None


def _enqueue(ctx: Ports, uid: str, conversation_id: str, old: dict[str, Any] | None,
             new: dict[str, Any] | None, read: Mapping[str, dict[str, Any] | None]) -> str | None:
    if not policy.fires(old, new):
        return None
    path = _config_path(uid, MEMORY_CREATED)
    config = WebhookConfig.from_store(read[path] if path in read else ctx.store.get(path))
    if not (config.enabled and config.url):
        return None
    target = ctx.settings.webhook_url
    if not target:
        log.warning("webhook %s not sent: STRATA_WEBHOOK_URL (the deliver_webhook function) is not set", MEMORY_CREATED)
        return None
    delivery_id = policy.delivery_id(MEMORY_CREATED, conversation_id)
    record = paths.doc(uid, DELIVERY_COLLECTION, delivery_id)
    enqueued = WebhookDelivery(type=MEMORY_CREATED, conversation_id=conversation_id, state="enqueued", attempts=0,
                               enqueued_at=ctx.now(), updated_at=ctx.now(),
                               expire_at=ctx.now() + timedelta(days=RECORD_DAYS))
    if not ctx.store.write(Change("webhook.delivery_enqueue", [Write("create", record, enqueued.to_store())])):
        return None  # a duplicate or retried trigger: the first one enqueued it
    payload = {"webhook": MEMORY_CREATED, "uid": uid, "conversation_id": conversation_id}
    try:
        ctx.tasks.enqueue(target, payload, task_id=delivery_id, queue=ctx.settings.webhook_queue)
    except Exception:
        # so that a retried trigger may enqueue it again
        ctx.store.write(Change("webhook.delivery_unenqueue", [Write("delete", record)]))
        raise
    log_json("webhook_enqueued", uid=uid, type=MEMORY_CREATED, conversation_id=conversation_id)
    return delivery_id


# ------------------------------------------------------------------------------------ delivery
def hand_over(ctx: Ports, uid: str, webhook_type: str, conversation_id: str) -> dict[str, Any]:
    """A delivery task queued before ``deliver_webhook`` existed reached ``consolidate``: enqueue it
    again for ``deliver_webhook``. The new task is named after the delivery, so a retried hand-over
    adds nothing, and the delivery record still makes it happen at most once."""
    _known(webhook_type)
    target = ctx.settings.webhook_url
    if not target:
        raise ProviderUnavailable("STRATA_WEBHOOK_URL (the deliver_webhook function) is not set")
    delivery_id = policy.delivery_id(webhook_type, conversation_id)
    ctx.tasks.enqueue(target, {"webhook": webhook_type, "uid": uid, "conversation_id": conversation_id},
                      task_id=f"{delivery_id}-handover", queue=ctx.settings.webhook_queue)
    log_json("webhook_handed_over", uid=uid, type=webhook_type, conversation_id=conversation_id)
    return {"state": "handed_over", "delivery_id": delivery_id}


def deliver_webhook(ctx: Ports, uid: str, webhook_type: str, conversation_id: str, retry_count: int = 0) -> dict[str, Any]:
    """One delivery attempt (a Cloud Task calls this). Returns the outcome when final; raises
    :class:`DeliveryPending` when the receiver may take it later and attempts remain."""
    _known(webhook_type)
    record = paths.doc(uid, DELIVERY_COLLECTION, policy.delivery_id(webhook_type, conversation_id))
    delivery = WebhookDelivery.from_store(ctx.store.get(record))
    if delivery.state in FINAL_STATES:  # Cloud Tasks ran the task again: nothing to do
        return {"state": delivery.state, "duplicate": True}
    attempt = max(int(delivery.attempts or 0) + 1, retry_count + 1)

    def finish(outcome: str, **fields: Any) -> dict[str, Any]:
        # the outcome's fields, a missing status or error written as null
        update = WebhookDelivery(type=webhook_type, conversation_id=conversation_id, state=outcome, attempts=attempt,
                                 updated_at=ctx.now(), **fields,
                                 nulls=frozenset(name for name, value in fields.items() if value is None)).to_store()
        ctx.store.write(Change("webhook.delivery_outcome", [Write("set", record, update, merge=True)]))
        log_json("webhook_delivery", uid=uid, **{k: v for k, v in update.items() if k != "updated_at"})
        return {"state": outcome, "attempts": attempt, **fields}

    config = _config(ctx, uid, webhook_type)
    if not (config.enabled and config.url):
        return finish("cancelled", reason="webhook_disabled")
    conversation = ctx.store.get(paths.conversation(uid, conversation_id))
    if conversation is None:
        return finish("cancelled", reason="conversation_deleted")
    url = config.url
    try:
        addresses = check_target(ctx, url)
    except TargetRefused as exc:
        return finish("refused", reason=str(exc))
    body = json.dumps(policy.conversation_body(conversation_id, conversation),
                      ensure_ascii=False, allow_nan=False).encode()
    status, error = _post(ctx, uid, url, addresses, body)
    if 200 <= status < 300:
        return finish("delivered", last_status=status, delivered_at=ctx.now())
    return _undelivered(finish, attempt, status, error)


def _undelivered(finish: Callable[..., dict[str, Any]], attempt: int, status: int, error: str) -> dict[str, Any]:
    """An attempt the receiver did not take: recorded as retrying (raising :class:`DeliveryPending`)
    while it may take it later and attempts remain, else as failed."""
    worth_retrying = status == 0 or policy.retry_worthy(status)
    if worth_retrying and attempt < MAX_ATTEMPTS:
        finish("retrying", last_status=status or None, last_error=error or None)
        raise DeliveryPending(f"webhook attempt {attempt} of {MAX_ATTEMPTS} failed: {error or status}")
    return finish("failed", last_status=status or None, last_error=error or None)


def _post(ctx: Ports, uid: str, url: str, addresses: list[str], body: bytes) -> tuple[int, str]:
    """POST the body to the checked address: (the receiver's status, ""), or (0, why) when it could
    not be reached in time."""
    try:
        return ctx.webhook_sender.post(policy.target_url(url, uid), addresses[0], body,
                                       timeout_s=ctx.settings.webhook_timeout_s), ""
    except RetryableError as exc:
        return 0, exc.message

"""Wiring the emulators together once they are up: triggers, topics, subscriptions, queue.

This is what Terraform does in a real project (Eventarc triggers, Pub/Sub topics with a push
subscription and its dead-letter topic, the Cloud Tasks queue), done against the emulators.
Every step is idempotent, so wiring an already wired stack changes nothing.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import httpx

from strata_dev.localstack import catalog

log = logging.getLogger("strata.stack")


def register_firestore_triggers(firestore_host: str, project_id: str, pattern: str) -> None:
    """Tell the Firestore emulator which writes to send to its functions emulator (the relay): those
    on documents matching ``pattern`` (the conversations', as Terraform's triggers watch them)."""
    for trig in catalog.FIRESTORE_TRIGGERS:
        # A freshly started emulator on a busy machine can take many seconds to answer its first
        # requests: a generous timeout, and a retry (registering the same trigger id again is harmless).
        for attempt in range(3):
            try:
                resp = httpx.post(
                    f"http://{firestore_host}/emulator/v1/projects/{project_id}/eventarcTrigger",
                    params={"eventarcTriggerId": trig.key},
                    json={
                        "eventType": trig.event_type,
                        "database": "(default)",
                        "namespace": "(default)",
                        "document": {"value": pattern, "matchType": "PATH_PATTERN"},
                    },
                    timeout=60.0,
                )
                break
            except httpx.TimeoutException:
                if attempt == 2:
                    raise
                log.warning("registering trigger %s timed out; retrying", trig.key)
        if not resp.is_success:
            raise RuntimeError(f"registering trigger {trig.key} failed: {resp.status_code} {resp.text[:300]}")


def _insecure_channel(host: str) -> Any:
    import grpc

    return grpc.insecure_channel(host)


def wire_pubsub(pubsub_host: str, project_id: str, push_base_url: str) -> None:
    """Projection topic → push subscription to outbox_drain, with a dead-letter topic + pull sub.

    ``push_base_url`` is the relay's push route for outbox_drain; the endpoint appends the topic
    path, so functions-framework turns the raw push body into a
    ``google.cloud.pubsub.topic.v1.messagePublished`` CloudEvent whose source names the topic.
    """
    from google.api_core import exceptions
    from google.cloud.pubsub import PublisherClient, SubscriberClient
    from google.protobuf import duration_pb2
    from google.pubsub_v1.services.publisher.transports import PublisherGrpcTransport
    from google.pubsub_v1.services.subscriber.transports import SubscriberGrpcTransport

    publisher = PublisherClient(transport=PublisherGrpcTransport(channel=_insecure_channel(pubsub_host)))
    subscriber = SubscriberClient(transport=SubscriberGrpcTransport(channel=_insecure_channel(pubsub_host)))
    topic = publisher.topic_path(project_id, catalog.PROJECTION_TOPIC)
    dead_topic = publisher.topic_path(project_id, catalog.DEAD_LETTER_TOPIC)
    for name in (topic, dead_topic):
        with contextlib.suppress(exceptions.AlreadyExists):
            publisher.create_topic(request={"name": name})
    with contextlib.suppress(exceptions.AlreadyExists):
        subscriber.create_subscription(
            request={
                "name": subscriber.subscription_path(project_id, catalog.DEAD_LETTER_SUBSCRIPTION),
                "topic": dead_topic,
            }
        )
    with contextlib.suppress(exceptions.AlreadyExists):
        subscriber.create_subscription(
            request={
                "name": subscriber.subscription_path(project_id, catalog.PUSH_SUBSCRIPTION),
                "topic": topic,
                "push_config": {"push_endpoint": f"{push_base_url.rstrip('/')}/{topic}"},
                "ack_deadline_seconds": 60,
                "dead_letter_policy": {
                    "dead_letter_topic": dead_topic,
                    "max_delivery_attempts": catalog.MAX_DELIVERY_ATTEMPTS,
                },
                "retry_policy": {
                    "minimum_backoff": duration_pb2.Duration(seconds=1),
                    "maximum_backoff": duration_pb2.Duration(seconds=10),
                },
            }
        )


def ensure_tasks_queue(tasks_host: str, project_id: str) -> None:
    """The consolidation and webhook queues exist in the Tasks emulator (created at start; created
    here if not)."""
    from google.api_core import exceptions
    from google.cloud import tasks_v2
    from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

    client = tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=_insecure_channel(tasks_host)))
    for queue in catalog.QUEUES:
        name = catalog.queue_path(project_id, queue)
        try:
            client.get_queue(name=name, timeout=60)
        except exceptions.NotFound:
            client.create_queue(parent=name.rsplit("/queues/", 1)[0], queue=tasks_v2.Queue(name=name), timeout=60)


def typesense_keys(url: str, admin_key: str, search_key: str) -> None:
    """What ``strata setup`` does in a deployment: the collection (the functions' default one), and
    the search-only key scoped to it with the value the stack gave those functions (Typesense takes
    a chosen value). Idempotent: an existing collection is checked, an existing key kept."""
    from core import config
    from core.adapters.typesense_index import TypesenseIndex
    from strata_dev.setup import SEARCH_KEY, key_description

    collection = config.load().typesense_collection
    TypesenseIndex(url, admin_key, collection).ensure_ready()
    kind, actions = SEARCH_KEY
    headers = {"X-TYPESENSE-API-KEY": admin_key}
    existing = httpx.get(f"{url}/keys", headers=headers, timeout=60.0)
    existing.raise_for_status()
    if any(k.get("description") == key_description(kind, collection) for k in existing.json().get("keys", [])):
        return
    made = httpx.post(f"{url}/keys", headers=headers, timeout=60.0,
                      json={"value": search_key, "description": key_description(kind, collection),
                            "actions": actions, "collections": [collection]})
    if not made.is_success:
        raise RuntimeError(f"creating the Typesense search key failed: {made.status_code} {made.text[:300]}")

"""The nudge publisher (core/adapters/pubsub.py) against the Pub/Sub emulator: a published nudge
arrives as the JSON it was given, and a topic that does not exist is a ProviderUnavailable naming
the topic, not an SDK exception."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from core.adapters.pubsub import PubSubPublisher
from core.errors import ProviderUnavailable

pytestmark = pytest.mark.integration


@pytest.fixture
def subscribed_topic(stack: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(project, topic name, subscription path) of a topic and pull subscription of this test alone."""
    from google.cloud import pubsub_v1  # type: ignore[attr-defined]

    project, name = f"demo-nudge-{uuid.uuid4().hex[:8]}", "nudges"
    publisher, subscriber = pubsub_v1.PublisherClient(), pubsub_v1.SubscriberClient()
    topic = publisher.topic_path(project, name)
    subscription = subscriber.subscription_path(project, "probe")
    publisher.create_topic(request={"name": topic})
    subscriber.create_subscription(request={"name": subscription, "topic": topic})
    try:
        yield project, name, (subscriber, subscription)
    finally:
        subscriber.delete_subscription(request={"subscription": subscription})
        publisher.delete_topic(request={"topic": topic})


def test_a_nudge_arrives_as_the_json_it_was_given(subscribed_topic: tuple[str, str, Any]) -> None:
    project, name, (subscriber, subscription) = subscribed_topic
    PubSubPublisher(project).publish(name, {"uid": "u-1", "sequence": 7})
    answer = subscriber.pull(request={"subscription": subscription, "max_messages": 10}, timeout=30)
    assert [json.loads(m.message.data) for m in answer.received_messages] == [{"uid": "u-1", "sequence": 7}]


def test_a_missing_topic_is_provider_unavailable(subscribed_topic: tuple[str, str, Any]) -> None:
    project, _, _ = subscribed_topic
    with pytest.raises(ProviderUnavailable, match="could not publish to no-such-topic"):
        PubSubPublisher(project).publish("no-such-topic", {"uid": "u-1"})

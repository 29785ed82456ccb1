"""Pub/Sub publisher (the emulator when PUBSUB_EMULATOR_HOST is set; the SDK reads it)."""

from __future__ import annotations

import json
from typing import Any

from core.errors import ProviderUnavailable
from core.ports import Publisher


class PubSubPublisher(Publisher):
    def __init__(self, project_id: str) -> None:
        from google.cloud import pubsub_v1  # type: ignore[attr-defined]

        self.project_id = project_id
        # Messages here are small nudges and callers wait for each one; the client's default of
        # holding a batch open for 10 ms only adds that to every apply. Send each at once.
        self._client = pubsub_v1.PublisherClient(batch_settings=pubsub_v1.types.BatchSettings(max_latency=0.0))

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        path = self._client.topic_path(self.project_id, topic)
        try:
            self._client.publish(path, json.dumps(data).encode()).result(timeout=10)
        except Exception as exc:  # noqa: BLE001 - SDK raises many types
            raise ProviderUnavailable(f"could not publish to {topic}: {exc}") from exc

"""Cloud Tasks queue (the gcloud-tasks-emulator when CLOUD_TASKS_EMULATOR_HOST is set)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from core import tracing
from core.config import Settings
from core.errors import ProviderUnavailable
from core.ports import TaskQueue


@tracing.spanned("tasks")
class CloudTasksQueue(TaskQueue):
    def __init__(self, settings: Settings) -> None:
        from google.cloud import tasks_v2

        self._tasks_v2 = tasks_v2
        if settings.tasks_emulator_host:
            import grpc
            from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

            channel = grpc.insecure_channel(settings.tasks_emulator_host)
            self._client = tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
        else:
            self._client = tasks_v2.CloudTasksClient()
        self._project, self._region = settings.project_id, settings.region
        self._queue = self._client.queue_path(settings.project_id, settings.region, settings.tasks_queue)
        self._invoker = settings.tasks_invoker

    def enqueue(self, url: str, payload: dict[str, Any], *, task_id: str | None = None,
                queue: str | None = None, schedule_at: datetime | None = None) -> None:
        parent = self._client.queue_path(self._project, self._region, queue) if queue else self._queue
        task: dict[str, Any] = {
            "http_request": {
                "http_method": self._tasks_v2.HttpMethod.POST, "url": url,
                # The enqueuing span's traceparent: the task's run joins this trace (core/logs.py).
                "headers": {"Content-Type": "application/json", **tracing.carrier()},
                "body": json.dumps(payload).encode(),
            }
        }
        if self._invoker:  # production: the consolidate function only accepts OIDC-authenticated calls
            task["http_request"]["oidc_token"] = {"service_account_email": self._invoker, "audience": url}
        if schedule_at is not None:
            task["schedule_time"] = schedule_at
        if task_id:
            task["name"] = f"{parent}/tasks/{task_id}"
        try:
            self._client.create_task(parent=parent, task=task)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001
            if "ALREADY_EXISTS" in str(exc) or "already exists" in str(exc).lower():
                return
            raise ProviderUnavailable(f"could not enqueue task: {exc}") from exc

"""What the local stack serves: the functions, their triggers, and the messaging names.

Data, not code: the stack starts one functions-framework server per :data:`FUNCTIONS` row, the
relay forwards Firestore events per :data:`FIRESTORE_TRIGGERS`, and Pub/Sub is wired per the
names below. A row whose ``functions/<name>/main.py`` is missing makes ``up`` fail loudly.
"""

from __future__ import annotations

from dataclasses import dataclass

PROJECT_ID = "demo-strata"
LOCATION = "us-central1"
PROJECTION_TOPIC = "strata-projection"
DEAD_LETTER_TOPIC = "strata-projection-dead-letter"
PUSH_SUBSCRIPTION = "strata-projection-outbox-drain"
DEAD_LETTER_SUBSCRIPTION = "strata-projection-dead-letter-pull"
MAX_DELIVERY_ATTEMPTS = 5
TASKS_QUEUE = "strata-consolidation"
WEBHOOK_QUEUE = "strata-webhooks"  # developer webhook deliveries (deliver_webhook), apart from consolidation passes
TASKS_MAX_RETRIES = 5  # the emulator's bound; Terraform's queues bound retries per queue


def queue_path(project_id: str = PROJECT_ID, queue: str = TASKS_QUEUE) -> str:
    return f"projects/{project_id}/locations/{LOCATION}/queues/{queue}"


QUEUES: tuple[str, ...] = (TASKS_QUEUE, WEBHOOK_QUEUE)


@dataclass(frozen=True)
class FunctionSpec:
    """One Cloud Function: ``functions/<name>/main.py``, entry point ``entry``."""

    name: str
    entry: str
    signature: str  # "http" | "cloudevent"


FUNCTIONS: tuple[FunctionSpec, ...] = (
    FunctionSpec("api", "api", "http"),
    FunctionSpec("consolidate", "consolidate", "http"),
    FunctionSpec("on_conversation_complete", "on_conversation_complete", "cloudevent"),
    FunctionSpec("delete_cascade", "delete_cascade", "cloudevent"),
    FunctionSpec("outbox_drain", "outbox_drain", "cloudevent"),
    FunctionSpec("deliver_webhook", "deliver_webhook", "http"),
)


@dataclass(frozen=True)
class FirestoreTrigger:
    """An Eventarc-style Firestore trigger: events of ``event_type`` on the conversations' documents
    (``STRATA_CONVERSATIONS_PATH``'s pattern, :meth:`core.domain.paths.Layout.trigger_pattern`) go to
    ``function``.

    ``key`` is the trigger id registered with the emulator; the relay maps it back to the function.
    """

    key: str
    function: str
    event_type: str


FIRESTORE_TRIGGERS: tuple[FirestoreTrigger, ...] = (
    FirestoreTrigger(
        key="on_conversation_complete",
        function="on_conversation_complete",
        event_type="google.cloud.firestore.document.v1.written",
    ),
    FirestoreTrigger(
        key="delete_cascade",
        function="delete_cascade",
        event_type="google.cloud.firestore.document.v1.deleted",
    ),
)

# The function a Pub/Sub push subscription on the projection topic delivers to.
PROJECTION_PUSH_FUNCTION = "outbox_drain"
# The scheduled entry points (Cloud Scheduler jobs in Terraform).
CONSOLIDATE_FUNCTION = "consolidate"
# The Cloud Tasks worker of :data:`WEBHOOK_QUEUE` (STRATA_WEBHOOK_URL).
WEBHOOK_FUNCTION = "deliver_webhook"

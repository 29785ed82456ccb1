"""The two scheduled jobs Terraform declares: their names, and on the local stack their switches.

``infra/terraform/messaging.tf`` declares ``strata-consolidation-fanout`` and ``strata-outbox-sweep``;
each one's cron is a Terraform variable, whose name is also the local tick's key for the job
(:data:`JOBS`). On the local stack a job's state is the document ``scheduler_jobs/{name}`` in the
Firestore emulator (:class:`JobSwitches`): ``strata scheduler pause`` and ``resume`` set it, and the
tick loop (:mod:`strata_dev.localstack.tick`) reads it before each call, skips a paused job
(counting the skipped ticks) and records each attempt.

Both :mod:`strata_dev.scheduler` (the command's two backends) and the tick import this module;
neither imports the other's way back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.domain import paths
from core.errors import UnknownJob

# Terraform job name → the variable holding its cron (and the tick's job key).
JOBS = {"strata-consolidation-fanout": "consolidation_schedule", "strata-outbox-sweep": "outbox_sweep_schedule"}
COLLECTION = paths.SCHEDULER_JOBS


def job_name(name: str) -> str:
    if name not in JOBS:
        raise UnknownJob(f"unknown job {name!r}; the jobs are {', '.join(JOBS)}")
    return name


def for_tick_key(key: str) -> str:
    """The Terraform job name of a tick job key (``consolidation_schedule`` → ``strata-consolidation-fanout``)."""
    return next(name for name, variable in JOBS.items() if variable == key)


class JobSwitches:
    """The jobs' state documents ``scheduler_jobs/{name}`` in the Firestore emulator (``client``)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def _ref(self, name: str) -> Any:
        return self.client.collection(COLLECTION).document(job_name(name))

    def paused(self, name: str) -> bool:
        return (self._ref(name).get().to_dict() or {}).get("state") == "PAUSED"

    def attempted(self, name: str) -> None:
        self._ref(name).set({"last_attempt_time": datetime.now(UTC)}, merge=True)

    def skipped(self, name: str) -> None:
        from google.cloud import firestore

        self._ref(name).set({"skipped_ticks": firestore.Increment(1), "last_skipped_time": datetime.now(UTC)},
                            merge=True)


__all__ = ["COLLECTION", "JOBS", "JobSwitches", "UnknownJob", "for_tick_key", "job_name"]

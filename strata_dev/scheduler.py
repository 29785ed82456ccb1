"""The scheduled jobs Terraform declares, as one interface over Cloud Scheduler and the local tick.

``strata scheduler status | pause | resume | run JOB`` drives the two jobs of
``infra/terraform/messaging.tf`` (``strata-consolidation-fanout``, ``strata-outbox-sweep``):

* :class:`CloudJobs` on a real project, through ``google-cloud-scheduler``'s ``CloudSchedulerClient``
  (``projects/{project}/locations/{region}/jobs/{name}``); a deployment with Terraform's
  ``name_prefix`` (``mem-``) named them ``mem-consolidation-fanout`` and ``mem-outbox-sweep``, which
  ``CloudJobs(..., name_prefix="mem-")`` addresses (by either name);
* :class:`LocalJobs` on the local stack: the tick loop (``strata_dev.localstack.tick``) reads each job's
  state from ``scheduler_jobs/{name}`` in the Firestore emulator before calling it, skips a paused
  job (counting the skipped ticks) and records each attempt (those switches, and the job names, are
  :mod:`strata_dev.scheduled_jobs`, which the tick imports); ``run`` calls the job once now.

Both answer with the same :class:`JobStatus` rows, so the command prints the same thing either way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from strata_dev.localstack import tick
from strata_dev.scheduled_jobs import COLLECTION, JOBS, JobSwitches, UnknownJob, for_tick_key, job_name


@dataclass(frozen=True)
class JobStatus:
    name: str
    schedule: str
    time_zone: str
    state: str  # ENABLED | PAUSED (Cloud Scheduler's words)
    last_attempt_time: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ScheduledJobs(ABC):
    @abstractmethod
    def status(self) -> list[JobStatus]: ...

    @abstractmethod
    def pause(self, name: str) -> JobStatus: ...

    @abstractmethod
    def resume(self, name: str) -> JobStatus: ...

    @abstractmethod
    def run(self, name: str) -> JobStatus: ...


class CloudJobs(ScheduledJobs):
    """Cloud Scheduler on a real project."""

    def __init__(self, project_id: str, region: str, client: Any = None, name_prefix: str = "") -> None:
        if client is None:
            from google.cloud import scheduler_v1

            client = scheduler_v1.CloudSchedulerClient()
        self.client = client
        self.parent = f"projects/{project_id}/locations/{region}"
        self.prefix = name_prefix

    def deployed(self, name: str) -> str:
        """The deployed name of job ``name`` (its Terraform name, or already the deployed one): the
        prefix in ``strata-``'s place, as infra/terraform/names.tf names it."""
        if self.prefix and name.startswith(self.prefix) and not name.startswith("strata-"):
            name = "strata-" + name.removeprefix(self.prefix)
        job_name(name)
        return self.prefix + name.removeprefix("strata-") if self.prefix else name

    def _full(self, name: str) -> str:
        return f"{self.parent}/jobs/{self.deployed(name)}"

    @staticmethod
    def _row(job: Any) -> JobStatus:
        attempt = job.last_attempt_time
        attempted = attempt.isoformat() if attempt and attempt.timestamp() > 0 else None
        return JobStatus(name=job.name.rsplit("/", 1)[-1], schedule=job.schedule, time_zone=job.time_zone,
                         state=type(job).State(job.state).name, last_attempt_time=attempted)

    def status(self) -> list[JobStatus]:
        rows = [self._row(job) for job in self.client.list_jobs(parent=self.parent)]
        ours = {self.deployed(name) for name in JOBS}
        return sorted((r for r in rows if r.name in ours), key=lambda r: r.name)

    def pause(self, name: str) -> JobStatus:
        return self._row(self.client.pause_job(name=self._full(name)))

    def resume(self, name: str) -> JobStatus:
        return self._row(self.client.resume_job(name=self._full(name)))

    def run(self, name: str) -> JobStatus:
        return self._row(self.client.run_job(name=self._full(name)))


class LocalJobs(ScheduledJobs, JobSwitches):
    """The local stack's tick loop, gated by ``scheduler_jobs/{name}`` in the Firestore emulator (the
    switches the tick reads, :class:`~strata_dev.scheduled_jobs.JobSwitches`)."""

    def __init__(self, client: Any, variables_tf: Path | None = None, jobs: Any = None) -> None:
        JobSwitches.__init__(self, client)
        self.schedules = tick.load_schedules(variables_tf or Path(__file__).resolve().parents[2]
                                             / "infra" / "terraform" / "variables.tf")
        self._jobs = jobs

    def _row(self, name: str) -> JobStatus:
        data = self._ref(name).get().to_dict() or {}
        attempted = data.get("last_attempt_time")
        return JobStatus(name=name, schedule=self.schedules[JOBS[name]], time_zone=self.schedules["scheduler_time_zone"],
                         state=data.get("state", "ENABLED"),
                         last_attempt_time=attempted.isoformat() if attempted else None)

    def status(self) -> list[JobStatus]:
        return [self._row(name) for name in sorted(JOBS)]

    def pause(self, name: str) -> JobStatus:
        self._ref(name).set({"state": "PAUSED", "updated_at": datetime.now(UTC)}, merge=True)
        return self._row(name)

    def resume(self, name: str) -> JobStatus:
        self._ref(name).set({"state": "ENABLED", "updated_at": datetime.now(UTC)}, merge=True)
        return self._row(name)

    def run(self, name: str) -> JobStatus:
        """Run the job now, paused or not (as Cloud Scheduler's ``run_job`` does)."""
        jobs = self._jobs or tick.Jobs()
        call = {"consolidation_schedule": jobs.consolidate_fanout, "outbox_sweep_schedule": jobs.outbox_sweep}
        call[JOBS[job_name(name)]]()
        self.attempted(name)
        return self._row(name)


__all__ = ["COLLECTION", "JOBS", "CloudJobs", "JobStatus", "LocalJobs", "ScheduledJobs", "UnknownJob",
           "for_tick_key", "job_name"]

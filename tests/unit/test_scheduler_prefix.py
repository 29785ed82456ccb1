"""``strata scheduler --name-prefix``: a deployment made with Terraform's ``name_prefix`` named its
jobs ``mem-consolidation-fanout`` and ``mem-outbox-sweep`` (infra/terraform/names.tf); CloudJobs
addresses those, by the deployed name or the Terraform one, and lists only them. The client is
google-cloud-scheduler's own ``Job`` messages behind a recording stand-in."""

from __future__ import annotations

from typing import Any

import pytest
from google.cloud import scheduler_v1

from strata_dev.scheduler import CloudJobs, UnknownJob

PARENT = "projects/acme-assistant/locations/europe-west1"


class Client:
    """Answers like CloudSchedulerClient over the jobs it holds, recording each call's job name."""

    def __init__(self, names: list[str]) -> None:
        self.jobs = {name: scheduler_v1.Job(name=f"{PARENT}/jobs/{name}", schedule="*/5 * * * *", time_zone="Etc/UTC",
                                            state=scheduler_v1.Job.State.ENABLED) for name in names}
        self.calls: list[tuple[str, str]] = []

    def list_jobs(self, parent: str) -> list[Any]:
        assert parent == PARENT
        return list(self.jobs.values())

    def _call(self, action: str, name: str, state: Any) -> Any:
        self.calls.append((action, name))
        job = self.jobs[name.rsplit("/", 1)[-1]]
        job.state = state
        return job

    def pause_job(self, name: str) -> Any:
        return self._call("pause", name, scheduler_v1.Job.State.PAUSED)

    def resume_job(self, name: str) -> Any:
        return self._call("resume", name, scheduler_v1.Job.State.ENABLED)

    def run_job(self, name: str) -> Any:
        return self._call("run", name, scheduler_v1.Job.State.ENABLED)


def test_a_prefixed_deployments_jobs_are_listed_and_driven() -> None:
    client = Client(["mem-consolidation-fanout", "mem-outbox-sweep", "strata-outbox-sweep", "app-nightly"])
    jobs = CloudJobs("acme-assistant", "europe-west1", client=client, name_prefix="mem-")
    assert [row.name for row in jobs.status()] == ["mem-consolidation-fanout", "mem-outbox-sweep"]
    assert jobs.pause("mem-outbox-sweep").state == "PAUSED"
    assert jobs.resume("strata-outbox-sweep").state == "ENABLED"  # the Terraform name reaches the same job
    jobs.run("mem-consolidation-fanout")
    assert client.calls == [("pause", f"{PARENT}/jobs/mem-outbox-sweep"), ("resume", f"{PARENT}/jobs/mem-outbox-sweep"),
                            ("run", f"{PARENT}/jobs/mem-consolidation-fanout")]
    for unknown in ("app-nightly", "mem-nightly", "strata-nightly"):
        with pytest.raises(UnknownJob):
            jobs.pause(unknown)


def test_without_a_prefix_the_names_are_terraforms_defaults() -> None:
    client = Client(["strata-consolidation-fanout", "strata-outbox-sweep", "mem-outbox-sweep"])
    jobs = CloudJobs("acme-assistant", "europe-west1", client=client)
    assert [row.name for row in jobs.status()] == ["strata-consolidation-fanout", "strata-outbox-sweep"]
    jobs.run("strata-outbox-sweep")
    assert client.calls == [("run", f"{PARENT}/jobs/strata-outbox-sweep")]
    with pytest.raises(UnknownJob):
        jobs.run("mem-outbox-sweep")

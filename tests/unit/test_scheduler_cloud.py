"""``strata scheduler`` on a real project: CloudJobs through google-cloud-scheduler's own client and
REST transport, whose HTTP session replays recorded exchanges (tests/support/recordings/
cloud_scheduler.json) and checks each request's method and path in order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import scheduler_v1
from google.cloud.scheduler_v1.services.cloud_scheduler.transports.rest import CloudSchedulerRestTransport

from strata_dev.scheduler import CloudJobs, UnknownJob

RECORDING = Path(__file__).resolve().parents[1] / "support" / "recordings" / "cloud_scheduler.json"


class ReplaySession:
    """Answers each request with the next recorded exchange, after checking it is the one recorded."""

    def __init__(self, exchanges: list[dict[str, Any]]) -> None:
        self.exchanges = list(exchanges)
        self.sent: list[tuple[str, str]] = []

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        method, url = str(method).upper(), str(url)
        assert self.exchanges, f"unexpected request {method} {url}"
        expected = self.exchanges.pop(0)
        path = urlsplit(url).path
        assert (method, path) == (expected["method"], expected["path"])
        self.sent.append((method, path))
        response = requests.Response()
        response.status_code = expected["status"]
        response._content = json.dumps(expected["response"]).encode()
        response.headers["Content-Type"] = "application/json"
        response.url = url
        response.request = requests.Request(method, url).prepare()
        return response


@pytest.fixture
def replay() -> tuple[CloudJobs, ReplaySession]:
    session = ReplaySession(json.loads(RECORDING.read_text())["exchanges"])
    transport = CloudSchedulerRestTransport(credentials=AnonymousCredentials())
    # The transport's own session object stays (its method stubs hold it); only its HTTP exchange is replayed.
    transport._session.request = session.request  # type: ignore[method-assign]
    client = scheduler_v1.CloudSchedulerClient(transport=transport)
    return CloudJobs("strata-prod", "europe-west1", client=client), session


def test_status_pause_resume_run_through_the_client(replay: tuple[CloudJobs, ReplaySession]) -> None:
    jobs, session = replay
    rows = [row.as_dict() for row in jobs.status()]
    assert rows == [
        {"name": "strata-consolidation-fanout", "schedule": "*/10 * * * *", "time_zone": "Etc/UTC",
         "state": "ENABLED", "last_attempt_time": "2026-11-30T22:50:00.412000+00:00"},
        {"name": "strata-outbox-sweep", "schedule": "*/5 * * * *", "time_zone": "Etc/UTC",
         "state": "ENABLED", "last_attempt_time": "2026-11-30T22:55:00.101000+00:00"},
    ]  # another job in the same location is not Strata's
    assert jobs.pause("strata-consolidation-fanout").state == "PAUSED"
    assert jobs.resume("strata-consolidation-fanout").state == "ENABLED"
    assert jobs.run("strata-outbox-sweep").last_attempt_time == "2026-11-30T22:58:13.220000+00:00"
    with pytest.raises(exceptions.NotFound):
        jobs.pause("strata-outbox-sweep")  # deleted from the project meanwhile: the API's 404 surfaces
    assert not session.exchanges and len(session.sent) == 5


def test_an_unknown_job_is_refused_before_any_request(replay: tuple[CloudJobs, ReplaySession]) -> None:
    jobs, session = replay
    with pytest.raises(UnknownJob, match="strata-consolidation-fanout"):
        jobs.pause("someone-elses-job")
    assert session.sent == []

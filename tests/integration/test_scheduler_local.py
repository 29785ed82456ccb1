"""``strata scheduler`` on the local stack: a paused job is skipped by the tick loop until it is
resumed. The loop runs in this process on a 50 ms interval with jobs that only record their calls
(the session stack's own tick is parked at one tick a day), gated by the same
``scheduler_jobs/{name}`` documents the command writes in the Firestore emulator; waits are on the
skipped-tick counter and on the recorded calls, never on time."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from core.bootstrap import Context
from strata_dev.cli import main as cli
from strata_dev.localstack import tick
from strata_dev.scheduler import JOBS, LocalJobs

pytestmark = pytest.mark.integration


class _Recorder(tick.Jobs):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def consolidate_fanout(self) -> None:
        self.calls.append("strata-consolidation-fanout")

    def outbox_sweep(self) -> None:
        self.calls.append("strata-outbox-sweep")


def _scheduler(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert cli.main(["scheduler", *argv, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _until(check: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_pause_stops_the_local_ticks_jobs_until_resume(stack: dict[str, Any],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    ctx = Context()
    gate = LocalJobs(ctx.client)
    recorder, stop = _Recorder(), threading.Event()
    loop = threading.Thread(target=tick.run_loop, args=(recorder, gate.schedules, 0.05, stop, gate), daemon=True)
    try:
        for name in JOBS:
            assert _scheduler(capsys, "pause", name)[0]["state"] == "PAUSED"
        skipped = {n: (gate._ref(n).get().to_dict() or {}).get("skipped_ticks", 0) for n in JOBS}
        loop.start()
        _until(lambda: all((gate._ref(n).get().to_dict() or {}).get("skipped_ticks", 0) >= skipped[n] + 2
                           for n in JOBS), "two skipped ticks of each paused job")
        assert recorder.calls == []
        rows = {row["name"]: row for row in _scheduler(capsys, "status")}
        assert set(rows) == set(JOBS) and {row["state"] for row in rows.values()} == {"PAUSED"}
        assert rows["strata-outbox-sweep"]["schedule"] == gate.schedules["outbox_sweep_schedule"]

        assert _scheduler(capsys, "resume", "strata-outbox-sweep")[0]["state"] == "ENABLED"
        _until(lambda: recorder.calls.count("strata-outbox-sweep") >= 2, "the resumed sweep to run")
        assert "strata-consolidation-fanout" not in recorder.calls  # still paused
        assert _scheduler(capsys, "resume", "strata-consolidation-fanout")[0]["state"] == "ENABLED"
        _until(lambda: "strata-consolidation-fanout" in recorder.calls, "the resumed fan-out to run")
        assert _scheduler(capsys, "status")[1]["last_attempt_time"] is not None
    finally:
        stop.set()
        loop.join(timeout=10)
        for name in JOBS:
            gate.resume(name)  # the session's stack tick is never left paused


def test_run_calls_the_job_now_and_an_unknown_job_is_refused(stack: dict[str, Any],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    recorder = _Recorder()
    gate = LocalJobs(Context().client, jobs=recorder)
    gate.pause("strata-outbox-sweep")
    try:
        row = gate.run("strata-outbox-sweep")  # run now, paused or not, as Cloud Scheduler's run_job
        assert recorder.calls == ["strata-outbox-sweep"] and row.state == "PAUSED" and row.last_attempt_time
    finally:
        gate.resume("strata-outbox-sweep")
    capsys.readouterr()
    assert cli.main(["scheduler", "pause", "nightly-backup"]) == 2
    assert "strata-consolidation-fanout" in capsys.readouterr().err

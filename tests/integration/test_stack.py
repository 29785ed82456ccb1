"""`strata stack up --json` → status → down, through the command line, with a leak check.

The stack here is started by a separate process (as a user would), so it runs detached from
pytest; ``down`` must still find and stop every process group it started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from strata_dev.localstack import catalog
from strata_dev.localstack.processes import group_members, pid_alive
from strata_dev.localstack.stack import REPO_ROOT

pytestmark = pytest.mark.integration

REQUIRED_KEYS = {
    "project_id", "api_url", "firestore_emulator_host", "pubsub_emulator_host", "tasks_emulator_host",
    "typesense_url", "typesense_api_key", "pinecone_host", "state_dir",
}


def _cli(state_dir: Path, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "strata_dev.localstack", "stack", "--state-dir", str(state_dir), *args],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )


def test_up_status_down_leaves_nothing_behind(tmp_path: Path) -> None:
    state_dir = tmp_path / "stack"
    # How fast the stack starts is a benchmark figure (strata bench), not a correctness claim.
    up = _cli(state_dir, "up", "--json")
    try:
        assert up.returncode == 0, up.stderr
        info = json.loads(up.stdout)  # exactly one JSON object, nothing else on stdout
        assert info.keys() >= REQUIRED_KEYS
        assert info["state_dir"] == str(state_dir.resolve())
        assert set(info["function_urls"]) == {f.name for f in catalog.FUNCTIONS}

        status = _cli(state_dir, "status", "--json")
        assert status.returncode == 0, status.stdout + status.stderr
        report = json.loads(status.stdout)
        assert report["running"] is True
        expected = {"firestore", "pubsub", "tasks", "typesense", "relay", "tick"}
        expected |= {f"fn:{f.name}" for f in catalog.FUNCTIONS}
        if info["pinecone_host"]:
            expected.add("pinecone")
        assert set(report["components"]) == expected
        assert set(report["components"].values()) == {"up"}
        assert httpx.get(f"{info['typesense_url']}/health", timeout=5).json()["ok"] is True

        state = json.loads((state_dir / "stack.json").read_text())
        groups = {int(p["pgid"]) for p in state["processes"]}
        pids = {pid for g in groups for pid in group_members(g)}
        assert len(pids) >= len(state["processes"])
    finally:
        down = _cli(state_dir, "down")
    assert down.returncode == 0, down.stderr

    deadline = time.monotonic() + 60  # a deadline on the processes exiting, not a timing claim
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.1)
    assert [p for p in pids if pid_alive(p)] == []
    assert [g for g in groups if group_members(g)] == []
    ps = subprocess.run(["ps", "-eo", "pid="], capture_output=True, text=True, check=True).stdout.split()
    assert not pids & {int(p) for p in ps if pid_alive(int(p))}
    assert not Path(info["runtime_dir"]).exists()  # the function servers' gunicorn directories
    after = _cli(state_dir, "status", "--json")
    assert after.returncode == 3
    assert json.loads(after.stdout)["running"] is False

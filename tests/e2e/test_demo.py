"""`make demo`, one of the README's two commands, runs start to finish: its own stack, the sample
conversations through the trigger, the pass the writes scheduled, the drain, the reads it prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def test_make_demo_runs_the_whole_path() -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_EMULATOR_HOST")}  # its own stack
    env.pop("STRATA_TICK_SECONDS", None)
    # The README's command as written; its setup prerequisite is already satisfied by the run's setup.
    done = subprocess.run(["make", "--no-print-directory", "demo", f"PY={sys.executable}"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "every pending Short-term item routed" in out
    long_term = out.split("long_term (", 1)[1]
    assert int(long_term.split(")", 1)[0]) > 0  # the pass promoted something
    assert "== keyword search 'Lisbon'" in out and "Lisbon" in out.split("== keyword search 'Lisbon'", 1)[1]
    assert "== stack stopped" in out

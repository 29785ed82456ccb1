"""Session fixtures shared by every suite.

``stack`` starts the whole local stack once per pytest session (into a temporary state dir),
exports its environment into this process and stops it at the end, even when tests fail or the
run is interrupted. ``firestore_env`` is what integration tests that only need Firestore ask for;
today it is the same stack. Tests use unique ids instead of wiping data.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from strata_dev.localstack import stack as localstack
from strata_dev.localstack.tokens import emulator_token

__all__ = ["emulator_token"]

# CI replays the same examples every run (a failure there is reproducible from its log); a local
# `make test` explores new ones each run, and `make soak` explores for long.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def stack() -> Iterator[dict[str, Any]]:
    """The running local stack's description (``strata stack up --json``), env exported."""
    state_dir = Path(tempfile.mkdtemp(prefix="strata-test-stack-"))
    stopped = False

    def stop() -> None:
        nonlocal stopped
        if not stopped:
            stopped = True
            localstack.down(state_dir)

    atexit.register(stop)
    # A SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C, so the finaliser below still runs.
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _raise_interrupt)
    saved = dict(os.environ)
    # The scheduler stand-in would otherwise consolidate and sweep on the Terraform crons in the
    # middle of tests that assert on Short-term state; tests drive those entry points themselves.
    os.environ.setdefault("STRATA_TICK_SECONDS", "86400")
    # For the same reason writes only mark their user for the walk instead of enqueueing a task a
    # tick (a day) ahead for every test user; the scheduling tests enqueue on a queue of their own.
    os.environ.setdefault("STRATA_CONSOLIDATION_ON_WRITE", "0")
    # Tests pin the dependency-free embedder (the local stack would pick MiniLM when it is installed):
    # no model load per function process, and vectors the tests can reason about.
    os.environ.setdefault("STRATA_EMBEDDER", "hashing")
    # The hanging-receiver test waits for one cut-off POST and its retry; the 10 s default bound
    # would spend most of its run waiting (receivers here answer at once, or hang on purpose).
    os.environ.setdefault("STRATA_WEBHOOK_TIMEOUT_S", "4")
    # The per-user rate limits count on every request here too, but far above what any test sends
    # (the fuzz drives hundreds of writes as one user); tests/e2e/test_rate_limits.py runs api
    # instances of its own with low limits.
    for kind in ("WRITES", "EXTRACTION", "SEARCH"):
        os.environ.setdefault(f"STRATA_RATE_LIMIT_{kind}", "1000000")
    try:
        info = localstack.up(state_dir)
        os.environ.update(localstack.stack_env(info))
        yield info
    finally:
        os.environ.clear()
        os.environ.update(saved)
        stop()
        with contextlib.suppress(OSError):
            atexit.unregister(stop)


@pytest.fixture(scope="session")
def firestore_env(stack: dict[str, Any]) -> dict[str, str]:
    """The environment (``FIRESTORE_EMULATOR_HOST`` and friends) of the session's stack."""
    return localstack.stack_env(stack)


@pytest.fixture(scope="session")
def make_token() -> Callable[[str], str]:
    """``make_token(uid)`` → an unsigned emulator ID token for ``uid``."""
    return emulator_token

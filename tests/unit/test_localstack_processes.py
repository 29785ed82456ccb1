"""The gunicorn runtime directories of the local function servers: one per server, each under a
parent its owner removes, so that neither a stack nor a server started alone leaves one behind;
and stopping one child process."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from strata_dev.localstack import processes
from strata_dev.localstack.processes import gunicorn_runtime, gunicorn_runtime_env

SOCKET = "gunicorn.ctl"  # where gunicorn binds its control socket under $XDG_RUNTIME_DIR
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes, the terminating NUL included


def test_each_server_gets_its_own_directory_under_the_parent(tmp_path: Path) -> None:
    first = Path(gunicorn_runtime_env("fn:outbox_drain", tmp_path)["XDG_RUNTIME_DIR"])
    second = Path(gunicorn_runtime_env("fn:api", str(tmp_path))["XDG_RUNTIME_DIR"])
    assert first.is_dir() and second.is_dir() and first != second
    assert first.parent == tmp_path and second.parent == tmp_path
    # the same server again (a restart) reuses its directory
    assert gunicorn_runtime_env("fn:api", tmp_path)["XDG_RUNTIME_DIR"] == str(second)


def test_a_server_started_alone_gets_a_directory_removed_with_the_block() -> None:
    with gunicorn_runtime("on_conversation_complete") as env:
        path = Path(env["XDG_RUNTIME_DIR"])
        assert path.is_dir()
        assert len(str(path / SOCKET).encode()) <= MAX_SOCKET_PATH
        with socket.socket(socket.AF_UNIX) as control:  # what the server leaves there
            control.bind(str(path / SOCKET))
    assert not path.exists() and not path.parent.exists()


def test_the_directory_is_removed_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError), gunicorn_runtime("api") as env:
        path = Path(env["XDG_RUNTIME_DIR"])
        raise RuntimeError("the server did not start")
    assert not path.exists() and not path.parent.exists()


def test_stop_child_terminates_and_kills_what_ignores_sigterm() -> None:
    polite = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    processes.stop_child(polite)
    assert polite.returncode == -signal.SIGTERM
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, sys, time\n"
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                 "sys.stdout.write('ready'); sys.stdout.flush(); time.sleep(60)"],
                                stdout=subprocess.PIPE)
    assert stubborn.stdout is not None and stubborn.stdout.read(5) == b"ready"  # the handler is set
    processes.stop_child(stubborn, grace_s=0.5)
    assert stubborn.returncode == -signal.SIGKILL

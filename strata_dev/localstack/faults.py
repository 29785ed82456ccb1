"""Fault injection for the local stack: stop one component and start it again on the same port.

The stack's state file (``<state_dir>/stack.json``) records every component's process group, port,
log and argv. :func:`stop` ends exactly the named component's group; :func:`start` runs the same
argv again (same port, same data dir, the stack's environment), waits until it answers its health
check and records the new process in the state file, so ``strata stack down`` still stops it.

Only stateless-on-restart or disk-persisted components make sense here: ``typesense`` (its data dir
survives) and ``pinecone`` (namespaces are persisted after every mutation). ``stopped(...)`` is the
safe form for tests: the components are restarted in ``finally`` even when the body fails.
``paused(...)`` freezes a component instead (SIGSTOP, then SIGCONT): connections hang rather than fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.errors import FaultError
from strata_dev.localstack import stack
from strata_dev.localstack.processes import Proc, pid_alive, spawn, stop_group, tcp_listening

RESTARTABLE = ("typesense", "pinecone")
READY_TIMEOUT_S = 60.0


def _state(state_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((state_dir / stack.STATE_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        raise FaultError(f"no running stack recorded in {state_dir}") from exc


def _find(state: dict[str, Any], name: str) -> Proc:
    for raw in state.get("processes", []):
        if raw.get("name") == name:
            return Proc.from_json(raw)
    raise FaultError(f"the stack has no component named {name!r}")


def _record(state_dir: Path, proc: Proc) -> None:
    state = _state(state_dir)
    state["processes"] = [proc.to_json() if raw.get("name") == proc.name else raw for raw in state["processes"]]
    tmp = state_dir / (stack.STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(state_dir / stack.STATE_FILE)


def _check(name: str) -> None:
    if name not in RESTARTABLE:
        raise FaultError(f"{name!r} cannot be restarted safely; choose one of {RESTARTABLE}")


def is_running(state_dir: str | Path, name: str) -> bool:
    proc = _find(_state(Path(state_dir)), name)
    return pid_alive(proc.pid) and tcp_listening(proc.port)


def stop(state_dir: str | Path, name: str) -> Proc:
    """Stop component ``name`` (its whole process group) and wait until its port is closed."""
    _check(name)
    state_dir = Path(state_dir).resolve()
    with stack._locked(state_dir):
        proc = _find(_state(state_dir), name)
        if not stop_group(proc):
            raise FaultError(f"{name} (pgid {proc.pgid}) survived SIGKILL")
    deadline = time.monotonic() + 10
    while tcp_listening(proc.port):
        if time.monotonic() > deadline:
            raise FaultError(f"port {proc.port} of {name} still accepts connections after stop")
        time.sleep(0.05)
    return proc


def start(state_dir: str | Path, name: str, *, timeout_s: float = READY_TIMEOUT_S) -> Proc:
    """Start component ``name`` again with its recorded argv and port; a no-op if it is healthy."""
    _check(name)
    state_dir = Path(state_dir).resolve()
    with stack._locked(state_dir):
        state = _state(state_dir)
        old = _find(state, name)
        if pid_alive(old.pid) and stack._health(state["info"], old):
            return old
        if pid_alive(old.pid):
            stop_group(old)
        env = stack._process_env(dict(os.environ), stack.stack_env(state["info"]))
        log = Path(old.log).with_name(f"{name}.restart-{int(time.time() * 1000)}.log")
        proc = spawn(name, old.argv, env=env, cwd=stack.REPO_ROOT, log=log, port=old.port)
        _record(state_dir, proc)
        deadline = time.monotonic() + timeout_s
        while not stack._health(state["info"], proc):
            if not pid_alive(proc.pid):
                raise FaultError(f"{name} exited on restart; log {log}")
            if time.monotonic() > deadline:
                raise FaultError(f"{name} not healthy {timeout_s:.0f}s after restart; log {log}")
            time.sleep(0.1)
        return proc


@contextlib.contextmanager
def stopped(state_dir: str | Path, *names: str) -> Iterator[None]:
    """Run the body with ``names`` stopped; they are started again afterwards, whatever happens."""
    for name in names:
        _check(name)
    try:
        for name in names:
            stop(state_dir, name)
        yield
    finally:
        failures = []
        for name in names:
            try:
                start(state_dir, name)
            except FaultError as exc:
                failures.append(str(exc))
        if failures:
            raise FaultError("; ".join(failures))


@contextlib.contextmanager
def paused(state_dir: str | Path, name: str) -> Iterator[None]:
    """Run the body with component ``name`` frozen (SIGSTOP on its process group): its port still
    accepts connections but nothing answers, as a hung provider does. SIGCONT in ``finally``."""
    import signal

    proc = _find(_state(Path(state_dir).resolve()), name)
    os.killpg(proc.pgid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(proc.pgid, signal.SIGCONT)


__all__ = ["RESTARTABLE", "FaultError", "is_running", "paused", "start", "stop", "stopped"]

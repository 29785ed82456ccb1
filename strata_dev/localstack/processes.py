"""Starting, watching and stopping the local stack's processes.

Every component runs in a process group of its own (``start_new_session``), so that stopping it
means signalling the group: a launcher script, the JVM it execs, a gunicorn arbiter and its
workers all go together. Liveness is read from ``/proc`` and a zombie counts as gone, because a
detached stack's processes are reaped by whoever inherits them, not by the ``up`` that started
them.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Proc:
    """One started component, as recorded in the state file."""

    name: str
    pid: int
    pgid: int
    port: int
    log: str
    argv: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["argv"] = list(self.argv)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Proc:
        return cls(
            name=str(data["name"]),
            pid=int(data["pid"]),
            pgid=int(data["pgid"]),
            port=int(data.get("port") or 0),
            log=str(data.get("log") or ""),
            argv=tuple(str(a) for a in data.get("argv") or ()),
        )


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that were free a moment ago (all held open together)."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            sockets.append(sock)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for sock in sockets:
            sock.close()


def gunicorn_runtime_env(name: str, parent: str | Path) -> dict[str, str]:
    """An ``XDG_RUNTIME_DIR`` of its own for one functions-framework server: ``parent/<name>``.

    gunicorn (25.1 and later) binds a control socket at ``$XDG_RUNTIME_DIR/gunicorn.ctl``, else at
    ``~/.gunicorn/gunicorn.ctl``: every function server of every stack on the machine would contend
    for that one path, and each loser logs a plain-text "Address already in use" line. A short
    directory per server (a Unix socket path must stay under 108 bytes) keeps them apart.
    ``parent`` belongs to the caller, who removes it once the servers stop: the stack's
    ``runtime_dir`` (removed by ``down``), or the temporary one of :func:`gunicorn_runtime`.
    """
    safe = "".join(c if c.isalnum() else "-" for c in name)
    path = Path(parent) / safe
    path.mkdir(parents=True, exist_ok=True)
    return {"XDG_RUNTIME_DIR": str(path)}


@contextlib.contextmanager
def gunicorn_runtime(name: str) -> Iterator[dict[str, str]]:
    """:func:`gunicorn_runtime_env` for one server started outside a stack: the directory is made
    under a new temporary one, and both are removed when the block ends (the server stopped first)."""
    with tempfile.TemporaryDirectory(prefix="strata-rt-", ignore_cleanup_errors=True) as parent:
        yield gunicorn_runtime_env(name, parent)


def spawn(name: str, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log: Path, port: int) -> Proc:
    """Start ``argv`` detached, in a new session and process group, output to ``log`` (truncated)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        child = subprocess.Popen(  # noqa: S603 - argv is built by the stack, never from user input
            list(argv),
            cwd=str(cwd),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    # Popen's object would warn about a still-running child when collected; we track it by pid.
    child.returncode = 0
    return Proc(name=name, pid=child.pid, pgid=child.pid, port=port, log=str(log), argv=tuple(argv))


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, pgid, ...), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name is in parentheses and may contain spaces; fields follow the last ')'.
    return raw[raw.rindex(")") + 2 :].split()


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, pgid) of ``pid`` from /proc, or None when it does not exist."""
    fields = _stat_fields(pid)
    return None if fields is None else (fields[0], int(fields[2]))


def detached_descendants(pid: int) -> list[int]:
    """Live descendants of ``pid`` that lead process groups other than its own (children a
    launcher started detached, e.g. firebase-tools' emulators)."""
    table: dict[int, tuple[str, int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None:
                table[int(entry)] = (fields[0], int(fields[1]), int(fields[2]))
    own = table.get(pid, ("", 0, pid))[2]
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, (state, ppid, pgid) in table.items():
            if ppid == parent and state not in {"Z", "X"}:
                frontier.append(child)
                if pgid == child and pgid != own:
                    found.append(child)
    return sorted(found)


def pid_alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] not in {"Z", "X"}


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        st = _stat(int(entry))
        if st is not None and st[1] == pgid and st[0] not in {"Z", "X"}:
            members.append(int(entry))
    return members


def _reap(pids: Iterable[int]) -> None:
    """Collect exit statuses of our own children (no-op for processes we did not start)."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def stop_group(proc: Proc, *, grace_s: float = 5.0) -> bool:
    """SIGTERM the component's group, SIGKILL what is left after ``grace_s``; True when none remain."""
    if not group_members(proc.pgid):
        _reap([proc.pid])
        return True
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap([proc.pid])
        if not group_members(proc.pgid):
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pgid, signal.SIGKILL)
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        _reap([proc.pid])
        if not group_members(proc.pgid):
            return True
        time.sleep(0.05)
    return False


def stop_child(proc: subprocess.Popen[Any], *, grace_s: float = 10.0) -> None:
    """Stop one child this process started (not a group: :func:`stop_group`): SIGTERM, then SIGKILL
    if it has not exited after ``grace_s``, and collect its exit status either way."""
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def http_responds(url: str, *, timeout_s: float = 1.0, want_2xx: bool = False) -> bool:
    """True when something answers HTTP at ``url`` (any status, or 2xx if ``want_2xx``)."""
    rest = url.split("://", 1)[-1]
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.partition(":")
    conn = http.client.HTTPConnection(host, int(port or 80), timeout=timeout_s)
    try:
        conn.request("GET", "/" + path)
        status = conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()
    return 200 <= status < 300 if want_2xx else True


def tcp_listening(port: int, *, timeout_s: float = 0.5) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def log_tail(path: str, lines: int = 20) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])

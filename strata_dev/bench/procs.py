"""CPU seconds of the local stack's processes, read from ``/proc`` (Linux).

A benchmark on a 2-core machine is mostly waiting for a core, so wall time alone cannot say which
process did the work. These helpers take the user + system CPU time of a process and everything
it started (a function server's workers, the emulator's JVM threads), so a figure can be split
CPU second by CPU second across the emulators, the functions and the benchmark's own process.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a server may serve from a forked worker)."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return out


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of ``pid``'s process tree so far (0 for a process gone)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for member in tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


class CpuMeter:
    """CPU seconds used by each named process (and this one, ``bench``) between ``start`` and ``stop``."""

    def __init__(self, processes: dict[str, int]) -> None:
        self.processes = processes
        self._started: dict[str, float] = {}
        self.used: dict[str, float] = {}

    def _now(self) -> dict[str, float]:
        now = {name: cpu_seconds(pid) for name, pid in self.processes.items()}
        now["bench"] = time.process_time()
        return now

    def start(self) -> CpuMeter:
        self._started = self._now()
        return self

    def stop(self) -> dict[str, float]:
        now = self._now()
        self.used = {name: round(now[name] - self._started.get(name, 0.0), 3) for name in now}
        return self.used

    def per(self, count: int) -> dict[str, float]:
        """Milliseconds of CPU per unit of work, largest first, for the processes that used any."""
        rows = {name: round(1000 * seconds / count, 2) for name, seconds in self.used.items() if seconds > 0}
        return dict(sorted(rows.items(), key=lambda kv: -kv[1]))

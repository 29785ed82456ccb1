"""The local stand-in for Cloud Scheduler: calls the scheduled entry points on their crons.

The crons are the ones Terraform declares (``consolidation_schedule`` and
``outbox_sweep_schedule`` in ``infra/terraform/variables.tf``), so the local stack runs on the
same cadence as a deployment; if the file or a variable is missing the documented defaults apply.
On each due minute (in ``scheduler_time_zone``) the tick POSTs ``{"mode": "fanout"}`` to the consolidate function and
publishes ``{"sweep": true}`` to the projection topic. ``STRATA_TICK_SECONDS=N`` replaces both
crons with a fixed N-second interval (tests use it); the functions read the same variable as the
consolidation interval, so a write's task is due one tick later (``core/services/scheduling.py``). A failed call is logged and retried on the
next due time; the loop never dies of it. A job ``strata scheduler pause`` paused (its
``scheduler_jobs/{name}`` document in the emulator) is skipped until ``resume``.

Run: ``python -m strata_dev.localstack.tick [--variables infra/terraform/variables.tf]`` with the
stack's environment.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

log = logging.getLogger("strata.tick")

DEFAULT_SCHEDULES = {
    "consolidation_schedule": "*/10 * * * *",
    "outbox_sweep_schedule": "*/5 * * * *",
}
DEFAULT_TIME_ZONE = "Etc/UTC"
_TIME_ZONE_VARIABLE = "scheduler_time_zone"

_FIELD_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_NAMES = {
    3: {m: i for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)},
    4: {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])},
}


def _value(text: str, index: int) -> int:
    names = _NAMES.get(index, {})
    return names[text.lower()] if text.lower() in names else int(text)


def _parse_field(text: str, index: int) -> frozenset[int]:
    low, high = _FIELD_RANGES[index]
    out: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(f"bad step in cron field {text!r}")
        if base == "*":
            start, end = low, high
        elif "-" in base:
            a, b = base.split("-", 1)
            start, end = _value(a, index), _value(b, index)
        else:
            start = _value(base, index)
            end = high if step_text else start
        if not (low <= start <= high and low <= end <= high and start <= end):
            raise ValueError(f"cron field {text!r} out of range {low}-{high}")
        out.update(range(start, end + 1, step))
    if index == 4 and 7 in out:  # both 0 and 7 mean Sunday
        out = (out - {7}) | {0}
    return frozenset(out)


@dataclass(frozen=True)
class Cron:
    """A standard five-field cron expression (minute hour day-of-month month day-of-week)."""

    text: str
    minute: frozenset[int]
    hour: frozenset[int]
    day: frozenset[int]
    month: frozenset[int]
    weekday: frozenset[int]
    day_any: bool
    weekday_any: bool

    @classmethod
    def parse(cls, text: str) -> Cron:
        fields = text.split()
        if len(fields) != 5:
            raise ValueError(f"cron needs 5 fields, got {text!r}")
        minute, hour, day, month, weekday = (_parse_field(f, i) for i, f in enumerate(fields))
        return cls(text, minute, hour, day, month, weekday, day_any=fields[2] == "*", weekday_any=fields[4] == "*")

    def matches(self, when: dt.datetime) -> bool:
        if when.minute not in self.minute or when.hour not in self.hour or when.month not in self.month:
            return False
        day_ok = when.day in self.day
        weekday_ok = (when.isoweekday() % 7) in self.weekday
        if self.day_any or self.weekday_any:  # cron: when both are restricted, either may match
            return day_ok and weekday_ok
        return day_ok or weekday_ok


def _unquote(text: Any) -> str:
    return str(text).strip().strip('"')


def load_schedules(variables_tf: Path) -> dict[str, str]:
    """The two crons and their time zone (``scheduler_time_zone``) from Terraform's variables file.

    Defaults stand in for whatever is missing.
    """
    schedules = dict(DEFAULT_SCHEDULES)
    schedules[_TIME_ZONE_VARIABLE] = DEFAULT_TIME_ZONE
    try:
        import hcl2

        with open(variables_tf) as fh:
            parsed = hcl2.load(fh)
    except FileNotFoundError:
        log.info("%s not found; using default schedules", variables_tf)
        return schedules
    except Exception as exc:  # a half-written file must not stop the stack
        log.warning("cannot parse %s (%s); using default schedules", variables_tf, exc)
        return schedules
    for block in parsed.get("variable", []):
        for name, body in block.items():
            key = _unquote(name)
            if key in schedules and isinstance(body, dict) and body.get("default"):
                schedules[key] = _unquote(body["default"])
    return schedules


class Jobs:
    """The two scheduled calls, against the stack named by the environment."""

    def __init__(self) -> None:
        from core import config

        self.settings = config.load()
        self._publisher: Any = None

    def consolidate_fanout(self) -> None:
        import httpx

        url = self.settings.consolidate_url
        if not url:
            log.error("STRATA_CONSOLIDATE_URL is not set; skipping consolidation fan-out")
            return
        resp = httpx.post(url, json={"mode": "fanout"}, timeout=120.0)
        level = logging.INFO if resp.is_success else logging.ERROR
        log.log(level, "consolidate fanout -> %s %s", resp.status_code, resp.text[:200])

    def outbox_sweep(self) -> None:
        from google.cloud.pubsub import PublisherClient

        if self._publisher is None:
            self._publisher = PublisherClient()
        topic = self._publisher.topic_path(self.settings.project_id, self.settings.projection_topic)
        message_id = self._publisher.publish(topic, json.dumps({"sweep": True}).encode()).result(timeout=30)
        log.info("published sweep to %s (message %s)", topic, message_id)


def _run(name: str, job: Callable[[], None], gate: Any = None) -> None:
    """Call one due job, unless ``strata scheduler pause`` paused it (``gate``: the jobs'
    :class:`~strata_dev.scheduled_jobs.JobSwitches`)."""
    try:
        if gate is not None:
            from strata_dev.scheduled_jobs import for_tick_key

            job_name = for_tick_key(name)
            if gate.paused(job_name):
                gate.skipped(job_name)
                log.info("scheduled job %s is paused; skipped", job_name)
                return
        job()
        if gate is not None:
            gate.attempted(job_name)
    except Exception:
        log.exception("scheduled job %s failed; will run again when next due", name)


def run_loop(jobs: Jobs, schedules: dict[str, str], every_s: float | None, stop: threading.Event,
             gate: Any = None) -> None:
    calls: dict[str, Callable[[], None]] = {
        "consolidation_schedule": jobs.consolidate_fanout,
        "outbox_sweep_schedule": jobs.outbox_sweep,
    }
    if every_s:
        log.info("fixed interval: every %.1fs", every_s)
        while not stop.wait(every_s):
            for name, call in calls.items():
                _run(name, call, gate)
        return
    zone = ZoneInfo(schedules.get(_TIME_ZONE_VARIABLE, DEFAULT_TIME_ZONE))
    crons = {name: Cron.parse(schedules[name]) for name in calls}
    log.info("crons (%s): %s", zone, {n: c.text for n, c in crons.items()})
    while True:
        now = dt.datetime.now(zone)
        next_minute = (now + dt.timedelta(minutes=1)).replace(second=0, microsecond=0)
        if stop.wait((next_minute - now).total_seconds()):
            return
        for name, cron in crons.items():
            if cron.matches(next_minute):
                _run(name, calls[name], gate)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strata_dev.localstack.tick", description=__doc__.splitlines()[0])
    parser.add_argument("--variables", type=Path, default=Path("infra/terraform/variables.tf"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from core import config

    every = config.load().tick_seconds or None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    run_loop(Jobs(), load_schedules(args.variables), every, stop, gate=_gate())
    return 0


def _gate() -> Any:
    """The pause switches of ``strata scheduler`` (in the stack's Firestore emulator)."""
    from core import config
    from core.adapters.firestore.client import firestore_client
    from strata_dev.scheduled_jobs import JobSwitches

    settings = config.load()
    return JobSwitches(firestore_client(settings)) if settings.firestore_emulator_host else None


if __name__ == "__main__":
    sys.exit(main())

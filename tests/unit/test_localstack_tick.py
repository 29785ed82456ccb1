"""The scheduler stand-in's cron matching, its reading of Terraform's variables and its pause switches."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pytest

from strata_dev.localstack.stack import REPO_ROOT
from strata_dev.localstack.tick import DEFAULT_SCHEDULES, Cron, _run, load_schedules


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


@pytest.mark.parametrize(
    ("cron", "when", "due"),
    [
        ("*/10 * * * *", "2026-03-02T10:20:00", True),
        ("*/10 * * * *", "2026-03-02T10:25:00", False),
        ("*/5 * * * *", "2026-03-02T10:25:00", True),
        ("0 3 * * *", "2026-03-02T03:00:00", True),
        ("0 3 * * *", "2026-03-02T04:00:00", False),
        ("15,45 8-10 * * *", "2026-03-02T09:45:00", True),
        ("15,45 8-10 * * *", "2026-03-02T11:15:00", False),
        ("0 0 * * mon", "2026-03-02T00:00:00", True),  # a Monday
        ("0 0 * * 0", "2026-03-01T00:00:00", True),  # Sunday as 0 ...
        ("0 0 * * 7", "2026-03-01T00:00:00", True),  # ... and as 7
        ("0 0 1 * 1", "2026-03-02T00:00:00", True),  # both restricted: either matches
        ("0 0 1 * 1", "2026-03-03T00:00:00", False),
        ("0 0 1 jan *", "2026-01-01T00:00:00", True),
    ],
)
def test_cron_matches(cron: str, when: str, due: bool) -> None:
    assert Cron.parse(cron).matches(_at(when)) is due


@pytest.mark.parametrize("bad", ["* * * *", "61 * * * *", "*/0 * * * *", "5-1 * * * *"])
def test_bad_crons_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        Cron.parse(bad)


def test_schedules_come_from_terraform(tmp_path: Path) -> None:
    tf = tmp_path / "variables.tf"
    tf.write_text(
        'variable "consolidation_schedule" {\n  type = string\n  default = "0 */2 * * *"\n}\n'
        'variable "scheduler_time_zone" {\n  type = string\n  default = "Europe/Paris"\n}\n'
    )
    schedules = load_schedules(tf)
    assert schedules["consolidation_schedule"] == "0 */2 * * *"
    assert schedules["outbox_sweep_schedule"] == DEFAULT_SCHEDULES["outbox_sweep_schedule"]
    assert schedules["scheduler_time_zone"] == "Europe/Paris"


def test_missing_or_broken_variables_fall_back_to_defaults(tmp_path: Path) -> None:
    assert load_schedules(tmp_path / "absent.tf")["consolidation_schedule"] == "*/10 * * * *"
    broken = tmp_path / "broken.tf"
    broken.write_text('variable "consolidation_schedule" {\n  default = \n')
    assert load_schedules(broken)["outbox_sweep_schedule"] == "*/5 * * * *"


def _declared_defaults(tf: Path) -> dict[str, str]:
    """``variable "NAME" { ... default = "VALUE" }`` pairs, read here with a regex (not the loader
    under test)."""
    import re

    pattern = re.compile(r'variable\s+"(\w+)"\s*\{[^}]*?default\s*=\s*"([^"]*)"', re.S)
    return dict(pattern.findall(tf.read_text()))


def test_the_repository_crons_parse_and_fire() -> None:
    tf = REPO_ROOT / "infra/terraform/variables.tf"
    declared = _declared_defaults(tf)
    schedules = load_schedules(tf)
    crons = {name: text for name, text in schedules.items() if name.endswith("_schedule")}
    assert set(crons) == {"consolidation_schedule", "outbox_sweep_schedule"}
    week = [_at("2026-03-02T00:00:00") + dt.timedelta(minutes=m) for m in range(7 * 24 * 60)]
    for name, text in crons.items():
        assert text == declared[name], f"{name}: loader read {text!r}, Terraform declares {declared[name]!r}"
        cron = Cron.parse(text)
        assert any(cron.matches(t) for t in week), f"{name} ({text}) never fires in a week"


class _Gate:
    """Stands in for the jobs' pause switches (:class:`strata_dev.scheduled_jobs.JobSwitches`)."""

    def __init__(self, paused: set[str]) -> None:
        self.paused_jobs = paused
        self.seen: list[tuple[str, str]] = []

    def paused(self, name: str) -> bool:
        return name in self.paused_jobs

    def skipped(self, name: str) -> None:
        self.seen.append(("skipped", name))

    def attempted(self, name: str) -> None:
        self.seen.append(("attempted", name))


def test_a_paused_job_is_skipped_and_a_run_one_recorded_under_its_terraform_name() -> None:
    calls: list[str] = []
    gate = _Gate({"strata-outbox-sweep"})
    _run("outbox_sweep_schedule", lambda: calls.append("sweep"), gate)
    _run("consolidation_schedule", lambda: calls.append("fanout"), gate)
    assert calls == ["fanout"]
    assert gate.seen == [("skipped", "strata-outbox-sweep"), ("attempted", "strata-consolidation-fanout")]


def _imports(path: Path) -> set[str]:
    """Every module a file imports, the lazy imports inside functions included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_tick_and_the_scheduler_command_are_no_circle() -> None:
    # The job names and their pause switches sit below both (strata_dev/scheduled_jobs.py): the
    # command imports the tick, the tick never imports the command.
    tick_imports = _imports(REPO_ROOT / "strata_dev/localstack/tick.py")
    below = _imports(REPO_ROOT / "strata_dev/scheduled_jobs.py")
    assert "strata_dev.scheduler" not in tick_imports and "strata_dev.scheduled_jobs" in tick_imports
    assert not {"strata_dev.scheduler", "strata_dev.localstack.tick", "strata_dev.localstack"} & below

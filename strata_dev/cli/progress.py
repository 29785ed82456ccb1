"""Progress of a long command on stderr: a bar with the total and the time left.

``bar(label, total, json_mode=...)`` is a context manager whose value has ``advance(n, note=)`` and
``update(completed=, total=, note=)``. It draws (rich's bar, count of total, elapsed, time left)
only when stderr is a terminal and the command was not asked for ``--json``: under a pipe, in CI, in
a test or for a machine reader it does nothing at all, so stdout and stderr stay as they were.
``total`` may be ``None`` (not known yet: a spinner and the count) and set later with ``update``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Bar(Protocol):
    enabled: bool

    def advance(self, n: float = 1, note: str | None = None) -> None: ...

    def update(self, *, completed: float | None = None, total: float | None = None,
               note: str | None = None) -> None: ...


class _Off:
    """What ``bar`` gives when it must not draw: every call does nothing."""

    enabled = False

    def advance(self, n: float = 1, note: str | None = None) -> None:
        return None

    def update(self, *, completed: float | None = None, total: float | None = None,
               note: str | None = None) -> None:
        return None


class _Rich:
    enabled = True

    def __init__(self, progress: Any, task: Any, label: str) -> None:
        self._progress = progress
        self._task = task
        self._label = label

    def _description(self, note: str | None) -> dict[str, str]:
        return {"description": f"{self._label}: {note}" if note else self._label}

    def advance(self, n: float = 1, note: str | None = None) -> None:
        self._progress.update(self._task, advance=n, **(self._description(note) if note is not None else {}))

    def update(self, *, completed: float | None = None, total: float | None = None,
               note: str | None = None) -> None:
        changes: dict[str, Any] = self._description(note) if note is not None else {}
        if completed is not None:
            changes["completed"] = completed
        if total is not None:
            changes["total"] = total
        self._progress.update(self._task, **changes)


def wanted(json_mode: bool, stream: Any = None) -> bool:
    """Whether a bar may be drawn: stderr (or ``stream``) is a terminal and not ``--json``."""
    stream = stream if stream is not None else sys.stderr
    try:
        return not json_mode and bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


@contextmanager
def bar(label: str, total: float | None = None, *, json_mode: bool = False, stream: Any = None) -> Iterator[Bar]:
    """A progress bar on stderr for the duration of the ``with`` block (see the module docstring)."""
    if not wanted(json_mode, stream):
        yield _Off()
        return
    try:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
    except ImportError:  # the ops extra is not installed: no bar, the command runs the same
        yield _Off()
        return
    console = Console(file=stream if stream is not None else sys.stderr)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), console=console,
                  transient=True, refresh_per_second=4, redirect_stdout=False) as progress:
        # stdout stays the command's own (results are never routed through the bar's console); a
        # slow refresh keeps the drawing thread's CPU out of what a benchmark times.
        yield _Rich(progress, progress.add_task(label, total=total), label)


def track(items: Iterable[T], label: str, total: float | None = None, *, json_mode: bool = False) -> Iterator[T]:
    """Each of ``items``, advancing a bar (``total``: ``len(items)`` when it has one)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with bar(label, total, json_mode=json_mode) as shown:
        for item in items:
            yield item
            shown.advance()

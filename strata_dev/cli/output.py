"""The one output rule of the ``strata`` command.

By default a command prints for people: listings as a table, a result as ``key  value`` lines.
With ``--json`` it prints for machines: one JSON object per line, each listed record first and the
result last. Progress and warnings go to stderr either way, so stdout stays parseable.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

RULE = ("output: a table or `key  value` lines for people by default; with --json one JSON object per "
        "line (the records of a listing first, the result last). Progress and warnings go to stderr.")

EXIT_CODES = (
    ("0", "done: the command did what it says and found nothing wrong"),
    ("1", "done, with a finding: drift (doctor), events left or dead (outbox drain), a benchmark or "
          "check that failed, a switch that held the work back"),
    ("2", "usage error: bad arguments or an unknown job (argparse also exits 2)"),
    ("3", "stack status: no stack, or a component of it is not up"),
    ("130", "interrupted (Ctrl-C)"),
)


def exit_codes_epilog() -> str:
    width = max(len(code) for code, _ in EXIT_CODES)
    return "exit codes:\n" + "\n".join(f"  {code.rjust(width)}  {meaning}" for code, meaning in EXIT_CODES)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, separators=(",", ":"), default=str)
    return str(value)


def flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys (``a.b``); lists stay whole."""
    out: dict[str, Any] = {}
    for key, inner in value.items():
        name = f"{prefix}{key}"
        if isinstance(inner, Mapping) and inner:
            out.update(flatten(inner, name + "."))
        else:
            out[name] = inner
    return out


class Output:
    """Records and a result, printed by the rule above (``json_mode`` is the ``--json`` flag)."""

    def __init__(self, json_mode: bool, stream: TextIO | None = None) -> None:
        self.json_mode = json_mode
        self.stream = stream or sys.stdout
        self._rows: list[Mapping[str, Any]] = []
        self._title: str | None = None

    def record(self, row: Mapping[str, Any], title: str | None = None) -> None:
        """One record of a listing: a JSON line now, or a table row at :meth:`close`."""
        if self.json_mode:
            print(json.dumps(row, default=str), file=self.stream, flush=True)
        else:
            self._title = self._title or title
            self._rows.append(row)

    def result(self, value: Mapping[str, Any], title: str | None = None) -> None:
        """The command's result: the last JSON line, or ``key  value`` lines (nested keys dotted)."""
        self.close()
        if self.json_mode:
            print(json.dumps(value, default=str), file=self.stream, flush=True)
            return
        flat = flatten(value)
        if title:
            print(title, file=self.stream)
        width = max((len(k) for k in flat), default=0)
        for key, inner in flat.items():
            print(f"  {key.ljust(width)}  {_cell(inner)}", file=self.stream)
        self.stream.flush()

    def close(self) -> None:
        """Print the table of records gathered in people mode (nothing in JSON mode)."""
        if self.json_mode or not self._rows:
            return
        rows = [flatten(r) for r in self._rows]
        columns: list[str] = []
        for row in rows:
            columns += [c for c in row if c not in columns]
        cells = [[_cell(row.get(c)) for c in columns] for row in rows]
        widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
        if self._title:
            print(self._title, file=self.stream)
        print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(), file=self.stream)
        for r in cells:
            print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip(), file=self.stream)
        self.stream.flush()
        self._rows = []
        self._title = None

"""``strata bench NAME``: run one benchmark (or all) on the local stack; one result each (``--json``: a JSON object)."""

from __future__ import annotations

import sys
import time
import traceback
from typing import Any

from strata_dev.cli.output import Output

NAMES = ("ingest", "consolidate", "schedule", "project", "read", "recall", "doctor")
# Run by name only (not part of ``all``): longer runs with their own figures.
EXTRA = ("scale", "startup", "cost", "auth", "extract", "pools")
# In process, on the unit tests' in-memory fakes: no local stack.
OFFLINE = ("quality",)


def _module(name: str) -> Any:
    import importlib

    return importlib.import_module(f"strata_dev.bench.{name}")


def _plot(args: Any, results: list[dict[str, Any]]) -> None:
    """``--plot FILE``: the chart of these results (strata_dev/bench/plots.py), or why there is none."""
    from pathlib import Path

    from strata_dev.bench import plots

    drawn = plots.draw(args.name, results, Path(args.plot))
    sys.stderr.write(f"bench {args.name}: chart written to {drawn}\n" if drawn else
                     f"bench {args.name}: no chart (matplotlib missing, or nothing to draw in these results)\n")


def main(args: Any) -> int:
    if getattr(args, "replot", None):  # a saved run's chart again: nothing is run
        from strata_dev.bench import plots

        if not getattr(args, "plot", None):
            sys.stderr.write("bench: --replot needs --plot FILE\n")
            return 2
        _plot(args, plots.load(args.replot))
        return 0
    if args.name in OFFLINE:
        return int(_module(args.name).main(args))
    from strata_dev.bench import harness

    names = NAMES if args.name == "all" else (args.name,)
    failed = 0
    results: list[dict[str, Any]] = []
    overall = time.monotonic()
    with harness.local_stack(latency=bool(getattr(args, "rtt_ms", None))) as info:
        args.stack_info = info
        for name in names:
            started = time.monotonic()
            try:
                result = _module(name).run(args)
            except Exception as exc:  # noqa: BLE001 - report and go on with the next benchmark
                traceback.print_exc(file=sys.stderr)
                result = {"error": f"{type(exc).__name__}: {exc}"}
                failed += 1
            full = {"benchmark": name, "quick": bool(args.quick), "size": args.size,
                    **({"rtt_ms": args.rtt_ms} if getattr(args, "rtt_ms", None) else {}), **result,
                    "wall_seconds": round(time.monotonic() - started, 2)}
            results.append(full)
            Output(bool(getattr(args, "json", False))).result(full, title=f"bench {name}")
    if len(names) > 1:
        sys.stderr.write(f"bench all: {len(names) - failed} of {len(names)} ran, "
                         f"{time.monotonic() - overall:.1f} s in total\n")
    if getattr(args, "plot", None) and args.name != "scale":  # scale draws its own curves as it goes
        _plot(args, results)
    return 1 if failed else 0

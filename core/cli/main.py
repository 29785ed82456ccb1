"""The ``strata`` command: the local stack and operations on a stack or a real project.

Operations read their settings from the environment; when no emulator variables are set and a
local stack is running (state in ``.strata/stack``), they talk to that stack.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from core.cli import stack_cmd


def _use_running_stack() -> None:
    from core import config

    settings = config.load()
    if settings.firestore_emulator_host or settings.real_project:
        return
    from core.localstack import stack

    state = stack.status()
    info = state.get("info") if isinstance(state, dict) else None
    if info:
        os.environ.update(stack.stack_env(info))


def _context() -> Any:
    _use_running_stack()
    from core.bootstrap import Context

    return Context()


def _progress(label: str) -> Any:
    """A one-line progress indicator on stderr (only on a terminal)."""
    def show(report: Any) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r{label}: {report.acknowledged} acknowledged, {report.retried} retrying, "
                             f"{report.dead} dead")
            sys.stderr.flush()

    return show


def cmd_consolidate(args: argparse.Namespace) -> int:
    from core.services import consolidation

    ctx = _context()
    uids = [args.uid] if args.uid else consolidation.users_with_pending(ctx)
    totals: dict[str, int] = {}
    for index, uid in enumerate(uids, 1):
        summary = consolidation.run_pass(ctx, uid)
        for route, count in summary["routes"].items():
            totals[route] = totals.get(route, 0) + count
        print(json.dumps(summary))
        if sys.stderr.isatty():
            sys.stderr.write(f"\rconsolidated {index}/{len(uids)} users")
    print(json.dumps({"users": len(uids), "routes": totals}))
    return 0


def cmd_outbox_drain(args: argparse.Namespace) -> int:
    from core.services import projection

    ctx = _context()
    uids = [args.uid] if args.uid else projection.users_with_due_events(ctx)
    total = projection.DrainReport()
    for uid in uids:
        total.add(projection.drain_user(ctx, uid, progress=_progress(f"draining {uid}")))
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print(json.dumps(total.as_dict()))
    return 1 if total.dead else 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from core.services import reads

    ctx = _context()
    items, _ = reads.list_memories(ctx, args.uid, reads.ListQuery(include_archive=True, limit=500))
    by_layer: dict[str, list[Any]] = {}
    for item in items:
        by_layer.setdefault(item.layer, []).append(item)
    for layer in ("short_term", "long_term", "archive"):
        rows = by_layer.get(layer, [])
        print(f"\n{layer} ({len(rows)})")
        print(f"  {'id':<28} {'state':<10} {'route':<8} {'flags':<22} content")
        for item in rows:
            flags = ",".join(f for f, on in (("restricted", item.restricted), ("expired", False),
                                             (item.subject_attribution, item.subject_attribution != "user")) if on)
            print(f"  {item.id:<28} {item.processing_state:<10} {item.route or '-':<8} {flags:<22} {item.content[:70]}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    _use_running_stack()
    import core.bench.run

    return core.bench.run.main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="strata", description="Strata memory service tools")
    sub = parser.add_subparsers(dest="command", required=True)
    stack_cmd.register(sub)
    p = sub.add_parser("consolidate", help="run a consolidation pass now and print routes per kind")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--uid")
    group.add_argument("--all", action="store_true")
    p.set_defaults(func=cmd_consolidate)
    p = sub.add_parser("outbox", help="projection outbox operations")
    outbox = p.add_subparsers(dest="outbox_command", required=True)
    d = outbox.add_parser("drain", help="drain until empty and report counts")
    d.add_argument("--uid")
    d.set_defaults(func=cmd_outbox_drain)
    p = sub.add_parser("inspect", help="memories per layer, as a table")
    p.add_argument("--uid", required=True)
    p.set_defaults(func=cmd_inspect)
    p = sub.add_parser("bench", help="benchmarks (JSON, ratios against an in-run baseline)")
    p.add_argument("name", choices=["ingest", "consolidate", "project", "read", "recall", "all"])
    p.add_argument("--size", type=int, default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--data", default=None, help="LoCoMo-format JSON file for the recall benchmark")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

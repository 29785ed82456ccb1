"""The ``strata`` command: the local stack and operations on a stack or a real project.

Operations read their settings from the environment; when no emulator variables are set and a
local stack is running (state in ``.strata/stack``), they talk to that stack.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from typing import Any

from strata_dev.cli import progress, server_key_cmd, stack_cmd, uid_hash_cmd
from strata_dev.cli.common import Subparsers as _Subparsers
from strata_dev.cli.common import context as _context
from strata_dev.cli.common import use_running_stack as _use_running_stack
from strata_dev.cli.output import RULE, Output, exit_codes_epilog


def _count(items: Any) -> int:
    return sum(1 for _ in items)


def cmd_consolidate(args: argparse.Namespace) -> int:
    from core.services import consolidation, scheduling

    ctx = _context()
    # Every user the schedule registry holds as pending, then any the item scan finds (items that
    # predate the registry).
    uids = [args.uid] if args.uid else list(dict.fromkeys(
        scheduling.pending_users(ctx) + consolidation.users_with_pending(ctx)))
    totals: dict[str, int] = {}
    disabled = False
    out = Output(args.json)
    with progress.bar("consolidating users", len(uids), json_mode=args.json) as shown:
        for uid in uids:
            summary = consolidation.run_pass(ctx, uid)
            disabled = disabled or summary.get("skipped") == "consolidation_disabled"
            for route, count in summary["routes"].items():
                totals[route] = totals.get(route, 0) + count
            out.record(summary, title="passes")
            shown.advance(note=f"{sum(totals.values())} items routed")
    out.result({"users": len(uids), "routes": totals}, title="consolidation")
    if disabled:
        sys.stderr.write("strata consolidate: consolidation_disabled is on; nothing was routed\n")
    return 1 if disabled else 0


def cmd_outbox_drain(args: argparse.Namespace) -> int:
    """Drain until the outbox is empty, waiting out backoff for up to ``--max-wait`` seconds.

    Exits 0 only when nothing is left; otherwise it says how many events remain and when the
    earliest is due, and exits 1 (also when the ``projection_disabled`` switch holds them back).
    """
    from datetime import timedelta

    from core.services import projection

    ctx = _context()
    deadline = time.monotonic() + args.max_wait
    total = projection.DrainReport()
    left: dict[str, Any] = {}
    while True:
        uids = [args.uid] if args.uid else projection.users_with_due_events(ctx)
        skipped = set()
        with progress.bar("draining users", len(uids), json_mode=args.json) as shown:
            for uid in uids:
                report = projection.drain_user(ctx, uid, progress=lambda r: shown.update(
                    note=f"{r.acknowledged} acknowledged, {r.retried} retrying, {r.dead} dead"))
                total.add(report)
                if report.skipped:
                    skipped.add(report.skipped)
                shown.advance()
        total.skipped = ",".join(sorted(skipped)) or None
        horizon = ctx.now() + timedelta(seconds=projection.BACKOFF_MAX_S * 2 + args.max_wait)
        watch = [args.uid] if args.uid else projection.users_with_due_events(ctx, until=horizon)
        left = {uid: state for uid in watch if (state := projection.outbox_state(ctx, uid)).waiting or state.dead}
        waiting = [s for s in left.values() if s.waiting]
        if not waiting or "projection_disabled" in skipped:
            break
        due = min(s.next_due_at or ctx.now() for s in waiting)
        pause = max(1.0, (due - ctx.now()).total_seconds() + 0.5)
        if time.monotonic() + pause > deadline:
            break
        if progress.wanted(args.json):
            sys.stderr.write(f"waiting {pause:.0f}s for {sum(s.waiting for s in waiting)} events in backoff\n")
            sys.stderr.flush()
        time.sleep(pause)
    pending = sum(s.waiting for s in left.values())
    dead = sum(s.dead for s in left.values())
    dues = [s.next_due_at for s in left.values() if s.waiting and s.next_due_at]
    next_due = min(dues) if dues else None
    Output(args.json).result({**total.as_dict(), "remaining": {"pending": pending, "dead": dead},
                              "next_due_at": next_due.isoformat() if next_due else None,
                              "users_remaining": sorted(left)}, title="outbox drain")
    if pending:
        when = f"the earliest is due at {next_due.isoformat()}" if next_due else "none is due yet"
        reason = " (projection_disabled is on)" if total.skipped and "projection_disabled" in total.skipped else ""
        sys.stderr.write(f"strata outbox drain: {pending} events still pending{reason}; {when}; "
                         "run again or pass a larger --max-wait\n")
    if dead:
        sys.stderr.write(f"strata outbox drain: {dead} events are dead-lettered\n")
    return 1 if pending or dead or total.dead else 0


def _timestamp(value: str) -> datetime:
    """An ISO-8601 time for ``--since`` (a date alone means its midnight; no zone means UTC)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 time: {value!r} (e.g. 2026-11-30T22:00:00Z)") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def cmd_outbox_list(args: argparse.Namespace) -> int:
    """The dead-lettered events, one JSON object per line, then a summary line."""
    from core.services import redrive

    ctx = _context()
    count = 0
    out = Output(args.json)
    for event in redrive.dead_events(ctx, args.uid, args.since):
        count += 1
        out.record(event.as_dict(), title="dead-lettered events")
    out.result({"dead": count})
    return 0


def cmd_outbox_redrive(args: argparse.Namespace) -> int:
    """Dead events back to pending with a fresh attempt budget; each user's drain is nudged."""
    from core.services import redrive

    ctx = _context()
    with progress.bar("redriving dead events", json_mode=args.json) as shown:
        if shown.enabled:  # the total is a count of the dead events first (only for the bar)
            shown.update(total=_count(redrive.dead_events(ctx, args.uid, args.since)))
        report = redrive.redrive(ctx, args.uid, args.since, progress=lambda r: shown.update(
            completed=r.redriven + r.changed_meanwhile, note=f"{len(r.uids)} users"))
    Output(args.json).result(report.as_dict(), title="outbox redrive")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """Canonical state vs Typesense, the vector index and the graph; exits 1 on drift."""
    from core.services import doctor

    ctx = _context()
    with progress.bar("checking users", 1 if args.uid else None, json_mode=args.json) as shown:
        if shown.enabled and not args.uid:
            shown.update(total=_count(doctor.users(ctx)))
        report = doctor.run(ctx, args.uid, progress=lambda uid, r: shown.update(
            completed=r.users, note=f"{r.canonical} projectable memories, {len(r.findings)} findings"))
        shown.update(completed=report.users)
        if args.repair and report.drift:
            shown.update(note=f"enqueueing repairs for {len(report.findings)} findings")
            doctor.repair(ctx, report)
    if args.json:
        print(json.dumps(report.as_dict()))
    else:
        _print_doctor(report)
    return 1 if report.drift else 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    """Queue a provider's purge and re-projection per user; the drain does the writes."""
    from core.services import doctor, rebuild

    ctx = _context()
    with progress.bar(f"rebuilding {args.provider}", None if args.all else 1, json_mode=args.json) as shown:
        if shown.enabled and args.all:
            shown.update(total=_count(doctor.users(ctx)))
        report = rebuild.rebuild(ctx, args.provider, None if args.all else [args.uid], progress=lambda r: shown.update(
            completed=r.users + r.skipped_users, note=f"{r.enqueued} events enqueued"))
    Output(args.json).result(report.as_dict(), title=f"rebuild {args.provider}")
    sys.stderr.write(f"strata rebuild: {report.enqueued} events queued for the drain (nudged); "
                     "`strata outbox drain` waits for them, `strata doctor` checks the result\n")
    return 0


def _scheduled_jobs(name_prefix: str = "") -> Any:
    """Cloud Scheduler on a real project (``STRATA_REAL_PROJECT=1``), else the local stack's tick."""
    from core import config
    from strata_dev import scheduler

    settings = config.load()
    if settings.real_project:
        return scheduler.CloudJobs(settings.project_id, settings.region, name_prefix=name_prefix)
    ctx = _context()
    return scheduler.LocalJobs(ctx.client)


def cmd_scheduler(args: argparse.Namespace) -> int:
    """status | pause JOB | resume JOB | run JOB: one JSON line per job (the same on both backends)."""
    from strata_dev import scheduler

    jobs = _scheduled_jobs(args.name_prefix or "")
    try:
        if args.action == "status":
            rows = jobs.status()
        else:
            if not args.job:
                raise scheduler.UnknownJob(f"`strata scheduler {args.action}` needs a job: {', '.join(scheduler.JOBS)}")
            rows = [getattr(jobs, args.action)(args.job)]
    except scheduler.UnknownJob as exc:
        sys.stderr.write(f"strata scheduler: {exc}\n")
        return 2
    out = Output(args.json)
    for row in rows:
        out.record(row.as_dict(), title="scheduled jobs")
    out.close()
    return 0


def _print_doctor(report: Any) -> None:
    from rich.table import Table

    from core.services import doctor

    console = _stdout_console()
    summary = Table(title=f"{report.users} users · {report.canonical} projectable memories · {report.facts} graph facts")
    for column in ("provider", "rows", "missing", "extra", "stale"):
        summary.add_column(column, justify="left" if column == "provider" else "right")
    counts = report.counts()
    for provider in doctor.PROVIDERS:
        summary.add_row(provider, str(report.rows[provider]), *(str(counts[provider][k]) for k in ("missing", "extra", "stale")))
    console.print(summary)
    if report.findings:
        table = Table(title="drift")
        for column in ("provider", "kind", "uid", "memory_id", "provider_id", "reason"):
            table.add_column(column)
        for f in report.findings:
            table.add_row(f.provider, f.kind, f.uid, f.memory_id, f.provider_id, f.reason)
        console.print(table)
    if report.repairs:
        console.print(f"{report.repairs} repair events enqueued; run `strata outbox drain`, then doctor again")
    for uid in report.skipped_repairs:
        console.print(f"{uid}: account being deleted, nothing enqueued (the wipe purges its rows)")


def _stdout_console() -> Any:
    from rich.console import Console

    return Console(width=200 if not sys.stdout.isatty() else None)


def cmd_inspect(args: argparse.Namespace) -> int:
    from core.services import reads

    ctx = _context()
    items, _ = reads.list_memories(ctx, args.uid, reads.ListQuery(include_archive=True, limit=500))
    if args.json:
        out = Output(True)
        for item in items:
            out.record({"id": item.id, "layer": item.layer, "state": item.processing_state, "route": item.route,
                        "restricted": item.restricted, "subject": item.subject_attribution, "content": item.content})
        out.result({"uid": args.uid, "memories": len(items)})
        return 0
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


# The per-request delay `strata bench ... --rtt-ms` adds when given no value: docs/benchmarks.md,
# "Under network latency", says where the figure comes from.
DEFAULT_RTT_MS = 8.0


def cmd_model_replies_dump(args: argparse.Namespace) -> int:
    from pathlib import Path

    from strata_dev import model_replies

    docs = model_replies.conversations(args.conversations)
    if args.routing:
        _use_running_stack()  # else the routing run starts a private stack
    counts = model_replies.dump(docs, Path(args.out), routing_replies=Path(args.routing) if args.routing else None)
    Output(args.json).result({**counts, "out": args.out}, title="model requests written")
    return 0


def cmd_model_replies_missing(args: argparse.Namespace) -> int:
    from pathlib import Path

    from strata_dev import model_replies
    from strata_dev.localstack import model_replay

    docs = model_replies.conversations(args.conversations)
    out = Output(args.json)
    replies = Path(args.replies or model_replay.REPLIES)
    missing_dir = Path(args.missing_dir) if args.missing_dir else replies.parent / "model_replies_missing"
    rows = model_replies.missing(docs, replies, missing_dir)
    for row in rows:
        out.record(row, title="requests without a recorded reply")
    out.result({"missing": len(rows), "replies": str(replies), "missing_dir": str(missing_dir)},
               title="model replies")
    return 1 if rows else 0


def cmd_bench(args: argparse.Namespace) -> int:
    _use_running_stack()
    import strata_dev.bench.run

    return strata_dev.bench.run.main(args)


def cmd_setup(args: argparse.Namespace) -> int:
    _use_running_stack()
    from strata_dev import setup

    return setup.main(args)


def cmd_rules(args: argparse.Namespace) -> int:
    from strata_dev import rules

    argv = ["--app", args.app] if args.app else []
    argv += ["--out", args.out] if args.out else []
    argv += ["--check"] if args.check else []
    argv += ["--write-default"] if args.write_default else []
    argv += ["--json"] if args.json else []
    argv += ["--data-root", args.data_root] if args.data_root else []
    argv += ["--conversations-path", args.conversations_path] if args.conversations_path else []
    return rules.main(argv)


def cmd_smoke(args: argparse.Namespace) -> int:
    _use_running_stack()
    from strata_dev import smoke

    return smoke.main(args)


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("strata-memory-service")
    except metadata.PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def model_replay_default() -> Any:
    from strata_dev.localstack.model_replay import REPLIES

    return REPLIES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="strata", description="Strata memory service tools: the local stack, operations on a stack or a "
                                   "real project, and benchmarks.",
        epilog=f"{RULE}\n\n{exit_codes_epilog()}", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"strata {_version()}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="one JSON object per line instead of tables")
    sub = _Subparsers(parser.add_subparsers(dest="command", required=True), common)
    stack_cmd.register(sub, common)
    server_key_cmd.register(sub, common)
    uid_hash_cmd.register(sub, common)
    p = sub.add_parser("consolidate", help="run a consolidation pass now and print routes per kind")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--uid")
    group.add_argument("--all", action="store_true")
    p.set_defaults(func=cmd_consolidate)
    p = sub.add_parser("outbox", help="projection outbox operations")
    outbox = _Subparsers(p.add_subparsers(dest="outbox_command", required=True), common)
    d = outbox.add_parser("drain", help="drain until empty (waiting out backoff) and report counts; "
                                        "exits 1 when events are left")
    d.add_argument("--uid")
    d.add_argument("--max-wait", type=float, default=300.0, metavar="SECONDS",
                   help="how long to wait for events backing off to fall due (default 300; 0: do not wait)")
    d.set_defaults(func=cmd_outbox_drain)
    d = outbox.add_parser("list", help="list dead-lettered events, one JSON object per line")
    d.add_argument("--dead", action="store_true", required=True, help="the dead-lettered events (the only listing)")
    d.add_argument("--uid")
    d.add_argument("--since", type=_timestamp, metavar="TIME", help="only events dead at or after TIME (ISO-8601)")
    d.set_defaults(func=cmd_outbox_list)
    d = outbox.add_parser("redrive", help="move dead events back to pending with a fresh attempt budget")
    d.add_argument("--uid")
    d.add_argument("--since", type=_timestamp, metavar="TIME", help="only events dead at or after TIME (ISO-8601)")
    d.set_defaults(func=cmd_outbox_redrive)
    p = sub.add_parser("doctor", help="compare canonical state with Typesense, the vector index and the graph; "
                                      "exits 1 on drift")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--uid")
    group.add_argument("--all", action="store_true")
    p.add_argument("--repair", action="store_true",
                   help="enqueue the outbox events that converge each drifted memory (purge_user for a uid with "
                        "no canonical items)")
    p.set_defaults(func=cmd_doctor)
    p = sub.add_parser("rebuild", help="purge one provider by uid and re-project the current state through the "
                                       "outbox (resumable)")
    p.add_argument("--provider", required=True, choices=["typesense", "vector", "graph"])
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--uid")
    group.add_argument("--all", action="store_true")
    p.set_defaults(func=cmd_rebuild)
    p = sub.add_parser("scheduler", help="the scheduled jobs Terraform declares: status, pause, resume, run now")
    p.add_argument("action", choices=["status", "pause", "resume", "run"])
    p.add_argument("job", nargs="?", help="strata-consolidation-fanout | strata-outbox-sweep")
    p.add_argument("--name-prefix", default=None,
                   help="a real project deployed with Terraform's name_prefix (mem-): its jobs are "
                        "mem-consolidation-fanout and mem-outbox-sweep")
    p.set_defaults(func=cmd_scheduler)
    p = sub.add_parser("inspect", help="memories per layer")
    p.add_argument("--uid", required=True)
    p.set_defaults(func=cmd_inspect)
    p = sub.add_parser("setup", help="operator: create or check the Typesense collection (and its scoped keys) "
                                     "and the Pinecone index, idempotently")
    p.add_argument("--typesense-keys", action="store_true",
                   help="also create the write and search keys scoped to the collection (values shown once)")
    p.add_argument("--pinecone-index", default=None, help="create this serverless index when missing (control plane)")
    p.add_argument("--pinecone-cloud", default="aws")
    p.add_argument("--pinecone-region", default="us-east-1")
    p.set_defaults(func=cmd_setup)
    p = sub.add_parser("rules", help="merge Strata's security rules fragment into an app's firestore.rules")
    rules_sub = _Subparsers(p.add_subparsers(dest="rules_command", required=True), common)
    m = rules_sub.add_parser("merge", help="insert infra/rules/strata.rules into the app's rules (idempotent)")
    m.add_argument("--app", default=None, help="the app's firestore.rules")
    m.add_argument("--out", default=None, help="write the merged file here (default: print it)")
    m.add_argument("--check", action="store_true", help="only check that the app's rules keep Strata closed")
    m.add_argument("--write-default", action="store_true", help="rewrite infra/firestore.rules")
    m.add_argument("--data-root", default=None, help="where Strata keeps a user's collections "
                                                    "(default STRATA_DATA_ROOT, users/{uid})")
    m.add_argument("--conversations-path", default=None, help="the app's conversations collection "
                                                             "(default STRATA_CONVERSATIONS_PATH, users/{uid}/conversations)")
    m.set_defaults(func=cmd_rules)
    p = sub.add_parser("smoke", help="end-to-end check of a deployment: a test user's conversation becomes "
                                     "memories, is searched, deleted, and nothing is left")
    p.add_argument("--project", default=None, help="the Google Cloud project (default: the local stack)")
    p.add_argument("--api-url", default=None, help="the api function's URL (terraform output api_url)")
    p.add_argument("--web-api-key", default=None, help="the app's Firebase web API key (a project's test user sign-up)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for each stage")
    p.set_defaults(func=cmd_smoke)
    p = sub.add_parser("model-replies", help="the model path's requests, for recording the replies the replay "
                                             "server answers with (strata stack up --model-replay)")
    replies_sub = _Subparsers(p.add_subparsers(dest="replies_command", required=True), common)
    for name, help_text in (("dump", "write the exact extraction requests the project's LLMExtractor sends for "
                                     "the conversations, one file each, as recording templates"),
                            ("missing", "list the requests without a recorded reply (the conversations' "
                                        "extraction requests and the replay server's missing folder); exits 1 "
                                        "when there is any")):
        r = replies_sub.add_parser(name, help=help_text)
        r.add_argument("--conversations", default=None,
                       help="a JSON file or folder of conversation documents (default: the sample conversations)")
        r.set_defaults(func=cmd_model_replies_dump if name == "dump" else cmd_model_replies_missing)
        if name == "dump":
            r.add_argument("--out", required=True, help="folder to write the request templates to")
            r.add_argument("--routing", nargs="?", const=str(model_replay_default()), default=None, metavar="REPLIES",
                           help="also the routing requests: capture the conversations in order for one user on the "
                                "local stack, extraction answered from REPLIES (default "
                                "strata_dev/bench/data/model_replies), a consolidation pass after each")
        else:
            r.add_argument("--replies", default=None, help="folder of recorded replies "
                                                           "(default strata_dev/bench/data/model_replies)")
            r.add_argument("--missing-dir", default=None, help="the replay server's missing folder "
                                                               "(default: model_replies_missing beside --replies)")
    p = sub.add_parser("bench", help="benchmarks: figures as ratios against an in-run baseline")
    p.add_argument("name", choices=["ingest", "consolidate", "schedule", "project", "read", "recall", "doctor",
                                    "scale", "startup", "cost", "auth", "extract", "pools", "quality", "all"])
    p.add_argument("--size", type=int, default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--data", default=None, help="LoCoMo-format JSON file for the recall benchmark (quality: the "
                                                "LoCoMo file its sessions come from; default: STRATA_LOCOMO_DATA)")
    p.add_argument("--split", choices=["dev", "heldout"], default="dev",
                   help="quality: the development sessions (tuned on) or the held-out ones")
    p.add_argument("--path", action="append", choices=["rules", "model"], default=None,
                   help="quality: run only this path (repeatable; default both)")
    p.add_argument("--replay-url", default=None,
                   help="quality: the recorded-replies server (OpenAI-compatible) for the model path")
    p.add_argument("--packet", default=None, help="quality: write the memories never judged here, for a blind judge")
    p.add_argument("--record", default=None, help="quality: a judge's answers to a packet, recorded as verdicts")
    p.add_argument("--judge", default=None, help="quality: who judged the answers given to --record")
    p.add_argument("--not-blind", action="store_true",
                   help="quality: --record's judge knew which path made each memory (kept apart from the figures)")
    p.add_argument("--list-unjudged", action="store_true", help="quality: print each memory never judged (stderr)")
    p.add_argument("--updates", default=None,
                   help="recall: the update-pairs file of the knowledge-update figure (default: the shipped one)")
    p.add_argument("--updates-only", action="store_true", help="recall: only the knowledge-update figure")
    p.add_argument("--owner", choices=["each", "a"], default="each",
                   help="recall: each named speaker as the owner in turn (default), or speaker_a only")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="write a chart of the results as a PNG (matplotlib, the dev extra): all, each benchmark's "
                        "ratio to its baseline beside its target; recall, recall@10 per mode and BM25; quality, "
                        "precision and good per session; scale, the growth curves")
    p.add_argument("--replot", default=None, metavar="RESULTS",
                   help="with --plot: draw the chart from a saved run (--json output, or scale's --out) and run nothing")
    p.add_argument("--max-memories", type=int, default=None,
                   help="scale: leave out the memory sizes above this one")
    p.add_argument("--out", default=None, help="scale: also write the figures so far to this file after each point")
    p.add_argument("--rtt-ms", type=float, nargs="?", const=DEFAULT_RTT_MS, default=None,
                   help="read, ingest, project, scale, pools: also measure with every Firestore, Typesense and "
                        f"vector-index request delayed this many ms (a proxy in front of each; alone: {DEFAULT_RTT_MS:g}, "
                        "the in-region figure docs/benchmarks.md explains)")
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

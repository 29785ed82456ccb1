"""`strata stack up [--json] | down | status` and the foreground `dev` mode.

``register(subparsers)`` adds the ``stack`` command to the CLI's argparse tree; each sub-command
sets ``func`` to a callable taking the parsed args and returning the exit code.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from strata_dev.localstack import stack
from strata_dev.localstack.model_replay import REPLIES

SUITE_HELP = ("emulators: default = the Google Cloud CLI's Firestore and Pub/Sub emulators; firebase = Firestore, "
              "Auth and Pub/Sub under `firebase emulators:start` (adds auth_emulator_host)")


REPLAY_HELP = ("run the model path (extractor and router openai) on the replay server of recorded model replies "
               "in DIR (default strata_dev/bench/data/model_replies); requests without a reply are written to "
               "the state dir's model_replies_missing")


def _state_dir(args: argparse.Namespace) -> Path | None:
    return Path(args.state_dir) if getattr(args, "state_dir", None) else None


def _print_urls(info: dict[str, Any], out: Any = sys.stdout) -> None:
    rows = [
        ("api", info["api_url"]),
        ("firestore emulator", info["firestore_emulator_host"]),
        ("pubsub emulator", info["pubsub_emulator_host"]),
        ("tasks emulator", info["tasks_emulator_host"]),
        *([("auth emulator", info["auth_emulator_host"])] if info.get("auth_emulator_host") else []),
        ("typesense", f"{info['typesense_url']}  (api key {info['typesense_api_key']})"),
        ("pinecone (local)", info["pinecone_host"] or "-"),
        ("relay (eventarc)", info.get("relay_url", "")),
        *([("model replay", f"{info['model_replay']['url']}  (replies {info['model_replay']['replies']}, missing "
                            f"{info['model_replay']['missing']})")] if info.get("model_replay") else []),
    ]
    rows += [(f"function {name}", url) for name, url in info.get("function_urls", {}).items()]
    rows.append(("state dir", info["state_dir"]))
    width = max(len(r[0]) for r in rows)
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}", file=out)


def _reporter(json_mode: bool) -> Any:
    """Where ``stack.up`` says what starts: a stderr line each (``  starting api on port 8081``),
    none with ``--json`` (its one JSON object on stdout is all)."""
    if json_mode:
        return None

    def report(line: str) -> None:
        print(f"  {line}", file=sys.stderr, flush=True)

    return report


def cmd_up(args: argparse.Namespace) -> int:
    try:
        info = stack.up(_state_dir(args), suite=args.suite, model_replay=_replay(args), report=_reporter(args.json))
    except stack.StackError as exc:
        print(f"strata stack up: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(info, sort_keys=True))
    else:
        print(f"stack up in {info.get('startup_seconds', '?')}s")
        _print_urls(info)
        print("\nexport these to use it:")
        for key, value in stack.stack_env(info).items():
            print(f"export {key}={value}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    try:
        stopped = stack.down(_state_dir(args))
    except stack.StackError as exc:
        print(f"strata stack down: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"stopped": len(stopped)}))
    else:
        print(f"stopped {len(stopped)} processes" if stopped else "no stack was running")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    report = stack.status(_state_dir(args))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    elif not report["components"]:
        print(f"no stack in {report['state_dir']}")
    else:
        for name, state in report["components"].items():
            print(f"{name.ljust(28)} {state}")
    return 0 if report["running"] else 3


def run_foreground(state_dir: Path | None = None, suite: str = "default", model_replay: Path | None = None,
                   json_mode: bool = False) -> int:
    """`make dev`: start the stack, print where it is, stop all of it on Ctrl-C / SIGTERM."""
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            info = stack.up(state_dir, suite=suite, model_replay=model_replay, report=_reporter(json_mode))
        except stack.StackError as exc:
            print(f"strata dev: {exc}", file=sys.stderr)
            return 1
        print(f"Strata local stack up in {info.get('startup_seconds', '?')}s; Ctrl-C stops it.")
        _print_urls(info)
        sys.stdout.flush()
        while not stop.wait(1.0):
            pass
        print("\nstopping the stack ...")
        return 0
    finally:
        stack.down(state_dir)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def cmd_dev(args: argparse.Namespace) -> int:
    return run_foreground(_state_dir(args), args.suite, _replay(args), bool(getattr(args, "json", False)))


def _replay(args: argparse.Namespace) -> Path | None:
    return Path(args.model_replay) if getattr(args, "model_replay", None) else None


def register(subparsers: Any, common: argparse.ArgumentParser | None = None) -> None:
    """Add ``stack {up,down,status,dev}`` to the CLI's sub-command parsers (each takes ``--json``)."""
    if common is None:
        common = argparse.ArgumentParser(add_help=False)
        common.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser = subparsers.add_parser("stack", help="the local stack of emulators, servers and functions")
    parser.add_argument("--state-dir", help="where pids, ports and logs live (default .strata/stack or STRATA_STATE_DIR)")
    inner = parser.add_subparsers(dest="stack_command", required=True)
    # Under `strata`, the CLI's sub-parsers: each sub-command's --help ends with the exit codes.
    sub = type(subparsers)(inner, common) if hasattr(subparsers, "_common") else inner
    p_up = sub.add_parser("up", parents=[common], help="start everything, wait until healthy, return")
    p_up.add_argument("--suite", choices=stack.SUITES, default="default", help=SUITE_HELP)
    p_up.add_argument("--model-replay", nargs="?", const=str(REPLIES), default=None, metavar="DIR", help=REPLAY_HELP)
    p_up.set_defaults(func=cmd_up)
    p_down = sub.add_parser("down", parents=[common], help="stop exactly what `up` started")
    p_down.set_defaults(func=cmd_down)
    p_status = sub.add_parser("status", parents=[common], help="each component up/down")
    p_status.set_defaults(func=cmd_status)
    p_dev = sub.add_parser("dev", parents=[common], help="run the stack in the foreground; Ctrl-C stops it")
    p_dev.add_argument("--suite", choices=stack.SUITES, default="default", help=SUITE_HELP)
    p_dev.add_argument("--model-replay", nargs="?", const=str(REPLIES), default=None, metavar="DIR", help=REPLAY_HELP)
    p_dev.set_defaults(func=cmd_dev)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m strata_dev.localstack``): the same commands as ``strata stack``."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    parser = argparse.ArgumentParser(prog="python -m strata_dev.localstack")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))

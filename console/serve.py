"""Serve the memory console on firebase-tools' Hosting emulator beside a local stack; print its URL.

    python console/serve.py --wait            # the stack `make dev SUITE=firebase` is starting
    python console/serve.py --api URL --auth  # beside any API, with an Auth emulator of its own

The site is ``firebase.json``'s hosting section (``console/``); the URL's query
names the API and the Auth emulator (``console/config.js``). ``--wait`` reads them from the stack's
state (``STRATA_STATE_DIR``, else ``.strata/stack``) once the stack has written it, and runs an Auth
emulator of its own when the stack has none (the default suite's API accepts its unsigned tokens
too). One line on stdout when the site answers (``--json``: an object with ``url``, ``auth``);
SIGTERM or Ctrl-C stops firebase-tools with it. ``tests/e2e/test_console.py`` starts it this way.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from strata_dev.localstack import catalog, firebase_suite  # noqa: E402
from strata_dev.localstack.processes import free_ports  # noqa: E402

LOOPBACK = "127.0.0.1"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _stack_info(state_dir: Path, since: float, timeout_s: float) -> dict[str, Any]:
    """The stack's description, once a stack started after ``since`` is up (the state is written
    at the start too, with ``startup_seconds`` 0)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = json.loads((state_dir / "stack.json").read_text())
            if state.get("started_at", 0) >= since and state.get("startup_seconds", 0) > 0:
                return dict(state["info"])
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            pass
        time.sleep(1)
    raise SystemExit(f"console: no stack came up in {state_dir} within {timeout_s:.0f} s")


def config(path: Path, hosting: int, auth: int | None, hub: int, logging: int) -> None:
    """firebase.json's hosting section on these ports, its folder relative to the config's own (the
    Hosting emulator joins an absolute ``public`` to its directory)."""
    site = dict(json.loads((REPO / "firebase.json").read_text())["hosting"],
                public=os.path.relpath(REPO / "console", path.parent))
    emulators: dict[str, Any] = {"singleProjectMode": True, "ui": {"enabled": False},
                                 "hosting": {"host": LOOPBACK, "port": hosting},
                                 "hub": {"host": LOOPBACK, "port": hub}, "logging": {"host": LOOPBACK, "port": logging}}
    if auth is not None:
        emulators["auth"] = {"host": LOOPBACK, "port": auth}
    path.write_text(json.dumps({"hosting": site, "emulators": emulators}, indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", action="store_true", help="take the API and Auth from the stack's state")
    parser.add_argument("--state-dir", type=Path,
                        default=Path(os.environ.get("STRATA_STATE_DIR") or REPO / ".strata" / "stack"))
    parser.add_argument("--api", help="the API's URL")
    parser.add_argument("--auth", action="store_true", help="run an Auth emulator too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    started = time.time()
    api, auth_host = args.api, None
    if args.wait:
        info = _stack_info(args.state_dir, started - 5, timeout_s=900)
        api, auth_host = info["api_url"], info.get("auth_emulator_host")
    if not api:
        parser.error("--api or --wait is needed")
    hosting, auth, hub, logging = free_ports(4)
    own_auth = args.auth or not auth_host
    work = Path(tempfile.mkdtemp(prefix="strata-console-"))
    (work / "tmp").mkdir()
    config(work / "firebase.json", hosting, auth if own_auth else None, hub, logging)
    auth_host = f"{LOOPBACK}:{auth}" if own_auth else auth_host
    env = dict(os.environ, TMPDIR=str(work / "tmp"), CI="1", NO_UPDATE_NOTIFIER="1", FIREBASE_AUTH_EMULATOR_HOST="")
    log = (work / "firebase.log").open("w")
    child = subprocess.Popen(
        [firebase_suite.node(), str(firebase_suite.FIREBASE_BIN), "emulators:start", "--project", catalog.PROJECT_ID,
         "--only", "hosting,auth" if own_auth else "hosting", "--config", str(work / "firebase.json")],
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def stop(*_: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, lambda *a: stop())
    root = f"http://{LOOPBACK}:{hosting}"
    try:
        deadline = time.monotonic() + 300
        while not (_answers(root + "/index.html") and (not own_auth or _answers(f"http://{auth_host}/"))):
            if child.poll() is not None or time.monotonic() > deadline:
                print(f"console: firebase-tools did not serve the site; its log: {work / 'firebase.log'}",
                      file=sys.stderr)
                stop()
                return 1
            time.sleep(0.5)
        url = f"{root}/?api={api}&auth={auth_host}&project={catalog.PROJECT_ID}"
        print(json.dumps({"url": url, "auth": auth_host, "log": str(work / "firebase.log")}) if args.json
              else f"memory console  {url}", flush=True)
        return child.wait()
    except KeyboardInterrupt:
        stop()
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())

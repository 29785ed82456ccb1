"""startup: cold start and footprint of each function on a fresh process, default settings.

For each of the six functions, packaged as it deploys (``strata_dev.packaging``: its ``main.py``,
``core`` and their bytecode, in a directory of their own) and run on the running stack's emulators:

- ``import_ms``: a fresh interpreter imports the function's ``main.py`` (functions-framework, the
  core package and everything they import at module level); ``import_rss_mb`` is that process's
  peak resident size afterwards (``VmHWM``), ``import_modules`` the number of modules it then holds
  (``sys.modules``: exact, where the times depend on the machine's load).
- ``ready_ms``: a fresh ``functions_framework`` process, from spawn until it answers HTTP.
- ``first_request_ms``: that process's first real request, the one that builds the clients
  (api: a list page for a new user; capture: a conversation's ``document.written`` event; drain: a
  projection push; consolidate: a pass; cascade: a ``document.deleted`` event; deliver_webhook: a
  well-formed delivery task for a user without a webhook, which it records as cancelled).
  Before the fresh process starts, the same request goes once, untimed, to the stack's running
  instance of the function, so the emulator has seen its query and commit shapes
  (``emulator_warm_up_ms``: how long that took; see :func:`warm_emulator`).
- ``cold_start_ms`` = ``ready_ms`` + ``first_request_ms``; ``peak_rss_mb``: the largest peak
  resident size (``VmHWM``) in the server's process tree after its first request.
- ``*_cpu_ms``: the CPU seconds (user + system) the server's process tree used for the same spans.
  On a shared, loaded machine wall time waits for a core; CPU time is what the start needs.

``floor`` is the same-run baseline: a function with none of Strata's code (the runtime, the
Firestore SDK, one query of a page of memory documents), started the same way three times; each
function's ``over_floor_ms`` / ``over_floor_cpu_ms`` is what its own code adds to the median.

``phases`` splits a start into the parts every function pays, each timed in its own fresh
interpreter: starting the interpreter, importing functions-framework, importing the Firestore SDK,
and the first query on a new channel.

Targets (issue 33): every function answers its first request within 800 ms of its spawn and stays
under 256 MB.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from strata_dev.bench import harness
from strata_dev.bench.procs import cpu_seconds, tree
from strata_dev.localstack.processes import gunicorn_runtime, stop_child

TARGETS = {name: (800.0, 256.0) for name in ("api", "on_conversation_complete", "delete_cascade", "outbox_drain",
                                             "consolidate", "deliver_webhook")}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(root: Path = harness.REPO) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


IMPORT_PROBE = """
import importlib.util, sys, time
started = time.perf_counter()
spec = importlib.util.spec_from_file_location("main", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
elapsed = time.perf_counter() - started
import core, os
assert core.__file__.startswith(os.path.dirname(sys.argv[1])), "core came from " + core.__file__
# VmHWM is this image's own peak; ru_maxrss would also keep the peak of the process it was forked from
with open("/proc/self/status") as status:
    hwm_kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(elapsed, hwm_kb, len(sys.modules))
"""


def import_time(source: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS MB, modules loaded) of importing ``source`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE, str(source)], env=_env(source.parent),
                          cwd=source.parent, capture_output=True, text=True, timeout=120, check=True)
    seconds, rss_kb, modules = done.stdout.split()
    return float(seconds), int(rss_kb) / 1024, int(modules)


PHASE_PROBE = """
import sys, time
started = time.perf_counter()
marks = {}
if sys.argv[1] == "framework":
    import functions_framework  # noqa: F401  flask, werkzeug, gunicorn's entry, cloudevents
elif sys.argv[1] == "firestore":
    from google.cloud import firestore
    marks["import"] = time.perf_counter() - started
    from google.auth.credentials import AnonymousCredentials
    client = firestore.Client(project=sys.argv[2], credentials=AnonymousCredentials())
    marks["client"] = time.perf_counter() - started
    list(client.collection("startup_probe").limit(1).stream())
    marks["first_rpc"] = time.perf_counter() - started
marks["total"] = time.perf_counter() - started
print(" ".join(f"{k}={v}" for k, v in marks.items()))
"""


def phases(project: str) -> dict[str, float]:
    """Where a cold start's time goes, each part in its own fresh interpreter (milliseconds):
    starting the interpreter, importing functions-framework, importing the Firestore SDK, building
    its client and running the first query on a new channel."""
    def probe(*argv: str) -> dict[str, float]:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", PHASE_PROBE, *argv], env=_env(), capture_output=True,
                              text=True, timeout=120, check=True)
        marks = {k: float(v) * 1000 for k, v in (pair.split("=") for pair in done.stdout.split())}
        marks["process"] = (time.perf_counter() - started) * 1000
        return marks

    subprocess.run([sys.executable, "-c", "pass"], env=_env(), timeout=60, check=True)  # warm the file cache
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=_env(), timeout=60, check=True)
    interpreter = (time.perf_counter() - started) * 1000
    framework = probe("framework")
    firestore = probe("firestore", project)
    return {"interpreter_ms": round(interpreter, 1), "functions_framework_import_ms": round(framework["total"], 1),
            "firestore_import_ms": round(firestore["import"], 1),
            "firestore_client_ms": round(firestore["client"] - firestore["import"], 1),
            "firestore_first_query_ms": round(firestore["first_rpc"] - firestore["client"], 1)}


def document_event(project: str, uid: str, conversation_id: str, doc: dict[str, Any], kind: str
                   ) -> tuple[bytes, dict[str, str]]:
    """A binary Firestore CloudEvent (``written`` carries ``doc`` as the value, ``deleted`` as the old value)."""
    from strata_dev.cloudevents import conversation_event

    if kind == "written":
        return conversation_event(project, uid, conversation_id, doc, kind=kind, event_prefix="startup")
    return conversation_event(project, uid, conversation_id, None, doc, kind=kind, event_prefix="startup")


def first_request(function: str, url: str, project: str) -> httpx.Response:
    from core.api.auth import emulator_token

    uid = harness.new_uid(f"startup-{function}")
    with httpx.Client(timeout=120.0) as http:
        if function == "api":
            return http.get(url + "/v1/memories", params={"limit": 100},
                            headers={"Authorization": "Bearer " + emulator_token(uid, project)})
        if function in ("on_conversation_complete", "delete_cascade"):
            doc = harness.sample_conversations()[0]
            kind = "written" if function == "on_conversation_complete" else "deleted"
            body, headers = document_event(project, uid, "startup-c0", doc, kind)
            return http.post(url + "/", content=body, headers=headers)
        if function == "outbox_drain":
            data = base64.b64encode(json.dumps({"uid": uid}).encode()).decode()
            return http.post(url + "/", json={"message": {"data": data, "messageId": uuid.uuid4().hex},
                                              "subscription": f"projects/{project}/subscriptions/startup"})
        if function == "deliver_webhook":
            from core.domain.webhooks import MEMORY_CREATED

            # A well-formed delivery task; the user has no webhook, so it is cancelled (and recorded).
            return http.post(url + "/", json={"uid": uid, "webhook": MEMORY_CREATED, "conversation_id": "startup-c0"})
        return http.post(url + "/", json={"uid": uid})


def _peak_rss_mb(pid: int) -> float | None:
    """The largest peak resident size (``VmHWM``) in the server's process tree."""
    peaks = []
    for member in tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    return max(peaks) if peaks else None


def warm_emulator(function: str, url: str | None, project: str) -> float | None:
    """The same first request, untimed, to the stack's running instance of ``function``.

    A fresh emulator answers each query and commit shape several times slower the first time it
    sees it (its JIT; 300 ms against 20 ms for the api's list page on this machine), which no
    deployed function pays against Firestore; the ingest benchmark warms the emulator the same way.
    Returns how long that request took (ms), or None without a running instance."""
    if not url:
        return None
    started = time.perf_counter()
    first_request(function, url, project)
    return round((time.perf_counter() - started) * 1000, 1)


FLOOR_MAIN = '''"""The platform's floor: functions-framework and the Firestore SDK answering one query."""
import functions_framework
from google.cloud import firestore

_clients = {}


@functions_framework.http
def floor(request):
    project = request.args["project"]
    client = _clients.get(project) or _clients.setdefault(project, firestore.Client(project=project))
    page = client.collection("users").document(request.args["uid"]).collection("memory_items").limit(100)
    return {"memories": sum(1 for _ in page.stream())}
'''
FLOOR_STARTS = 3


def _timed_start(name: str, tree: Path, entry: str, signature: str, ask: Any) -> dict[str, Any]:
    """Spawn ``functions_framework`` on ``tree/main.py`` as the runtime does, wait until it answers
    HTTP, then time ``ask(url)`` twice (the first request and its warm repeat)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with gunicorn_runtime(name) as runtime:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "functions_framework", "--source", str(tree / "main.py"),
                                 "--target", entry, "--signature-type", signature, "--host", "127.0.0.1",
                                 "--port", str(port)],
                                env=_env(tree) | runtime, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    httpx.get(url + "/robots.txt", timeout=1.0)
                    break
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"{name} did not start")
                time.sleep(0.01)
            ready_s = time.perf_counter() - started
            ready_cpu = cpu_seconds(proc.pid)
            request_started = time.perf_counter()
            answer = ask(url)
            first_s = time.perf_counter() - request_started
            first_cpu = cpu_seconds(proc.pid) - ready_cpu
            second_started = time.perf_counter()
            ask(url)
            second_s = time.perf_counter() - second_started
            rss = _peak_rss_mb(proc.pid)
        finally:
            stop_child(proc)
    return {
        "ready_ms": round(ready_s * 1000, 1), "first_request_ms": round(first_s * 1000, 1),
        "first_request_status": answer.status_code, "second_request_ms": round(second_s * 1000, 1),
        "cold_start_ms": round((ready_s + first_s) * 1000, 1), "peak_rss_mb": None if rss is None else round(rss, 1),
        "ready_cpu_ms": round(ready_cpu * 1000, 1), "first_request_cpu_ms": round(first_cpu * 1000, 1),
        "cold_start_cpu_ms": round((ready_cpu + first_cpu) * 1000, 1)}


def cold_start(function: str, entry: str, signature: str, project: str, tree: Path,
               warm_url: str | None = None) -> dict[str, Any]:
    """One fresh start of the function packaged in ``tree`` (what ``make package`` deploys)."""
    emulator_warm_up_ms = warm_emulator(function, warm_url, project)
    imported_s, imported_rss, imported_modules = import_time(tree / "main.py")
    timed = _timed_start(function, tree, entry, signature, lambda url: first_request(function, url, project))
    out: dict[str, Any] = {"import_ms": round(imported_s * 1000, 1), "import_rss_mb": round(imported_rss, 1),
                           "import_modules": imported_modules, **timed, "emulator_warm_up_ms": emulator_warm_up_ms}
    if function in TARGETS:
        limit_ms, limit_mb = TARGETS[function]
        rss = timed["peak_rss_mb"]
        out["targets"] = {"cold_start_ms": limit_ms, "peak_rss_mb": limit_mb,
                          "met": timed["cold_start_ms"] <= limit_ms and rss is not None and rss < limit_mb}
    return out


def floor(project: str, parent: Path, starts: int = FLOOR_STARTS) -> dict[str, Any]:
    """The same-run baseline: a function with no Strata code in it (:data:`FLOOR_MAIN`: the runtime,
    the Firestore SDK and one query of a page of 100 memory documents, like the api's list page),
    started the same way ``starts`` times. What every Firestore-backed function pays on this
    machine before any of its own work; ``cold_start_ms`` and ``cold_start_cpu_ms`` are medians."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import firestore

    tree = parent / "floor"
    tree.mkdir()
    (tree / "main.py").write_text(FLOOR_MAIN)
    # The emulator sees the query's shape once before the timed starts, as warm_emulator does.
    warm = firestore.Client(project=project, credentials=AnonymousCredentials())
    list(warm.collection("users").document(harness.new_uid("floor")).collection("memory_items").limit(100).stream())

    def ask(url: str) -> httpx.Response:
        return httpx.get(url + "/", params={"project": project, "uid": harness.new_uid("floor")}, timeout=120.0)

    runs = [_timed_start("floor", tree, "floor", "http", ask) for _ in range(starts)]
    return {"starts": runs,
            "cold_start_ms": statistics.median(r["cold_start_ms"] for r in runs),
            "cold_start_cpu_ms": statistics.median(r["cold_start_cpu_ms"] for r in runs),
            "met_800_ms": sum(r["cold_start_ms"] <= 800.0 for r in runs)}


def run(args: Any, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    import tempfile

    from strata_dev import packaging
    from strata_dev.localstack import catalog

    project = args.stack_info["project_id"]
    selected = [fn for fn in catalog.FUNCTIONS if only is None or fn.name in only]
    with tempfile.TemporaryDirectory(prefix="strata-startup-") as out:
        packaging.build(Path(out), [fn.name for fn in selected])
        urls = args.stack_info.get("function_urls") or {}
        functions = {fn.name: cold_start(fn.name, fn.entry, fn.signature, project, Path(out) / fn.name,
                                         urls.get(fn.name))
                     for fn in selected}
        baseline = floor(project, Path(out))
    for figures in functions.values():
        figures["over_floor_ms"] = round(figures["cold_start_ms"] - baseline["cold_start_ms"], 1)
        figures["over_floor_cpu_ms"] = round(figures["cold_start_cpu_ms"] - baseline["cold_start_cpu_ms"], 1)
    return {"functions": functions, "floor": baseline, "phases": phases(project),
            "settings": f"default (the stack's environment: emulators, {args.stack_info.get('embedder', 'default')} "
                        "embedder, rule extractor)",
            "targets_met": all(f["targets"]["met"] for f in functions.values() if "targets" in f)}

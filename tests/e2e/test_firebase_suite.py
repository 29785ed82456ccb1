"""`strata stack up --suite firebase`: the Firebase emulator suite (firebase-tools) under Strata, and
two real client apps against it.

The module starts its own stack once (a separate process, as a developer would, in a temp state
dir), runs the Firebase JS SDK example (``examples/web-client/client.mjs``: sign-up on the Auth
emulator, a conversation written through the security rules, memories, search and an edit through
the API with the generated client (``clients/js``),
refused writes to another user's conversation and to backend collections, delete cascade) and its
firebase-admin twin, then stops the stack and checks nothing it started is left. Everything it
needs is installed by ``make setup`` (tools/firebase, .venv-firebase); a missing piece fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from strata_dev.localstack import catalog, firebase_suite
from strata_dev.localstack.processes import group_members, pid_alive
from strata_dev.localstack.stack import REPO_ROOT, stack_env
from tests.support import js_client

pytestmark = pytest.mark.e2e
EXAMPLE = REPO_ROOT / "examples" / "web-client"
DEFAULT_KEYS = {
    "project_id", "api_url", "firestore_emulator_host", "pubsub_emulator_host", "tasks_emulator_host",
    "typesense_url", "typesense_api_key", "typesense_search_key", "pinecone_host", "relay_url", "consolidate_url",
    "webhook_url",
    "function_urls", "tasks_queue", "projection_topic", "state_dir", "startup_seconds", "embedder",
    "runtime_dir",  # the function servers' gunicorn runtime directories, removed by `down`
    "trace_file",  # where the functions write their spans (STRATA_TRACE_EXPORTER=file)
}


def _cli(state_dir: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "strata_dev.localstack", "stack", "--state-dir", str(state_dir), *args],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    state_dir = tmp_path_factory.mktemp("firebase-stack")
    pids: set[int] = set()
    groups: set[int] = set()
    try:
        up = _cli(state_dir, "up", "--suite", "firebase", "--json", timeout=600)
        assert up.returncode == 0, up.stderr[-3000:]
        info = json.loads(up.stdout)
        state = json.loads((state_dir / "stack.json").read_text())
        groups = {int(p["pgid"]) for p in state["processes"]}
        pids = {pid for g in groups for pid in group_members(g)}
        yield info
    finally:
        down = _cli(state_dir, "down", timeout=180)
    assert down.returncode == 0, down.stderr
    deadline = time.monotonic() + 60  # a deadline on the processes exiting, not a timing claim
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.2)
    assert [p for p in pids if pid_alive(p)] == []
    assert [g for g in groups if group_members(g)] == []


def _client_env(info: dict[str, Any]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(stack_env(info))
    env["STRATA_API_URL"] = info["api_url"]
    env["NODE_PATH"] = str(firebase_suite.TOOLS_DIR / "node_modules")
    return env


def test_suite_describes_itself_and_runs_under_firebase_tools(suite: dict[str, Any], tmp_path: Path) -> None:
    assert suite.keys() == DEFAULT_KEYS | {"auth_emulator_host"}
    assert set(suite["function_urls"]) == {f.name for f in catalog.FUNCTIONS}
    assert stack_env(suite)["FIREBASE_AUTH_EMULATOR_HOST"] == suite["auth_emulator_host"]
    status = _cli(Path(suite["state_dir"]), "status", "--json", timeout=120)
    assert status.returncode == 0, status.stdout + status.stderr
    components = json.loads(status.stdout)["components"]
    assert {"firebase", "tasks", "typesense", "relay", "tick"} <= set(components)
    assert not {"firestore", "pubsub"} & set(components)  # firebase-tools runs those two
    # firebase-tools' emulators run in process groups of their own; the state file names them too.
    assert [n for n in components if n.startswith("firebase:")]
    assert set(components.values()) == {"up"}
    # The Auth emulator's REST API issues ID tokens the API accepts (signed up with any key).
    signup = httpx.post(f"http://{suite['auth_emulator_host']}/identitytoolkit.googleapis.com/v1/accounts:signUp",
                        params={"key": "any"}, json={"returnSecureToken": True}, timeout=60)
    assert signup.status_code == 200, signup.text
    token = signup.json()["idToken"]
    listed = httpx.get(f"{suite['api_url']}/v1/memories", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    assert listed.status_code == 200, listed.text
    assert listed.json()["memories"] == []
    forged = token.rsplit(".", 2)[0] + "." + _b64_claims({"sub": "x", "aud": "another-project"}) + "."
    refused = httpx.get(f"{suite['api_url']}/v1/memories", headers={"Authorization": f"Bearer {forged}"}, timeout=60)
    assert refused.status_code == 401


def _b64_claims(claims: dict[str, Any]) -> str:
    import base64

    return base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()


def test_web_client_on_the_firebase_js_sdk(suite: dict[str, Any]) -> None:
    js_client.ensure_built(httpx.get(suite["api_url"] + "/openapi.json", timeout=60).json())
    run = subprocess.run(["node", str(EXAMPLE / "client.mjs")], env=_client_env(suite), capture_output=True,
                         text=True, timeout=400)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["ok"] is True
    assert any("nurse" in m for m in result["memories"])
    assert result["search_hits"] >= 1
    assert result["reviewed"] is True and result["error_request_id"].startswith("req_")
    # The security rules refused each of these writes / reads (permission-denied), in the client.
    assert result["refused"] == ["another user's conversation", "users/{uid}/memory_items",
                                 "users/{uid}/memory_outbox", "memory_controls/global",
                                 "reading users/{uid}/memory_items"]


def test_python_twin_on_firebase_admin(suite: dict[str, Any]) -> None:
    python = firebase_suite.VENV / "bin" / "python"
    run = subprocess.run([str(python), str(EXAMPLE / "admin_client.py")], env=_client_env(suite),
                         capture_output=True, text=True, timeout=400)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["ok"] is True
    assert any("nurse" in m for m in result["memories"]) and result["search_hits"] >= 1

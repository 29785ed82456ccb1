"""Every line the six functions write is one JSON object with ``severity`` and ``message``
(Cloud Logging's structured form), uids appear only hashed, and a request's trace header reaches
the line. The test drives the functions through the stack (a Firestore write → capture → outbox
drain; an HTTP request with a trace header; a consolidation task; a webhook delivery task; a
conversation delete → cascade), waits for the lines that prove each ran, then parses every line of every function's
captured output (``<state_dir>/logs/fn_*.log``, which holds the whole session's lines). Every line written while a
user's request is in scope names it as ``uid_hash``."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from core import logs
from core.bootstrap import Context
from strata_dev.localstack import catalog
from strata_dev.localstack.tokens import emulator_token
from tests.support import trace

pytestmark = pytest.mark.e2e
TRACE = uuid.uuid4().hex


def _log(stack: dict[str, Any], function: str) -> Path:
    return Path(stack["state_dir"]) / "logs" / f"fn_{function}.log"


def _wait_for_line(path: Path, wanted: Callable[[dict[str, Any]], bool], what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip() and wanted(json.loads(line)):
                    return
        time.sleep(0.2)
    raise AssertionError(f"no line in {path.name} for {what} within {timeout_s}s")


def test_every_function_line_is_structured_json_with_hashed_uids(stack: dict[str, Any]) -> None:
    uid = f"u-logs-{uuid.uuid4().hex[:10]}"
    hashed = logs.hash_uid(uid)
    ctx = Context()
    ctx.paths.doc(uid, "conversations", "c1").set(trace.conversation_doc("c1", ["I live in Lisbon with my partner."]))
    _wait_for_line(_log(stack, "on_conversation_complete"),
                   lambda line: line["message"] == "capture" and line.get("uid_hash") == hashed, "the capture")
    _wait_for_line(_log(stack, "outbox_drain"),
                   lambda line: line["message"] == "drain" and hashed in line.get("uid_hashes", []), "the drain")
    headers = {"Authorization": f"Bearer {emulator_token(uid)}", "X-Cloud-Trace-Context": f"{TRACE}/1;o=1"}
    assert httpx.get(stack["api_url"] + "/v1/memories", headers=headers, timeout=30).status_code == 200
    _wait_for_line(_log(stack, "api"), lambda line: line.get(logs.TRACE_FIELD, "").endswith(f"/traces/{TRACE}")
                   and line.get("uid_hash") == hashed, "the traced API request")
    answer = httpx.post(stack["function_urls"]["consolidate"], json={"uid": uid}, timeout=60)
    assert answer.status_code == 200, answer.text
    _wait_for_line(_log(stack, "consolidate"), lambda line: line["message"] == "consolidation_pass"
                   and line.get("uid_hash") == hashed, "the consolidation pass")
    # A webhook delivery task (no webhook set: cancelled, nothing posted) on its own function.
    task = {"webhook": "memory_created", "uid": uid, "conversation_id": "c1"}
    answer = httpx.post(stack["function_urls"]["deliver_webhook"], json=task, timeout=60)
    assert answer.status_code == 200 and answer.json()["state"] == "cancelled", answer.text
    _wait_for_line(_log(stack, "deliver_webhook"), lambda line: line["message"] == "webhook_delivery"
                   and line.get("uid_hash") == hashed, "the webhook delivery")
    ctx.paths.doc(uid, "conversations", "c1").delete()
    _wait_for_line(_log(stack, "delete_cascade"), lambda line: line.get("uid_hash") == hashed, "the cascade")

    for fn in catalog.FUNCTIONS:
        path = _log(stack, fn.name)
        text = path.read_text() if path.exists() else ""
        assert uid not in text, f"raw uid in {path.name}"
        for number, line in enumerate(text.splitlines(), 1):
            entry = json.loads(line)
            assert isinstance(entry, dict), f"{path.name}:{number}: {line[:200]}"
            assert entry["severity"] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), f"{path.name}:{number}"
            assert isinstance(entry["message"], str)

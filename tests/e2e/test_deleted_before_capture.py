"""A conversation deleted before its first capture stays deleted (issue 27, point 9), on the stack.

The spec: a conversation delete cascades to everything derived from it, and Q7/Q8 make the delete
the user's last word on that source. A deleted conversation stays deleted whatever is redelivered.

The sequence a user meets: the app writes a completed conversation while capture fails for a
moment (here the ``writes_disabled`` incident switch makes the trigger's capture fail as retryable,
so the Eventarc relay retries it with backoff); the user deletes the conversation before any
capture succeeded (its delete trigger finds nothing to cascade); capture recovers. The relay's own
retry of the create event, and a late duplicate of that event, must then bring nothing back: no
memory, no workflow row, nothing listed.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.services import controls
from tests.e2e.test_incident_switches import switched_on
from tests.support import trace
from tests.support.cloudevents import conversation_written
from tests.support.firestore_checks import all_docs, relay_deliveries, wait_for

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
LINES = ["I play the cello every Sunday.", "I have a dog called Biscuit."]


def _relay_lines(stack: dict[str, Any], document: str, function: str, pattern: str) -> int:
    log = Path(stack["state_dir"]) / "logs" / "relay.log"
    url = re.escape(str(stack["function_urls"][function]).rstrip("/"))
    found = re.compile(rf"{pattern} \S+ {re.escape(document)} id=\S+ to {url}/? ")
    return sum(1 for line in log.read_text(errors="replace").splitlines() if found.search(line)) if log.exists() else 0


def test_a_conversation_deleted_before_its_first_capture_never_comes_back(stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = f"dbc-{uuid.uuid4().hex[:12]}"
    cid = "c-early-delete"
    document = f"users/{uid}/conversations/{cid}"
    doc = trace.conversation_doc(cid, LINES)
    ref = ctx.paths.doc(uid, "conversations", cid)
    with switched_on(ctx, controls.WRITES):
        ref.set(doc)  # the app's write; the trigger's capture fails (retryable) and the relay backs off
        wait_for(lambda: _relay_lines(stack, document, "on_conversation_complete", r"attempt \d+ of") > 0,
                 timeout=60, interval=0.05, what="the first capture attempt to fail")
        deletes = relay_deliveries(stack, document, "delete_cascade")
        ref.delete()  # the user deletes it before any capture succeeded
        wait_for(lambda: relay_deliveries(stack, document, "delete_cascade") > deletes, timeout=60, interval=0.05,
                 what="the delete trigger to be answered")
    # Capture works again: the relay's remaining retries of the create event are answered (or given up).
    wait_for(lambda: relay_deliveries(stack, document) > 0
             or _relay_lines(stack, document, "on_conversation_complete", "giving up on") > 0,
             timeout=60, interval=0.1, what="the relay's retries of the create event to end")
    body, headers = conversation_written(uid, cid, doc, None)  # and a late duplicate of the create event
    late = httpx.post(stack["function_urls"]["on_conversation_complete"], content=body, headers=headers, timeout=60)
    assert late.status_code < 300, late.text

    assert all_docs(ctx, uid, "memory_items") == {}, "the deleted conversation was captured"
    assert all_docs(ctx, uid, "action_items") == {} and all_docs(ctx, uid, "goals") == {}
    listed = httpx.get(f"{stack['api_url']}/v1/memories", timeout=30,
                       headers={"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"})
    assert listed.status_code == 200 and listed.json()["memories"] == [], listed.text
    assert not ref.get().exists

"""A small conversation is retracted in one ledger commit (issue 27, point 10), on the stack.

The spec's Q8/Q7 rows: a conversation delete is an atomic complete-source replacement — the
original's tests pin one retraction. So deleting a conversation whose memories fit one cascade page
(through the API, and by the app deleting the document, which the delete trigger cascades) writes
exactly one ``delete.conversation`` commit, which withdraws every memory the conversation supports;
afterwards nothing of it is listed and its workflow rows are gone.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from tests.support import trace
from tests.support.firestore_checks import all_docs, assert_ledger_gapless, relay_deliveries, wait_for

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _cascade_commits(ctx: Context, uid: str) -> list[dict[str, Any]]:
    return [c for c in all_docs(ctx, uid, "memory_commits").values() if c["kind"] == "delete.conversation"]


@pytest.mark.parametrize("via", ["api", "app"])
def test_a_conversation_that_fits_one_page_is_retracted_in_one_commit(stack: dict[str, Any], via: str) -> None:
    ctx = Context()
    uid = f"one-{via}-{uuid.uuid4().hex[:10]}"
    doc = trace.sample_conversation("c-morning-standup")
    cid = doc.pop("id")
    trace.capture_now(ctx, uid, cid, doc)
    derived = {mid for mid, item in all_docs(ctx, uid, "memory_items").items() if cid in item["active_source_ids"]}
    assert derived, "the conversation yielded no memories"
    document = f"users/{uid}/conversations/{cid}"
    before = relay_deliveries(stack, document, "delete_cascade")
    if via == "api":
        response = httpx.delete(f"{stack['api_url']}/v1/conversations/{cid}", headers=_auth(uid), timeout=60)
        assert response.status_code == 200, response.text
    else:
        ctx.paths.doc(uid, "conversations", cid).delete()
    wait_for(lambda: relay_deliveries(stack, document, "delete_cascade") > before, timeout=90, interval=0.1,
             what="the delete trigger to be answered")

    [commit] = _cascade_commits(ctx, uid)
    assert set(commit["memory_ids"]) >= derived, "the retraction is one commit covering every memory"
    items = all_docs(ctx, uid, "memory_items")
    assert all(items[mid]["status"] == "tombstoned" and not items[mid]["content"] for mid in derived)
    assert not ctx.paths.doc(uid, "conversations", cid).get().exists
    assert all(row.get("conversation_id") != cid for row in all_docs(ctx, uid, "action_items").values())
    assert all(row.get("conversation_id") != cid for row in all_docs(ctx, uid, "goals").values())
    listed = httpx.get(f"{stack['api_url']}/v1/memories", headers=_auth(uid), timeout=30).json()["memories"]
    assert [m for m in listed if cid in m["source_ids"]] == []
    assert_ledger_gapless(ctx, uid)

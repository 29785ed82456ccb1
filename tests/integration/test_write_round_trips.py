"""Sequential Firestore round trips of the API's writes, counted on the emulator (issue 33's targets:
an explicit create or a content edit in at most 3), with the ledger they leave: still two commits
each (the intake, then its required processing), committed by one transaction. The per-user rate
limiter (issue 45) adds exactly one round trip in front of a limited request, counted apart: the
targets are measured with the limits off, and once more with them on."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from core import config
from core.bootstrap import Context
from core.services import projection
from strata_dev.bench.counting import counting_client
from strata_dev.bench.roundtrips import counted_dispatch
from tests.support.firestore_checks import snapshot_user

pytestmark = pytest.mark.integration


class _Quiet:
    def publish(self, topic: str, data: dict[str, Any]) -> None:
        return None


def _kinds(ctx: Context, uid: str) -> list[str]:
    commits = [s.to_dict() for s in ctx.paths.col(uid, "memory_commits").stream()]
    return [c["kind"] for c in sorted(commits, key=lambda c: c["sequence"])]


def test_create_and_edit_take_at_most_three_sequential_round_trips(
        stack: dict[str, Any], make_token: Callable[[str], str]) -> None:
    client = counting_client(config.load().project_id)
    unlimited = config.Settings(rate_limit_writes=0, rate_limit_extraction=0, rate_limit_search=0)
    ctx = Context(unlimited, client=client, publisher=_Quiet())
    uid = f"rtt-{uuid.uuid4().hex[:10]}"
    token = make_token(uid)
    limited = Context(client=client, publisher=_Quiet())
    other = f"rtt-{uuid.uuid4().hex[:10]}"
    with_limits = counted_dispatch(limited, "POST", "/v1/memories", make_token(other), body={"content": "I keep moths"})
    assert with_limits["status"] == 201 and with_limits["sequential_rpcs"] <= 3 + 1, with_limits["chain"]

    created = counted_dispatch(ctx, "POST", "/v1/memories", token, body={"content": "I keep bees"})
    assert created["status"] == 201, created
    assert created["sequential_rpcs"] <= 3, created["chain"]
    assert created["body"]["content"] == "I keep bees" and created["body"]["layer"] == "short_term"
    assert _kinds(ctx, uid) == ["intake.explicit", "intake.process"]
    memory_id = created["body"]["id"]

    edited = counted_dispatch(ctx, "PATCH", f"/v1/memories/{memory_id}", token, body={"content": "I keep wasps"})
    assert edited["status"] == 200, edited
    assert edited["sequential_rpcs"] <= 3, edited["chain"]
    assert edited["body"]["content"] == "I keep wasps"
    assert _kinds(ctx, uid) == ["intake.explicit", "intake.process", "edit.content", "intake.process"]

    # The same create again replays: nothing written, the memory answered as it is now.
    again = counted_dispatch(ctx, "POST", "/v1/memories", token, body={"content": "I keep bees"})
    assert again["status"] == 201 and again["body"]["id"] == memory_id and again["writes"] == 0, again
    assert len(_kinds(ctx, uid)) == 4

    deleted = counted_dispatch(ctx, "DELETE", f"/v1/memories/{memory_id}", token)
    assert deleted["status"] == 200, deleted
    # One commit: the tombstones, the receipt and any historical row left behind go together.
    assert deleted["chain"].count("commit") == 1 and deleted["body"]["receipt_id"], deleted["chain"]
    # Created again after its delete: a new memory under the next id, never the tombstone.
    readded = counted_dispatch(ctx, "POST", "/v1/memories", token, body={"content": "I keep bees"})
    assert readded["status"] == 201 and readded["body"]["id"] != memory_id, readded
    assert _kinds(ctx, uid)[-2:] == ["intake.explicit", "intake.process"]


def test_a_historical_delete_is_one_commit_and_reading_its_receipt_writes_nothing(
        stack: dict[str, Any], make_token: Callable[[str], str]) -> None:
    client = counting_client(config.load().project_id)
    unlimited = config.Settings(rate_limit_writes=0, rate_limit_extraction=0, rate_limit_search=0)
    ctx = Context(unlimited, client=client, publisher=_Quiet())
    uid = f"rtt-{uuid.uuid4().hex[:10]}"
    token = make_token(uid)
    row = ctx.paths.doc(uid, "memories", "leg-oslo")
    row.set({"content": "I lived in Oslo", "created_at": datetime(2024, 3, 1, tzinfo=UTC)})

    deleted = counted_dispatch(ctx, "DELETE", "/v1/memories/leg-oslo", token)
    assert deleted["status"] == 200 and deleted["body"]["deleted"] == ["leg-oslo"], deleted
    # One commit: the canonical tombstone, the row's removal and the receipt.
    assert deleted["chain"].count("commit") == 1 and client.counts.commits == 1, deleted["chain"]
    assert not row.get().exists and _kinds(ctx, uid) == ["delete.memory"]
    rid = deleted["body"]["receipt_id"]

    # Reading the receipt writes nothing, pending or (its events acknowledged) confirmed.
    quiet = ("memory_outbox", "knowledge_nodes", "knowledge_edges")  # what a stray drain may touch
    before = snapshot_user(ctx, uid, exclude=quiet)
    pending = counted_dispatch(ctx, "GET", f"/v1/deletions/{rid}", token)
    assert pending["status"] == 200 and pending["writes"] == 0 and pending["body"]["state"] == "pending", pending
    assert snapshot_user(ctx, uid, exclude=quiet) == before
    projection.drain_user(ctx, uid)
    before = snapshot_user(ctx, uid, exclude=quiet)
    confirmed = counted_dispatch(ctx, "GET", f"/v1/deletions/{rid}", token)
    assert confirmed["status"] == 200 and confirmed["writes"] == 0, confirmed
    assert confirmed["body"]["state"] == "confirmed", confirmed["body"]
    assert snapshot_user(ctx, uid, exclude=quiet) == before

"""The export of an account with 10,000 memories streams in bounded memory (issue 12); `make test`
runs it with 2,000 (tests/support/scale.py), `make scale` with 10,000.

The memories are written straight to ``memory_items`` in the shape the apply transaction leaves
(capture's item constructor, ``settle()``, revision and ledger fields), because 10,000 captures
would dominate the run; the export reads them like any other. The generator the API streams is
consumed line by line under ``tracemalloc`` and its peak of Python allocations is reported.
"""

from __future__ import annotations

import json
import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.bootstrap import Context
from core.domain.extraction import Candidate, ExtractionResult, GroundedCandidate, QuoteRef
from core.services.capture import _candidate_item
from core.services.export import export_lines
from tests.support import scale

pytestmark = pytest.mark.integration

MEMORIES = scale.EXPORT_MEMORIES
LIMIT_BYTES = 128 * 1024 * 1024


def _seed(ctx: Context, uid: str, count: int) -> None:
    now = datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    for index in range(count):
        content = f"User has visited the harbour town number {index} and liked its bakery"
        conversation_id = f"seed-c{index // 20:05d}"
        candidate = Candidate(content=content, kind="fact", category="interesting", subject="user",
                              subject_label=None, quotes=(content,))
        grounded = GroundedCandidate(candidate, (QuoteRef(segment_id=f"{conversation_id}-s{index % 20}", quote=content),), "user")
        item = _candidate_item(uid, conversation_id, grounded, ExtractionResult((candidate,), (), (), "rules", "1"),
                               "transcription", None, now, 30, sensitivity=ctx.sensitivity)
        item.revision, item.ledger_commit_id, item.ledger_sequence = 1, "seed", 1
        item.processing_state = "processed"
        # Archive (the legal-states table: active + processed, never pending): ten thousand Short-term items would sit
        # in every later scheduled fan-out of the session and slow the whole stack down.
        item.layer, item.expires_at = "archive", None
        item.created_at = item.updated_at = now - timedelta(seconds=index)
        rows.append(item.settle().to_store())
    for start in range(0, len(rows), 400):  # one writer: the emulator locks pessimistically
        batch = ctx.client.batch()
        for row in rows[start:start + 400]:
            batch.set(ctx.paths.doc(uid, "memory_items", row["id"]), row)
        batch.commit()


def test_export_of_many_memories_streams_under_128_mb(stack: dict[str, Any],
                                                      record_property: Any) -> None:
    ctx = Context()
    uid = f"u-export-{uuid.uuid4().hex[:10]}"
    _seed(ctx, uid, MEMORIES)
    memories = total_bytes = 0
    summary: dict[str, Any] = {}
    tracemalloc.start()
    try:
        for line in export_lines(ctx, uid):
            total_bytes += len(line)
            record = json.loads(line)
            if record["kind"] == "memory":
                memories += 1
                assert "processing_state" not in record["data"]
            elif record["kind"] == "summary":
                summary = record
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    record_property("export_peak_bytes", peak)
    record_property("export_body_bytes", total_bytes)
    print(f"\nexport of {memories} memories: {total_bytes / 1e6:.1f} MB of JSON lines, "
          f"peak traced allocation {peak / 1e6:.1f} MB")
    assert memories == MEMORIES and summary["counts"] == {"memory": MEMORIES}
    assert peak < LIMIT_BYTES

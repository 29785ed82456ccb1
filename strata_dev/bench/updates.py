"""knowledge update: does a later conversation that ends a fact supersede it, and only then?

A file of update pairs (``data/update_pairs.json``, written blind to the rules; format in
``data/README.md``): each pair is two dated conversations of one user, the second either ending
or contradicting a fact the first stated (``expect: supersede``) or not (``expect: keep``). Each
pair runs through the real path on the local stack, for a fresh user: the first conversation is
written to Firestore as a completed conversation (the trigger captures it), a consolidation pass
and a drain settle it, then the same for the second. A pair counts as *superseded* when some memory
captured from the first conversation ended up as an ended fact (a superseded Long-term memory with
``valid_to``); *stated* when the first conversation left at least one active Long-term memory after
its own pass (a fact that can be superseded at all).

Figures: share of updates superseded (target >= 0.9), share of non-updates wrongly superseded
(target <= 0.05), each with its count, per kind, and the share of pairs whose first conversation
stated anything.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from core.domain import paths
from strata_dev.bench import harness, stats

DATA = Path(__file__).parent / "data" / "update_pairs.json"
WORKERS = 4


def load(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The pairs of a file: ``{"pairs": [...]}``, or a file of single statements ``{"items": [{"kind",
    "old", "new", "label"}]}`` (format in ``data/README.md``), each item made a pair: the old
    statement said in a first conversation, or, when it is written as a stored memory ("User ..."),
    given as that Long-term memory (``first_memory``, offline only); the new one said in a second."""
    with open(path or DATA, encoding="utf-8") as handle:
        data = json.load(handle)
    if "pairs" in data:
        return list(data["pairs"])
    pairs = []
    for n, item in enumerate(data["items"]):
        pair: dict[str, Any] = {
            "id": f"{item['kind']}-{n:03d}", "kind": item["kind"], "subject": "user", "old_fact": item["old"],
            "expect": "supersede" if item["label"] == "supersede" else "keep",
            "second": {"date": "2025-04-02", "turns": [{"speaker": "assistant", "text": "Hi again, how have things been?"},
                                                       {"speaker": "user", "text": item["new"]}]}}
        if item["old"].startswith("User "):
            pair["first_memory"] = item["old"]
        else:
            pair["first"] = {"date": "2025-01-10", "turns": [{"speaker": "assistant", "text": "Hey! What's new with you?"},
                                                             {"speaker": "user", "text": item["old"]}]}
        pairs.append(pair)
    return pairs


def conversation_doc(conv: dict[str, Any], tag: str) -> dict[str, Any]:
    """A completed conversation as an app writes it: the ``user`` turns are the owner's."""
    segments = []
    for position, turn in enumerate(conv["turns"]):
        is_owner = turn["speaker"] == "user"
        segments.append({"id": f"{tag}-s{position}", "text": turn["text"], "speaker": turn["speaker"],
                         "speaker_id": 0 if is_owner else 1, "is_user": is_owner,
                         "start": float(position * 6), "end": float(position * 6 + 5)})
    return {"status": "completed", "source": "omi", "language": "en", "discarded": False,
            "started_at": f"{conv['date']}T12:00:00+00:00",
            "structured": {"title": tag, "overview": conv["date"], "action_items": [], "events": [],
                           "category": "personal"},
            "transcript_segments": segments}


def _items(ctx: Any, uid: str) -> list[Any]:
    from core.domain.records import MemoryItem

    return [MemoryItem.from_store(s.to_dict()) for s in ctx.paths.col(uid, paths.MEMORY_ITEMS).stream()]


def _capture_and_settle(ctx: Any, uid: str, cid: str, doc: dict[str, Any]) -> None:
    from core.services import consolidation

    ctx.paths.doc(uid, paths.CONVERSATIONS, cid).set(doc)
    harness.wait_for(lambda: ctx.paths.doc(uid, paths.CAPTURE_RUNS, cid).get().exists, timeout_s=180, every=0.2)
    for _ in range(20):
        summary = consolidation.run_pass(ctx, uid)
        if summary.get("skipped") == "lease_held":
            time.sleep(0.5)
            continue
        if not summary.get("overflow"):
            break
    harness.drain(ctx, uid)


def run_pair(ctx: Any, pair: dict[str, Any]) -> dict[str, Any]:
    uid = harness.new_uid("update")
    first, second = f"{pair['id']}-first", f"{pair['id']}-second"
    _capture_and_settle(ctx, uid, first, conversation_doc(pair["first"], first))
    stated = [i.id for i in _items(ctx, uid)
              if i.layer == "long_term" and i.status == "active" and first in i.source_ids]
    _capture_and_settle(ctx, uid, second, conversation_doc(pair["second"], second))
    ended = [i for i in _items(ctx, uid) if first in i.source_ids and i.layer == "long_term"
             and i.status == "superseded" and i.valid_to is not None]
    return {"id": pair["id"], "kind": pair["kind"], "expect": pair["expect"], "stated": bool(stated),
            "superseded": bool(ended), "ended": [i.content for i in ended]}


def measure(ctx: Any, path: str | Path | None = None, limit: int | None = None) -> dict[str, Any]:
    """Every pair of the file, or ``limit`` of them spread evenly over it (``--quick``)."""
    pairs = load(path)
    if any("first_memory" in pair for pair in pairs):
        raise ValueError(f"{Path(path or DATA).name} gives first facts as stored memories, which the stack "
                         "cannot replay; the offline runs are python -m strata_dev.bench.supersession FILE")
    if limit and limit < len(pairs):
        pairs = pairs[::-(-len(pairs) // limit)][:limit]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        rows = list(pool.map(lambda pair: run_pair(ctx, pair), pairs))
    updates = [r for r in rows if r["expect"] == "supersede"]
    keeps = [r for r in rows if r["expect"] == "keep"]
    kinds = sorted({r["kind"] for r in rows})
    return {
        "data": Path(path or DATA).name, "pairs": len(rows), "updates": len(updates), "non_updates": len(keeps),
        "updates_superseded": stats.ratio(sum(r["superseded"] for r in updates), len(updates)),
        "non_updates_superseded": stats.ratio(sum(r["superseded"] for r in keeps), len(keeps)),
        "first_conversation_stated_a_fact": stats.ratio(sum(r["stated"] for r in rows), len(rows)),
        "by_kind": {kind: {
            "updates_superseded": stats.ratio(sum(r["superseded"] for r in updates if r["kind"] == kind),
                                              sum(1 for r in updates if r["kind"] == kind)),
            "non_updates_superseded": stats.ratio(sum(r["superseded"] for r in keeps if r["kind"] == kind),
                                                  sum(1 for r in keeps if r["kind"] == kind))} for kind in kinds},
        "updates_caught": [r["id"] for r in updates if r["superseded"]],
        "updates_not_stated": [r["id"] for r in updates if not r["stated"]],
        "wrongly_superseded": [r["id"] for r in keeps if r["superseded"]],
        "seconds": round(time.monotonic() - started, 2),
        "what": {"updates_superseded": "share of update pairs where a memory of the first conversation became an "
                                       "ended fact (superseded Long-term, valid_to set) after the second",
                 "non_updates_superseded": "the same share over the pairs that must keep the first fact"},
    }

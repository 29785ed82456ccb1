"""Supersession on pairs written blind (``strata_dev/bench/data/supersession_blind_*.json``): an
earlier conversation states a fact, a later one either changes it (``update``) or only looks as if
it might (``non_update``). Each pair runs through the project's own capture and consolidation
services, in process on the in-memory parts the unit tests use (so it needs a checkout: it imports
``tests.unit.fakes``), with the configured extractor and router (the rules by default; a
model-backed pair of adapters can be passed in).

Counted per pair, from what the services stored:
- ``ended``: a Long-term memory of the first conversation is an ended fact after the second
  (superseded, ``superseded_by`` set, ``valid_to`` set);
- ``asked``: an open review entry of the second conversation names such a memory among the facts
  it would end;
- ``stated``: the first conversation left a current Long-term fact at all.
Reported: updates ended, updates ended or asked (and the share asked of those), non-updates ending
a fact, over each file. ``python -m strata_dev.bench.supersession FILE...``; with ``--model-replay
DIR`` the model extractor and router answer from the recorded replies in DIR through the local
replay server (:mod:`strata_dev.localstack.model_replay`), and every request without a reply is
written to ``--missing`` (default ``DIR/missing``) for recording; the model's requests fail over to
nothing (one attempt, no fallback to the rules), so a missing reply shows as a missing reply.
"""

from __future__ import annotations

import contextlib
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from core.domain import paths
from core.domain.records import MemoryItem


def conversation(side: dict[str, Any], tag: str) -> dict[str, Any]:
    return {"status": "completed", "started_at": f"{side['date']}T12:00:00+00:00", "transcript_segments": [
        {"id": f"{tag}-s{i}", "text": seg["text"], "speaker": seg["speaker"], "is_user": seg["speaker"] == "user"}
        for i, seg in enumerate(side["segments"])]}


def run_pair(pair: dict[str, Any], model_url: str | None = None) -> dict[str, Any]:
    from core.services import capture, consolidation, review
    from tests.unit.fakes.ports import world

    if model_url is None:
        w = world()
    else:
        from core.adapters.llm import build_extractor, build_router

        w = world(extractor="openai", router="openai", llm_base_url=model_url, llm_model="replay",
                  llm_max_attempts=1, llm_on_failure="fail")
        w.ctx._overrides.update(extractor=build_extractor(w.ctx.settings), router=build_router(w.ctx.settings))
    uid = "u-" + pair["id"]
    w.clock.current = _after(pair["first"])  # each conversation is captured the day it took place
    capture.capture_conversation(w.ctx, uid, "first", conversation(pair["first"], "first"))
    consolidation.run_pass(w.ctx, uid)
    items = _items(w, uid)
    first = {i.id for i in items if i.conversation_id == "first" and i.layer == "long_term" and i.status == "active"}
    w.clock.current = _after(pair["later"])
    capture.capture_conversation(w.ctx, uid, "later", conversation(pair["later"], "later"))
    consolidation.run_pass(w.ctx, uid)
    after = {i.id: i for i in _items(w, uid)}
    ended = sorted(m for m in first if after[m].status == "superseded" and after[m].valid_to is not None)
    asked = sorted({e["id"] for row in review.list_open(w.ctx, uid) for e in row["would_end"]} & first)
    return {"id": pair["id"], "label": pair["label"], "attribute": pair.get("attribute"), "stated": bool(first),
            "ended": bool(ended), "asked": bool(asked) and not ended,
            "first_facts": [after[m].content for m in sorted(first)],
            "later_facts": [i.content for i in after.values() if i.conversation_id == "later"]}


def _after(side: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(f"{side['date']}T13:00:00+00:00")


def _items(w: Any, uid: str) -> list[MemoryItem]:
    return [MemoryItem.from_store(d) for d in w.store.collection(paths.user(uid) + "/memory_items").values()]


def measure(path: str | Path, model_url: str | None = None) -> dict[str, Any]:
    pairs = json.loads(Path(path).read_text(encoding="utf-8"))["pairs"]
    rows = [run_pair(p, model_url) for p in pairs]
    updates = [r for r in rows if r["label"] == "update"]
    keeps = [r for r in rows if r["label"] == "non_update"]
    caught = [r for r in updates if r["ended"] or r["asked"]]

    def share(n: int, d: int) -> float | None:
        return round(n / d, 3) if d else None

    return {
        "data": Path(path).name, "pairs": len(rows), "updates": len(updates), "non_updates": len(keeps),
        "updates_ended": share(sum(r["ended"] for r in updates), len(updates)),
        "updates_ended_or_asked": share(len(caught), len(updates)),
        "asked_of_caught": share(sum(r["asked"] for r in caught), len(caught)),
        "non_updates_ending_a_fact": share(sum(r["ended"] for r in keeps), len(keeps)),
        "non_updates_asked": share(sum(r["asked"] for r in keeps), len(keeps)),
        "first_fact_stated": share(sum(r["stated"] for r in rows), len(rows)),
        "rows": rows,
    }


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m strata_dev.bench.supersession")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--model-replay", default=None, help="a folder of recorded model replies")
    parser.add_argument("--missing", default=None, help="where requests without a reply are written")
    parser.add_argument("--rows", action="store_true", help="print every pair's row too")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        url = None
        if args.model_replay:
            from strata_dev.localstack.model_replay import ReplayServer

            replies = Path(args.model_replay)
            server = stack.enter_context(ReplayServer(replies, Path(args.missing or replies / "missing")))
            url = server.base_url
        for path in args.files:
            out = measure(path, url)
            print(json.dumps({k: v for k, v in out.items() if k != "rows" or args.rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

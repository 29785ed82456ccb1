"""recall: retrieval quality on LoCoMo-format conversations, against BM25 over the raw turns.

Each session is written to Firestore as a completed conversation (segment ids = dia_ids, owner =
``speaker_a``); the real trigger path captures it. Then one consolidation pass (or more, while it
overflows) and an outbox drain run in this process — the same service code the scheduled
functions run. For every question with evidence, keyword / vector / hybrid search (limit 10) return
memories; the evidence turns *reached* at k are the segment ids cited by the quote references of
the first k memories. recall@k = share of the question's evidence turns reached. The baseline ranks
the raw turns with BM25 and reaches its first k turns. Extraction coverage = share of the gold
``observation`` facts whose turn is cited by some extracted memory (any layer or state), and share of
the questions' evidence turns cited by some extracted memory. Every file (``--data a.json,b.json``, by
default every shipped file, the development set first) is reported on its own, in one run.
"""

from __future__ import annotations

import functools
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.domain import paths
from core.ports import Embedder
from strata_dev.bench import harness, locomo, stats
from strata_dev.bench.bm25 import BM25
from strata_dev.bench.coverage import Tally
from strata_dev.cli import progress

MODES = ("keyword", "vector", "hybrid")
KS = (5, 10)


def _cited(item: Any) -> list[str]:
    out: list[str] = []
    for evidence in item.evidence:
        for ref in evidence.quote_refs:
            if ref.segment_id not in out:
                out.append(ref.segment_id)
    return out


def _reached(results: list[Any], k: int) -> set[str]:
    return {sid for scored in results[:k] for sid in _cited(scored.item)}


def _share(reached: set[str], evidence: tuple[str, ...]) -> float:
    return len(reached & set(evidence)) / len(set(evidence))


def _ingest(ctx: Any, uid: str, sample: locomo.Sample, owner: str) -> None:
    # The app's profile of its user: search reads the owner's display name from it, to ask a
    # question that names the owner in the owner's voice.
    ctx.paths.user(uid).set({"display_name": owner}, merge=True)
    ids = []
    for session in sample.sessions:
        cid = f"{sample.sample_id}-session-{session.index}"
        ids.append(cid)
        ctx.paths.doc(uid, paths.CONVERSATIONS, cid).set(locomo.conversation_doc(sample, session, owner))

    def captured() -> bool:
        snaps = ctx.client.get_all([ctx.paths.doc(uid, paths.CAPTURE_RUNS, cid) for cid in ids])
        return all(s.exists for s in snaps)

    harness.wait_for(captured, timeout_s=180, every=0.2)


def _settle(ctx: Any, uid: str) -> dict[str, int]:
    from core.services import consolidation

    routes: dict[str, int] = {}
    for _ in range(40):
        summary = consolidation.run_pass(ctx, uid)
        if summary.get("skipped") == "lease_held":
            time.sleep(0.5)
            continue
        for route, count in summary["routes"].items():
            routes[route] = routes.get(route, 0) + count
        if not summary["overflow"]:
            break
    harness.drain(ctx, uid)
    # A cold MiniLM model loads in the draining process first (a minute on a busy machine).
    harness.wait_for(lambda: harness.count_docs(ctx, uid, paths.OUTBOX) == 0, timeout_s=600, every=0.2)
    return routes


def in_owner_voice(question: str, owner: str) -> str:
    """The question as the owner would ask their own assistant: "What was Priya's thesis about?" →
    "What was my thesis about?" (memories speak of the owner as "User", never by name)."""
    name = re.escape(owner)
    question = re.sub(rf"\b{name}['’]s\b", "my", question)
    return re.sub(rf"\b{name}\b", "I", question)


def evaluate(sample: locomo.Sample, owner: str, searches: dict[str, Any], *,
             owner_voice: bool = False) -> dict[str, Any]:
    """recall@k per mode and for BM25 over raw turns; ``searches[mode](question)`` → ranked Scored.
    With ``owner_voice`` both BM25 and the searches get the question in the owner's voice."""
    turns = sample.turns()
    bm25 = BM25([t.text for t in turns])
    speaker = {t.dia_id: t.speaker for t in turns}
    rows = []
    for question in sample.questions:
        evidence = tuple(e for e in question.evidence if e in speaker)
        if not evidence:
            continue
        row: dict[str, Any] = {"owner_only": all(speaker[e] == owner for e in evidence)}
        text = in_owner_voice(question.question, owner) if owner_voice else question.question
        ranked_turns = [turns[i].dia_id for i in bm25.rank(text, max(KS))]
        for k in KS:
            row[f"bm25@{k}"] = _share(set(ranked_turns[:k]), evidence)
        for mode, fn in searches.items():
            results = fn(text)
            for k in KS:
                row[f"{mode}@{k}"] = _share(_reached(results, k), evidence)
        rows.append(row)
    return {"rows": rows}


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for name in ("bm25", *MODES):
        for k in KS:
            out[f"{name}_recall@{k}"] = stats.mean(r.get(f"{name}@{k}") for r in rows)
    return out


def _best_over_bm25(summary: dict[str, Any]) -> dict[str, Any]:
    """The search mode with the highest recall@10 and its ratio to BM25 over the raw turns."""
    scores: dict[str, float] = {m: summary[f"{m}_recall@10"] for m in MODES
                                if summary.get(f"{m}_recall@10") is not None}
    best = max(scores, key=lambda m: scores[m], default=None)
    return {"mode": best, "ratio": stats.ratio(scores[best], summary["bm25_recall@10"]) if best else None}


def _owners(sample: locomo.Sample, args: Any) -> list[str]:
    """Each named speaker as the owner in turn, when the questions name ``speaker_a`` (LoCoMo's
    questions name whom they ask about); ``speaker_a`` alone when none does (a file written in
    ``speaker_a``'s voice, such as the shipped development set) or with ``--owner a``."""
    name = re.escape(sample.speaker_a)
    named = any(re.search(rf"\b{name}\b", q.question) for q in sample.questions)
    if getattr(args, "owner", None) == "a" or not named:
        return [sample.speaker_a]
    return list(dict.fromkeys((sample.speaker_a, sample.speaker_b)))


def _paths(args: Any) -> list[str]:
    """``--data`` (one path or several, comma-separated) or every shipped file; ``--quick`` one file."""
    if args.data:
        files = [p.strip() for p in str(args.data).split(",") if p.strip()]
    else:
        files = [str(p) for p in locomo.default_paths()]
        if args.quick or args.size:
            files = [str(locomo.default_sample_path())]
    return files


def _run_file(ctx: Any, path: str, args: Any) -> dict[str, Any]:
    from core.services import search

    samples = locomo.load(path)
    if args.size:
        samples = samples[:args.size]
    elif args.quick:
        samples = samples[:1]
    all_rows: list[dict[str, Any]] = []
    voice_rows: list[dict[str, Any]] = []
    tally = Tally()
    memories = 0
    routes_total: dict[str, int] = {}
    started = time.monotonic()
    owners = 0
    plan = [(sample, owner) for sample in samples for owner in _owners(sample, args)]
    with progress.bar(f"recall {Path(path).name}: owners", len(plan),
                      json_mode=bool(getattr(args, "json", False))) as shown:
        for sample, owner in plan:
            owners += 1
            uid = harness.new_uid("recall")
            _ingest(ctx, uid, sample, owner)
            items = [harness_item(s) for s in ctx.paths.col(uid, paths.MEMORY_ITEMS).stream()]
            memories += len(items)
            tally.add(sample, {sid for item in items for sid in _cited(item)}, owner)
            for route, count in _settle(ctx, uid).items():
                routes_total[route] = routes_total.get(route, 0) + count
            searches = {mode: functools.partial(_search, getattr(search, mode), ctx, uid) for mode in MODES}
            if getattr(args, "fusion_grid", False):
                searches.update(_fusion_grid(ctx, uid))
            all_rows.extend(evaluate(sample, owner, searches)["rows"])
            voice_rows.extend(evaluate(sample, owner, searches, owner_voice=True)["rows"])
            shown.advance(note=f"{sample.sample_id} ({memories} memories)")
            if not shown.enabled:  # no bar (a pipe, a log file): one line per owner instead
                sys.stderr.write(f"[recall {time.strftime('%H:%M:%S')}] {Path(path).name}: {sample.sample_id} with "
                                 f"{owner} as owner done ({owners} of {len(plan)} owners, {memories} memories, "
                                 f"{time.monotonic() - started:.0f} s)\n")
                sys.stderr.flush()
    owner_rows = [r for r in all_rows if r["owner_only"]]
    summary = _summary(all_rows)
    voice = _summary(voice_rows)
    grid = sorted({k.rsplit("@", 1)[0] for r in all_rows for k in r if k.startswith("fuse_")})
    if grid:
        summary["fusion_grid@10"] = {name: stats.mean(r.get(f"{name}@10") for r in all_rows) for name in grid}
    return {
        "data": Path(path).name, "samples": len(samples), "turns": sum(len(s.turns()) for s in samples),
        "memories_extracted": memories, "routes": routes_total, "seconds": round(time.monotonic() - started, 2),
        "owners": owners,
        "all_questions": summary,
        "hybrid_over_bm25@10": stats.ratio(summary["hybrid_recall@10"], summary["bm25_recall@10"]),
        "best_over_bm25@10": _best_over_bm25(summary),
        "owner_evidence_questions": _summary(owner_rows),
        "owner_voice": voice,
        "owner_voice_best_over_bm25@10": _best_over_bm25(voice),
        "extraction_coverage": {"evidence_turns": tally.evidence_figures(),
                                "all_observations": stats.ratio(tally.hit_all, tally.gold),
                                "owner_observations": stats.ratio(tally.hit_owner, tally.gold_owner),
                                "observations": tally.gold, "owner_observations_count": tally.gold_owner},
    }


class RememberingEmbedder(Embedder):
    """The stack's embedder, remembering each text's vector: a question is embedded once for its
    vector and hybrid searches (and its owner-voice form when that is the same text)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self._memo: dict[str, list[float]] = {}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            self._memo.update(zip(missing, self.inner.embed(missing), strict=True))
        return [self._memo[t] for t in texts]


def run(args: Any) -> dict[str, Any]:
    import os

    from core import config
    from core.adapters.embeddings import build_embedder
    args.fusion_grid = os.environ.get("STRATA_BENCH_FUSION_GRID") == "1"
    ctx = harness.context(embedder=RememberingEmbedder(build_embedder(config.load())))
    only_updates = bool(getattr(args, "updates_only", False))
    files = [] if only_updates else [_run_file(ctx, path, args) for path in _paths(args)]
    from strata_dev.bench import updates
    knowledge_update = updates.measure(ctx, getattr(args, "updates", None), limit=12 if args.quick else None)
    return {
        "owner": "speaker_a only" if getattr(args, "owner", None) == "a" else "each speaker in turn",
        "embedder": ctx.settings.embedder, "files": files, "knowledge_update": knowledge_update,
        "what": {"owner_voice": "the same questions, the owner's name replaced by the first person (as the owner "
                                "asks their own assistant), for BM25 and the searches alike",
                 "extraction_coverage.evidence_turns": "share of the questions' evidence turns cited by some memory "
                                                       "of the asked user (the ceiling of any search)"},
        "baseline": "BM25 (k1=1.5, b=0.75) over the raw turns of the same conversations; reaches its top-k turns",
    }


def _fusion_grid(ctx: Any, uid: str) -> dict[str, Any]:
    """Reciprocal-rank fusions of wider keyword / vector pools, for tuning ``search.hybrid`` on the
    development set (``STRATA_BENCH_FUSION_GRID=1``): pool size, RRF k and the keyword weight."""
    from core.services import search

    @functools.cache
    def pools(question: str, size: int) -> tuple[list[Any], list[Any]]:
        return search.keyword(ctx, uid, question, size), search.vector(ctx, uid, question, size)

    def fused(size: int, k: int, weight: float, question: str) -> list[Any]:
        scores: dict[str, float] = {}
        items: dict[str, Any] = {}
        for w, results in zip((weight, 1.0), pools(question, size), strict=True):
            for rank, scored in enumerate(results):
                scores[scored.item.id] = scores.get(scored.item.id, 0.0) + w / (k + rank + 1)
                items[scored.item.id] = scored
        return [items[i] for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]

    return {f"fuse_p{size}_k{k}_w{weight}": functools.partial(fused, size, k, weight)
            for size in (10, 30) for k in (5, 20, 60) for weight in (0.5, 1.0, 2.0)}


def _search(fn: Any, ctx: Any, uid: str, question: str) -> list[Any]:
    return list(fn(ctx, uid, question, 10))


def harness_item(snap: Any) -> Any:
    from core.domain.records import MemoryItem

    return MemoryItem.from_store(snap.to_dict())

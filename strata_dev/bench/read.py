"""read: ``GET /v1/memories`` pages of 100 and keyword / vector search latency for a user with
10,000 memories, and Firestore reads per returned memory.

Seeding bypasses the pipeline on purpose (10,000 captures would dominate the run): items are
built by capture's own item constructor, finished exactly as the apply transaction finishes them
(revision 1, timestamps, ledger fields, ``settle()``), written with batched commits straight to
``memory_items``, and projected with the Typesense / Pinecone adapters directly. Latency is
measured over HTTP against the running ``api`` function; reads per returned memory are counted by
calling the same service functions in this process through an RPC-counting client.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from strata_dev.bench import harness, stats

SUBJECTS = ("climbing", "sourdough", "chess", "jazz piano", "trail running", "pottery", "birdwatching", "espresso",
            "Portuguese", "sailing", "watercolour", "cycling", "gardening", "photography", "kayaking", "yoga",
            "woodworking", "astronomy", "salsa dancing", "board games")
VERBS = ("loves", "practises", "is learning", "started", "teaches", "reads about", "collects books on", "trains at")
PLACES = ("in Lisbon", "on weekends", "with their sister", "before work", "at the community centre",
          "every Tuesday", "in the mountains", "with friends from university", "at home", "near the harbour")
QUERIES = ("climbing", "sourdough bread", "jazz piano", "Lisbon weekends", "sister", "trail running mountains",
           "pottery", "espresso", "board games friends", "astronomy")


def _items(uid: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    from core.domain.extraction import Candidate, ExtractionResult, GroundedCandidate, QuoteRef
    from core.services.capture import _candidate_item

    now = datetime.now(UTC)
    out = []
    for index in range(count):
        content = f"User {rng.choice(VERBS)} {rng.choice(SUBJECTS)} {rng.choice(PLACES)} (note {index})"
        conversation_id = f"seed-c{index // 20:05d}"
        candidate = Candidate(content=content, kind="fact", category="hobbies", subject="user", subject_label=None,
                              quotes=(content,))
        grounded = GroundedCandidate(candidate, (QuoteRef(f"{conversation_id}-s{index % 20}", content),), "user")
        extraction = ExtractionResult((candidate,), (), (), "rules", "1")
        item = _candidate_item(uid, conversation_id, grounded, extraction, "transcription", None, now, 30)
        item.revision = 1
        item.created_at = item.updated_at = now - timedelta(seconds=index)
        item.ledger_commit_id = "seed"
        item.ledger_sequence = 1
        out.append(item.settle().to_store())
    return out


def _seed(ctx: Any, uid: str, count: int) -> dict[str, Any]:
    from core.domain import ids
    from core.ports import ProjectionDoc

    started = time.monotonic()
    rows = _items(uid, count, random.Random(7))

    harness.write_item_rows(ctx, uid, rows)
    firestore_s = time.monotonic() - started
    docs = [ProjectionDoc(provider_id=ids.provider_id(uid, r["id"]), uid=uid, memory_id=r["id"], layer=r["layer"],
                          revision=r["revision"], content=r["content"], category=r["category"],
                          updated_at=r["updated_at"].timestamp()) for r in rows]
    for start in range(0, len(docs), 1000):
        chunk = docs[start:start + 1000]
        ctx.keyword_index.upsert(chunk)
        ctx.vector_index.upsert(chunk, ctx.embedder.embed([d.content for d in chunk]))
    return {"memories": count, "firestore_seconds": round(firestore_s, 2),
            "total_seconds": round(time.monotonic() - started, 2),
            "method": "memory_items written directly (batched, apply-path shape) and projected with the adapters; "
                      "bypasses capture and the outbox"}


def _timed(http: httpx.Client, path: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    response = http.get(path, params=params)
    elapsed = time.monotonic() - started
    response.raise_for_status()
    return elapsed, response.json()


def run(args: Any) -> dict[str, Any]:
    from core.api.auth import emulator_token
    from core.services import reads, search

    info = args.stack_info
    size = args.size or (2000 if args.quick else 10_000)
    repeats = 15 if args.quick else 40
    ctx = harness.context()
    uid = harness.new_uid("read")
    seeded = _seed(ctx, uid, size)

    http = httpx.Client(base_url=info["api_url"], timeout=30.0,
                        headers={"Authorization": "Bearer " + emulator_token(uid, info["project_id"])})
    for _ in range(3):  # warm the function's lazily built clients
        http.get("/v1/memories", params={"limit": 100})
        http.get("/v1/memories/search", params={"q": "climbing", "limit": 10})
        http.get("/v1/memories/vector-search", params={"q": "climbing", "limit": 10})
    list_times, cursor, returned = [], None, 0
    for _ in range(repeats):
        params: dict[str, Any] = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        elapsed, body = _timed(http, "/v1/memories", params)
        list_times.append(elapsed)
        returned += len(body.get("memories", []))
        cursor = body.get("next_cursor") or body.get("cursor")
    keyword_times, vector_times = [], []
    for index in range(repeats):
        query = QUERIES[index % len(QUERIES)]
        keyword_times.append(_timed(http, "/v1/memories/search", {"q": query, "limit": 10})[0])
        vector_times.append(_timed(http, "/v1/memories/vector-search", {"q": query, "limit": 10})[0])

    counted = harness.counted_context()
    page, _ = reads.list_memories(counted, uid, reads.ListQuery(limit=100))
    list_reads = counted.client.counts.reads
    counted.client.counts.reset()
    found = sum(len(search.keyword(counted, uid, q, 10)) for q in QUERIES)
    keyword_reads = counted.client.counts.reads
    counted.client.counts.reset()
    near = sum(len(search.vector(counted, uid, q, 10)) for q in QUERIES)
    vector_reads = counted.client.counts.reads
    return {
        "memories": size, "quick": bool(args.quick),
        "note": "quick mode seeds fewer than 10,000 memories" if size < 10_000 else "10,000-memory target size",
        "seed": seeded,
        "list_page_100": {**stats.latency_ms(list_times), "memories_returned": returned},
        "keyword_search": stats.latency_ms(keyword_times),
        "vector_search": stats.latency_ms(vector_times),
        "firestore_reads_per_returned_memory": {
            "list": stats.ratio(list_reads, len(page)), "keyword": stats.ratio(keyword_reads, found),
            "vector": stats.ratio(vector_reads, near)},
        "targets": {"list_p95_ms": 150, "keyword_p95_ms": 100},
    }

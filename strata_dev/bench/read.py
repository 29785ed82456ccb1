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
    from core.adapters.rules import sensitivity
    from core.domain.extraction import Candidate, ExtractionResult, GroundedCandidate, QuoteRef
    from core.services.capture import _candidate_item

    now = datetime.now(UTC)
    out = []
    for index in range(count):
        content = f"User {rng.choice(VERBS)} {rng.choice(SUBJECTS)} {rng.choice(PLACES)} (note {index})"
        conversation_id = f"seed-c{index // 20:05d}"
        candidate = Candidate(content=content, kind="fact", category="hobbies", subject="user", subject_label=None,
                              quotes=(content,))
        grounded = GroundedCandidate(candidate, (QuoteRef(segment_id=f"{conversation_id}-s{index % 20}", quote=content),), "user")
        extraction = ExtractionResult((candidate,), (), (), "rules", "1")
        item = _candidate_item(uid, conversation_id, grounded, extraction, "transcription", None, now, 30,
                               sensitivity=sensitivity)
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


def _latencies(http: httpx.Client, repeats: int, memory_ids: list[str]) -> dict[str, list[float]]:
    """User-visible latency over HTTP, in seconds: a walk of list pages, reads by id, the three
    searches. Every sample of an action is kept (merged over blocks by :func:`_blocks`)."""
    times: dict[str, list[float]] = {"list_page_100": [], "get": [], **{name: [] for name in SEARCHES.values()}}
    cursor = None
    for _ in range(repeats):
        params: dict[str, Any] = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        elapsed, body = _timed(http, "/v1/memories", params)
        times["list_page_100"].append(elapsed)
        times.setdefault("list_page_100_returned", []).append(float(len(body.get("memories", []))))
        cursor = body.get("next_cursor") or body.get("cursor")
    times["get"] = [_timed(http, f"/v1/memories/{memory_ids[i % len(memory_ids)]}", {})[0] for i in range(repeats)]
    for kind, name in SEARCHES.items():
        times[name] = [_timed(http, f"/v1/memories/{kind}", {"q": QUERIES[i % len(QUERIES)], "limit": 10})[0]
                       for i in range(repeats)]
    return times


def _blocks(info: dict[str, Any], levels: list[float], http: httpx.Client, repeats: int,
            memory_ids: list[str]) -> dict[float, dict[str, list[float]]]:
    """Each level measured in two half-size blocks, ordered A B B A (0, N, N, 0), so a drift in the
    machine's speed over the run (the emulator warming up, a neighbour's load) falls on both alike."""
    order = levels + levels[::-1]
    half = max(1, repeats // 2)
    out: dict[float, dict[str, list[float]]] = {ms: {} for ms in levels}
    for ms in order:
        with harness.rtt(info, ms):
            for name, samples in _latencies(http, half, memory_ids).items():
                out[ms].setdefault(name, []).extend(samples)
    return out


# Route → the name each search's figures carry.
SEARCHES = {"search": "keyword_search", "vector-search": "vector_search", "hybrid-search": "hybrid_search"}


def _round_trips(ctx: Any, uid: str, token: str, memory_id: str) -> dict[str, Any]:
    """Firestore RPCs per action, and how many of them ran one after another, counted through the
    API's own dispatcher in this process (:func:`roundtrips.counted_dispatch`)."""
    from strata_dev.bench import roundtrips

    actions: dict[str, tuple[str, str, dict[str, Any]]] = {
        "list_page_100": ("GET", "/v1/memories", {"limit": "100"}),
        "get": ("GET", f"/v1/memories/{memory_id}", {}),
        **{name: ("GET", f"/v1/memories/{kind}", {"q": "climbing", "limit": "10"}) for kind, name in SEARCHES.items()},
    }
    out = {name: roundtrips.counted_dispatch(ctx, method, path, token, query)
           for name, (method, path, query) in actions.items()}
    for figure in out.values():
        figure.pop("body", None)
    return out


def _writes(http: httpx.Client, repeats: int, tag: str) -> dict[str, list[float]]:
    """An explicit create, an edit of its content and a delete, ``repeats`` times, over HTTP (on a
    user of its own: the 10,000-memory user's reads stay as seeded)."""
    times: dict[str, list[float]] = {"explicit_create": [], "edit": [], "delete": []}
    for index in range(repeats):
        started = time.monotonic()
        created = http.post("/v3/memories", json={"content": f"User {tag} practises kayaking, note {index}"})
        times["explicit_create"].append(time.monotonic() - started)
        created.raise_for_status()
        memory_id = created.json()["id"]
        started = time.monotonic()
        http.patch(f"/v3/memories/{memory_id}", params={"value": f"User {tag} practises sailing, note {index}"}
                   ).raise_for_status()
        times["edit"].append(time.monotonic() - started)
        started = time.monotonic()
        http.delete(f"/v3/memories/{memory_id}").raise_for_status()
        times["delete"].append(time.monotonic() - started)
    return times


def _write_round_trips(ctx: Any, uid: str, token: str, tag: str) -> dict[str, Any]:
    from strata_dev.bench import roundtrips

    created = roundtrips.counted_dispatch(ctx, "POST", "/v3/memories", token,
                                          body={"content": f"User {tag} practises rowing, counted"})
    memory_id = created.pop("body", {}).get("id", "")
    edited = roundtrips.counted_dispatch(ctx, "PATCH", f"/v3/memories/{memory_id}", token,
                                         {"value": f"User {tag} practises canoeing, counted"})
    edited.pop("body", None)
    deleted = roundtrips.counted_dispatch(ctx, "DELETE", f"/v3/memories/{memory_id}", token)
    deleted.pop("body", None)
    return {"explicit_create": created, "edit": edited, "delete": deleted}


def run(args: Any) -> dict[str, Any]:
    from core.api.auth import emulator_token
    from core.services import reads, search
    from strata_dev.bench import roundtrips

    info = args.stack_info
    size = args.size or (2000 if args.quick else 10_000)
    repeats = 15 if args.quick else 40
    ctx = harness.context()
    uid = harness.new_uid("read")
    seeded = _seed(ctx, uid, size)
    token = emulator_token(uid, info["project_id"])
    http = httpx.Client(base_url=info["api_url"], timeout=30.0, headers={"Authorization": "Bearer " + token})
    first_page, _ = reads.list_memories(ctx, uid, reads.ListQuery(limit=100))
    memory_ids = [item.id for item in first_page]

    # Untimed first: the function's lazily built clients, and the emulator's JIT (a fresh emulator
    # is several times slower for its first requests, which would land on the first block).
    _latencies(http, max(3, repeats // 2), memory_ids)
    levels_ms = harness.rtt_levels(args)
    samples = _blocks(info, levels_ms, http, repeats, memory_ids)
    writer_uid = harness.new_uid("read-writes")
    writer_token = emulator_token(writer_uid, info["project_id"])
    writer = httpx.Client(base_url=info["api_url"], timeout=30.0, headers={"Authorization": "Bearer " + writer_token})
    _writes(writer, max(2, repeats // 4), "warm")
    write_repeats = 6 if args.quick else 20
    for ms in levels_ms + levels_ms[::-1]:  # A B B A, as the reads
        with harness.rtt(info, ms):
            for name, values in _writes(writer, write_repeats // 2, f"w{ms:g}").items():
                samples[ms].setdefault(name, []).extend(values)
    counted = harness.counted_context()
    levels: dict[str, Any] = {}
    for ms in levels_ms:
        returned = int(sum(samples[ms].pop("list_page_100_returned", [])))
        figures: dict[str, Any] = {name: stats.latency_ms(values) for name, values in samples[ms].items()}
        figures["list_page_100"]["memories_returned"] = returned
        with harness.rtt(info, ms):
            figures["firestore_round_trips"] = {**_round_trips(counted, uid, token, memory_ids[0]),
                                                **_write_round_trips(counted, writer_uid, writer_token, f"c{ms:g}")}
        levels[f"{ms:g}"] = figures
    zero = levels["0"]

    counted.client.counts.reset()
    page, _ = reads.list_memories(counted, uid, reads.ListQuery(limit=100))
    list_reads = counted.client.counts.reads
    counted.client.counts.reset()
    found = sum(len(search.keyword(counted, uid, q, 10)) for q in QUERIES)
    keyword_reads = counted.client.counts.reads
    counted.client.counts.reset()
    near = sum(len(search.vector(counted, uid, q, 10)) for q in QUERIES)
    vector_reads = counted.client.counts.reads
    out = {
        "memories": size, "quick": bool(args.quick),
        "note": "quick mode seeds fewer than 10,000 memories" if size < 10_000 else "10,000-memory target size",
        "seed": seeded,
        "list_page_100": zero["list_page_100"],
        "keyword_search": zero["keyword_search"],
        "vector_search": zero["vector_search"],
        "hybrid_search": zero["hybrid_search"],
        "get": zero["get"],
        **{name: zero[name] for name in ("explicit_create", "edit", "delete")},
        # counted under the delay when there is one: there, overlapping RPCs surely overlap
        "firestore_round_trips": levels[f"{levels_ms[-1]:g}"]["firestore_round_trips"],
        "firestore_reads_per_returned_memory": {
            "list": stats.ratio(list_reads, len(page)), "keyword": stats.ratio(keyword_reads, found),
            "vector": stats.ratio(vector_reads, near)},
        "targets": {"list_p95_ms": 150, "keyword_p95_ms": 100},
    }
    if len(levels) > 1:
        out["under_rtt"] = roundtrips.compare(levels, float(args.rtt_ms))
    return out

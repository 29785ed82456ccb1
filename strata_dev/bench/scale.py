"""scale: how each user-facing operation grows with the data, each beside its floor in the same run.

Two axes. **Memories**: one user with 1,000, 10,000 and 100,000 memories (``--sizes``). **Users**:
1, 100 and 1,000 users in the store, each holding a few memories, and one measured user with a
fixed number of memories among them. At every point, on the measured user, in this order:

- ``list``: pages of 100 of ``GET /v1/memories`` (``reads.list_memories``), walking the cursor;
  each page interleaved with its floor, the raw indexed Firestore query for the same page (same
  filter, order, cursor and limit) through the SDK; ``list_wire`` is that query's bare RPC with
  the answer left undecoded (no client does less).
- ``keyword`` / ``vector`` / ``hybrid``: the search services (provider query, hydration from
  Firestore, the historical scan); floors are the raw Typesense search and the raw vector query
  (its embedding computed beforehand), and both of them for hybrid.
- ``export``: every line of the export; floor: the user's item documents read in pages of 500.
- ``consolidation``: one pass (``consolidation.run_pass``) over up to 500 pending items (nudges and
  the continuation task dropped, so nothing else touches the user meanwhile); floor: the
  commits that pass made written again as the recorded, encoded ``Write`` messages, one transaction
  each (:func:`strata_dev.bench.counting.replay`).
- ``drain``: the outbox burst that pass left (``projection.drain_user`` until acknowledged); floor:
  the same events written back and drained the bare way (:func:`strata_dev.bench.project.bare_projection`:
  one events query, one batched item lookup, a Typesense bulk import beside one batched embedding
  and a raw vector upsert, batched deletes).
- ``delete_all``: ``deletion.delete_all``; floor: one batched write per 500 of the same item
  documents.
- ``wipe``: ``accounts.delete_account``; floor: batched deletes of the same documents (read before
  the wipe, written back after it, untimed).

Every figure runs in this process on the same clients, so what is compared is the service code
against the least any client must do for the same answer; both pay the same emulator. Every ratio
is ``ours / floor`` under ``<figure>_over_floor``. Growth exponents are least-squares slopes of
log(seconds) against log(size) along each axis; ``touched`` says how the data an operation must
touch grows along that axis (1: with the size, 0: not at all), so an exponent near ``touched`` is
as good as the operation can be.

``--rtt-ms N`` (the stack's latency proxy, see docs/benchmarks.md "Under network latency"): every
point of the memories axis is measured a second time with each Firestore, Typesense and vector-index
request delayed by N ms, on a user of its own seeded the same way (a pass routes the items it takes,
so the first user has none left pending), and reported under ``under_rtt`` beside the zero-delay
figures: each figure at N, its zero-delay value, and the sequential round trips the difference
implies (``(at N − at 0) / N``: p50 for latencies, seconds otherwise); for the consolidation pass
also the counted sequential Firestore round trips at both levels (``firestore.sequential_rpcs``,
the RPC-counting client). The users axis is measured at zero delay only.

Seeding bypasses capture (as the read benchmark does): finished items in the apply path's shape are
batch-written to ``memory_items`` and projected with the adapters (background users with the raw
provider calls). The stack's scheduled jobs are paused for the run.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.domain import paths
from strata_dev.bench import harness, project, stats
from strata_dev.bench.read import QUERIES, _items
from strata_dev.cli import progress

FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (100, 300, 1_000)
FULL_USERS = (1, 100, 1_000)
QUICK_USERS = (1, 10, 30)
PASS_ITEMS = 500
QUICK_PASS_ITEMS = 100
WRITE_BATCH = 400
FIGURES = ("list", "keyword", "vector", "hybrid", "export", "consolidation", "drain", "delete_all", "wipe")
LATENCY_FIGURES = ("list", "keyword", "vector", "hybrid")
TOUCHED = {"memories": {"list": 0, "keyword": 0, "vector": 0, "hybrid": 0, "export": 1, "consolidation": 0,
                        "drain": 0, "delete_all": 1, "wipe": 1},
           "users": dict.fromkeys(FIGURES, 0)}


# ------------------------------------------------------------------------------------ seeding
def _write_rows(ctx: Any, uid: str, rows: list[dict[str, Any]]) -> None:
    harness.write_item_rows(ctx, uid, rows, WRITE_BATCH)


def _project_raw(ctx: Any, uid_rows: list[tuple[str, dict[str, Any]]]) -> None:
    """Provider rows for many users with the raw bulk calls (the adapters clean up per user first)."""
    from core.domain import ids

    for start in range(0, len(uid_rows), 1000):
        chunk = uid_rows[start:start + 1000]
        ctx.keyword_index.ensure_ready()
        ctx.keyword_index._documents.import_(
            [{"id": ids.provider_id(uid, r["id"]), "uid": uid, "memory_id": r["id"], "layer": r["layer"],
              "revision": int(r["revision"]), "content": r["content"], "category": r["category"],
              "updated_at": r["updated_at"].timestamp()} for uid, r in chunk], {"action": "upsert"})
        vectors = ctx.embedder.embed([r["content"] for _, r in chunk])
        records = [{"id": ids.provider_id(uid, r["id"]), "values": [float(x) for x in vector],
                    "metadata": {"uid": uid, "memory_id": r["id"], "layer": r["layer"], "revision": int(r["revision"])}}
                   for (uid, r), vector in zip(chunk, vectors, strict=True)]
        for part in range(0, len(records), 100):
            ctx.vector_index._index.upsert(vectors=records[part:part + 100], namespace=ctx.vector_index.namespace)


def seed_user(ctx: Any, uid: str, count: int, seed: int = 7) -> float:
    """``count`` finished items for ``uid`` in Firestore and both providers; returns seconds."""
    import random

    started = time.monotonic()
    rows = _items(uid, count, random.Random(seed))
    _write_rows(ctx, uid, rows)
    _project_raw(ctx, [(uid, r) for r in rows])
    return time.monotonic() - started


def seed_background(ctx: Any, users: int, per_user: int) -> float:
    import random

    started = time.monotonic()
    rng = random.Random(11)
    uid_rows: list[tuple[str, dict[str, Any]]] = []
    for _ in range(users):
        uid = harness.new_uid("scale-bg")
        uid_rows.extend((uid, row) for row in _items(uid, per_user, rng))
    from concurrent.futures import ThreadPoolExecutor

    from core.adapters.firestore.wire import set_document

    def write(chunk: list[tuple[str, dict[str, Any]]]) -> None:
        batch = ctx.client.batch()
        for uid, row in chunk:
            set_document(batch, ctx.paths.doc(uid, paths.MEMORY_ITEMS, row["id"]), row)
        batch.commit()

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, [uid_rows[i:i + WRITE_BATCH] for i in range(0, len(uid_rows), WRITE_BATCH)]))
    _project_raw(ctx, uid_rows)
    return time.monotonic() - started


# ------------------------------------------------------------------------------------ floors
def _list_floor(ctx: Any, uid: str, after: Any) -> int:
    """The raw indexed query for the same page through the SDK, every document decoded."""
    from core.adapters.firestore.queries import build

    collection = ctx.paths.col(uid, paths.MEMORY_ITEMS)
    start = None if after is None else {"created_at": after[0], "__name__": collection.document(after[1])}
    query = build(collection, "list_by_read_class", {"read_class": ["default"]}, limit=100, start_after=start)
    return sum(1 for snap in query.stream() if snap.to_dict() is not None)


def _list_wire(ctx: Any, uid: str, after: Any) -> int:
    """The same query's RunQuery RPC with its answer left encoded: the least any client does."""
    from core.adapters.firestore.queries import build

    collection = ctx.paths.col(uid, paths.MEMORY_ITEMS)
    start = None if after is None else {"created_at": after[0], "__name__": collection.document(after[1])}
    query = build(collection, "list_by_read_class", {"read_class": ["default"]}, limit=100, start_after=start)
    parent, _ = query._parent._parent_info()
    request = {"parent": parent, "structured_query": query._to_protobuf()}
    client = ctx.client
    return sum(1 for r in client._firestore_api.run_query(request=request, metadata=client._rpc_metadata)
               if r._pb.HasField("document"))


def _keyword_floor(ctx: Any, uid: str, query: str) -> int:
    from core.adapters.typesense_index import _any_of, _quote
    from core.services.search import DEFAULT_LAYERS

    params = {"q": ctx.keyword_terms(query), "query_by": "content",
              "filter_by": f"uid:={_quote(uid)} && {_any_of('layer', DEFAULT_LAYERS)}",
              "per_page": 20, "include_fields": "id,uid,memory_id,layer", "drop_tokens_threshold": 20,
              "typo_tokens_threshold": 20}
    return len(ctx.keyword_index._documents.search(params).get("hits", []))


def _vector_floor(ctx: Any, uid: str, vector: list[float]) -> int:
    from core.services.search import DEFAULT_LAYERS

    index = ctx.vector_index
    response = index._index.query(vector=vector, top_k=20, include_metadata=True, namespace=index.namespace,
                                  filter={"$and": [{"uid": {"$eq": uid}}, {"layer": {"$in": list(DEFAULT_LAYERS)}}]})
    return len(response.matches)


def _both_floors(ctx: Any, uid: str, query: str, vector: list[float]) -> int:
    return _keyword_floor(ctx, uid, query) + _vector_floor(ctx, uid, vector)


def _timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - started, value


# ------------------------------------------------------------------------------------ one point
def _latencies(ctx: Any, uid: str, repeats: int) -> dict[str, Any]:
    from core.services import reads, search

    out: dict[str, Any] = {}
    ours: list[float] = []
    floor: list[float] = []
    wire: list[float] = []
    cursor: str | None = None
    after = None
    for _ in range(3):  # warm: channels, providers, the embedder
        reads.list_memories(ctx, uid, reads.ListQuery(limit=100))
        _list_floor(ctx, uid, None)
        search.hybrid(ctx, uid, "climbing", 10)
    for _ in range(repeats):
        seconds, (_, next_cursor) = _timed(reads.list_memories, ctx, uid, reads.ListQuery(limit=100, cursor=cursor))
        ours.append(seconds)
        floor.append(_timed(_list_floor, ctx, uid, after)[0])
        wire.append(_timed(_list_wire, ctx, uid, after)[0])
        if next_cursor:
            cursor, after = next_cursor, reads.decode_cursor(next_cursor)
        else:
            cursor, after = None, None  # walked to the end: start again from the top
    out["list"] = {"ours": stats.latency_ms(ours), "floor": stats.latency_ms(floor), "wire": stats.latency_ms(wire),
                   "floor_is": "the same page's indexed query through the SDK, documents decoded"}
    timings: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in ("keyword", "vector", "hybrid")}
    for index in range(repeats):
        query = QUERIES[index % len(QUERIES)]
        [embedding] = ctx.embedder.embed([query])
        vector = [float(x) for x in embedding]
        timings["keyword"][0].append(_timed(search.keyword, ctx, uid, query, 10)[0])
        timings["keyword"][1].append(_timed(_keyword_floor, ctx, uid, query)[0])
        timings["vector"][0].append(_timed(search.vector, ctx, uid, query, 10)[0])
        timings["vector"][1].append(_timed(_vector_floor, ctx, uid, vector)[0])
        timings["hybrid"][0].append(_timed(search.hybrid, ctx, uid, query, 10)[0])
        timings["hybrid"][1].append(_timed(_both_floors, ctx, uid, query, vector)[0])
    floors = {"keyword": "the raw Typesense search (same parameters)",
              "vector": "the raw vector query (embedding computed beforehand)",
              "hybrid": "the raw Typesense search and the raw vector query, one after the other"}
    for name, (mine, bare) in timings.items():
        out[name] = {"ours": stats.latency_ms(mine), "floor": stats.latency_ms(bare), "floor_is": floors[name]}
    return out


def _export(ctx: Any, uid: str) -> dict[str, Any]:
    from core.services import export

    seconds, lines = _timed(lambda: sum(1 for _ in export.export_lines(ctx, uid)))  # type: ignore[misc]

    def bare() -> int:
        rows, last = 0, None
        query = ctx.paths.col(uid, paths.MEMORY_ITEMS).order_by("__name__").limit(500)
        while True:
            page = [(s, s.to_dict()) for s in (query.start_after(last) if last is not None else query).stream()]
            rows += len(page)
            if len(page) < 500:
                return rows
            last = page[-1][0]

    floor_seconds, rows = _timed(bare)
    return {"ours_s": seconds, "floor_s": floor_seconds, "lines": lines, "rows": rows,
            "floor_is": "the item documents read in pages of 500 through the SDK"}


def _consolidation(uid: str, selected: int) -> dict[str, Any]:
    from core.services import consolidation
    from strata_dev.bench.cost import CountingTasks
    from strata_dev.bench.counting import replay

    # Nudges and the continuation task a pass that overflows enqueues are dropped: the stack's own
    # functions would otherwise run the next pass and drain the burst measured next.
    counted = harness.counted_context(publisher=harness.NullPublisher(), tasks=CountingTasks())
    counted.paths.account_deletion(uid).get()  # open the channel before the clock starts
    counted.client.counts.reset(record=True)
    seconds, summary = _timed(consolidation.run_pass, counted, uid, max_selected=selected,
                              settle_outbox=False)
    recorded = counted.client.counts.recording or []
    counts = {**counted.client.counts.snapshot(), "chain": counted.client.counts.chain()}
    replayed = replay(harness.context().client, recorded, uid, "scale-pass")
    return {"ours_s": seconds, "floor_s": replayed.floor_seconds, "sdk_writes_s": replayed.sdk_seconds,
            "selected": summary.get("selected"), "routes": summary.get("routes"), "skipped": summary.get("skipped"),
            "commits": replayed.transactions, "documents": replayed.documents, "firestore": counts,
            "floor_is": "the pass's commits replayed as their encoded Write messages, one transaction each"}


def _drain(ctx: Any, uid: str) -> dict[str, Any]:
    from core.services import projection

    events = [(s.reference, s.to_dict()) for s in ctx.paths.col(uid, paths.OUTBOX).stream()]
    started = time.perf_counter()
    report = projection.DrainReport()
    for _ in range(50):
        round_report = projection.drain_user(ctx, uid)
        report.add(round_report)
        if report.acknowledged + report.dead >= len(events):
            break
        if round_report.skipped or round_report.retry_later:
            time.sleep(0.05)
    seconds = time.perf_counter() - started
    for start in range(0, len(events), WRITE_BATCH):  # the same burst back, for the floor (untimed)
        batch = ctx.client.batch()
        for ref, data in events[start:start + WRITE_BATCH]:
            batch.set(ref, data)
        batch.commit()
    floor_seconds, _ = _timed(project.bare_projection, ctx, uid)
    return {"ours_s": seconds, "floor_s": floor_seconds, "events": len(events), "acknowledged": report.acknowledged,
            "floor_is": "one events query, one batched item lookup, a Typesense bulk import beside one batched "
                        "embedding and a raw vector upsert, batched deletes"}


def _delete_all(ctx: Any, uid: str) -> dict[str, Any]:
    from core.services import deletion

    refs = [ctx.paths.doc(uid, paths.MEMORY_ITEMS, s.id) for s in ctx.paths.col(uid, paths.MEMORY_ITEMS).select([]).stream()]
    seconds, summary = _timed(deletion.delete_all, ctx, uid)

    def bare() -> None:
        for start in range(0, len(refs), 500):
            batch = ctx.client.batch()
            for ref in refs[start:start + 500]:
                batch.set(ref, {"bench_floor": start}, merge=True)
            batch.commit()

    floor_seconds, _ = _timed(bare)
    return {"ours_s": seconds, "floor_s": floor_seconds, "deleted": summary.get("deleted"), "documents": len(refs),
            "floor_is": "one batched write per 500 of the same item documents"}


def _documents_under(ctx: Any, uid: str) -> list[tuple[Any, dict[str, Any]]]:
    out: list[tuple[Any, dict[str, Any]]] = []
    for collection in ctx.paths.user(uid).collections():
        out.extend((snap.reference, snap.to_dict() or {}) for snap in collection.stream())
    return out


def _write_back(ctx: Any, documents: list[tuple[Any, dict[str, Any]]], budget: int = 3_000_000) -> None:
    """Write ``documents`` back in batches of at most WRITE_BATCH documents and about ``budget``
    encoded bytes (a commit request may not exceed 4 MiB; ledger commits of 100 items are large)."""
    from core.adapters.firestore.wire import encode_document

    batch, count, size = ctx.client.batch(), 0, 0
    for ref, data in documents:
        write = encode_document(ref._document_path, data)
        if count and (count == WRITE_BATCH or size + write.ByteSize() > budget):
            batch.commit()
            batch, count, size = ctx.client.batch(), 0, 0
        batch._add_write_pbs([write])
        count, size = count + 1, size + write.ByteSize()
    if count:
        batch.commit()


def _wipe(ctx: Any, uid: str) -> dict[str, Any]:
    from core.services import accounts

    documents = _documents_under(ctx, uid)  # untimed: what the wipe will delete
    seconds, _ = _timed(accounts.delete_account, ctx, uid)
    _write_back(ctx, documents)  # the same documents back, for the floor (untimed)

    def bare() -> None:
        for start in range(0, len(documents), 500):
            batch = ctx.client.batch()
            for ref, _ in documents[start:start + 500]:
                batch.delete(ref)
            batch.commit()

    floor_seconds, _ = _timed(bare)
    return {"ours_s": seconds, "floor_s": floor_seconds, "documents": len(documents),
            "floor_is": "batched deletes (500 a commit) of the same documents (every collection of the account, "
                        "written back after the wipe); the wipe also purges both providers by uid"}


def _progress(message: str) -> None:
    sys.stderr.write(f"[scale {time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def measure_point(ctx: Any, uid: str, size: int, repeats: int, pass_items: int = PASS_ITEMS) -> dict[str, Any]:
    """Every figure on ``uid`` (already seeded with ``size`` memories), in the order of the module doc."""
    out: dict[str, Any] = _latencies(ctx, uid, repeats)
    _progress(f"{size} memories: reads done")
    out["export"] = _export(ctx, uid)
    out["consolidation"] = _consolidation(uid, min(size, pass_items))
    _progress(f"{size} memories: export and pass done")
    out["drain"] = _drain(ctx, uid)
    out["delete_all"] = _delete_all(ctx, uid)
    _progress(f"{size} memories: drain and delete-all done")
    out["wipe"] = _wipe(ctx, uid)
    for name in FIGURES:
        figure = out[name]
        if name in LATENCY_FIGURES:
            figure["p95_over_floor"] = stats.ratio(figure["ours"]["p95_ms"], figure["floor"]["p95_ms"])
            figure["p50_over_floor"] = stats.ratio(figure["ours"]["p50_ms"], figure["floor"]["p50_ms"])
        else:
            figure["over_floor"] = stats.ratio(figure["ours_s"], figure["floor_s"])
            figure["ours_s"], figure["floor_s"] = round(figure["ours_s"], 3), round(figure["floor_s"], 3)
    return out


def beside(zero: dict[str, Any], delayed: dict[str, Any], rtt_ms: float) -> dict[str, Any]:
    """Each figure under ``rtt_ms`` beside its zero-delay value, with the sequential round trips the
    difference implies; the consolidation pass's counted sequential Firestore round trips at both."""
    out: dict[str, Any] = {"rtt_ms": rtt_ms}
    for name in FIGURES:
        a, b = zero[name], delayed[name]
        if name in LATENCY_FIGURES:
            row: dict[str, Any] = {"p50_ms": b["ours"]["p50_ms"], "p95_ms": b["ours"]["p95_ms"],
                                   "zero_delay_p50_ms": a["ours"]["p50_ms"], "zero_delay_p95_ms": a["ours"]["p95_ms"]}
            base, under = a["ours"]["p50_ms"], b["ours"]["p50_ms"]
        else:
            row = {"ours_s": b["ours_s"], "zero_delay_ours_s": a["ours_s"]}
            base = a["ours_s"] * 1000 if a["ours_s"] is not None else None
            under = b["ours_s"] * 1000 if b["ours_s"] is not None else None
        if base is not None and under is not None and rtt_ms:
            row["estimated_sequential_round_trips"] = round((under - base) / rtt_ms, 1)
        if name == "consolidation":
            row["firestore_sequential_rpcs"] = b["firestore"]["sequential_rpcs"]
            row["zero_delay_firestore_sequential_rpcs"] = a["firestore"]["sequential_rpcs"]
            row["firestore_rpcs"] = b["firestore"]["rpcs"]
            row["selected"] = b["selected"]
        out[name] = row
    return out


# ------------------------------------------------------------------------------------ fits
def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log(y) against log(x); None with fewer than two usable points."""
    pairs = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x and y and x > 0 and y > 0]
    if len(pairs) < 2 or len({p[0] for p in pairs}) < 2:
        return None
    mx = sum(p[0] for p in pairs) / len(pairs)
    my = sum(p[1] for p in pairs) / len(pairs)
    den = sum((p[0] - mx) ** 2 for p in pairs)
    return round(sum((p[0] - mx) * (p[1] - my) for p in pairs) / den, 3)


def figure_value(point: dict[str, Any], name: str, which: str = "ours") -> float | None:
    figure = point[name]
    if name in LATENCY_FIGURES:
        p95 = figure[which]["p95_ms"]
        return None if p95 is None else p95 / 1000.0
    return float(figure[f"{which}_s"])


def exponents(points: list[dict[str, Any]], axis: str) -> dict[str, Any]:
    xs = [float(p[axis]) for p in points]
    out = {}
    for name in FIGURES:
        ours = [figure_value(p["figures"], name) or 0.0 for p in points]
        floor = [figure_value(p["figures"], name, "floor") or 0.0 for p in points]
        mine = slope(xs, ours)
        touched = TOUCHED[axis][name]
        out[name] = {"exponent": mine, "floor_exponent": slope(xs, floor), "touched": touched,
                     "no_faster_than_data": None if mine is None else mine <= touched + 0.2}
    return out


def flat(points: list[dict[str, Any]], axis: str) -> dict[str, Any]:
    """``<figure>_over_floor`` keys per point (the latency figures at p95)."""
    rows = []
    for p in points:
        row: dict[str, Any] = {axis: p[axis]}
        for name in FIGURES:
            figure = p["figures"][name]
            key = f"{name}_p95_over_floor" if name in LATENCY_FIGURES else f"{name}_over_floor"
            row[key] = figure["p95_over_floor"] if name in LATENCY_FIGURES else figure["over_floor"]
        rows.append(row)
    return {"points": rows}


# ------------------------------------------------------------------------------------ plot
def plot(result: dict[str, Any], path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    for column, axis in enumerate(("memories", "users")):
        points = result[axis]["runs"]
        if not points:
            continue
        xs = [p[axis] for p in points]
        for row, names in enumerate((LATENCY_FIGURES, [n for n in FIGURES if n not in LATENCY_FIGURES])):
            ax = axes[row][column]
            for index, name in enumerate(names):
                color = f"C{index}"
                ax.plot(xs, [figure_value(p["figures"], name) for p in points], "o-", color=color, label=name)
                ax.plot(xs, [figure_value(p["figures"], name, "floor") for p in points], "x--", color=color,
                        alpha=0.6, label=f"{name} floor")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("memories of the user" if axis == "memories" else "users in the store")
            ax.set_ylabel("p95 seconds" if row == 0 else "seconds")
            ax.set_title(f"{'latency p95' if row == 0 else 'bulk operations'} by {axis} (solid: ours, dashed: floor)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return str(path)


# ------------------------------------------------------------------------------------ run
def _sizes(args: Any) -> tuple[tuple[int, ...], tuple[int, ...], int, int, int, int]:
    """(memory sizes, user counts, memories of the measured user on the users axis, memories per
    background user, list/search repeats, pending items a pass takes)."""
    if getattr(args, "size", None):  # a tiny run (the smoke test): every axis at one or two small points
        size = int(args.size)
        return (size, size * 2), (1, 3), size, 2, 3, PASS_ITEMS
    if args.quick:
        return QUICK_SIZES, QUICK_USERS, 200, 5, 10, QUICK_PASS_ITEMS
    return FULL_SIZES, FULL_USERS, 1_000, 10, 30, PASS_ITEMS


def run(args: Any) -> dict[str, Any]:
    from strata_dev.scheduler import JOBS, LocalJobs

    sizes, users, target, per_user, repeats, pass_items = _sizes(args)
    if getattr(args, "max_memories", None):
        sizes = tuple(s for s in sizes if s <= args.max_memories)
    ctx = harness.context(publisher=harness.NullPublisher())
    scheduled = LocalJobs(ctx.client)
    paused = [name for name in JOBS if not scheduled.paused(name)]
    for name in paused:
        scheduled.pause(name)
    result: dict[str, Any] = {"memories": {"runs": []}, "users": {"runs": []}, "repeats": repeats,
                              "pass_items": pass_items}
    def save() -> None:  # the figures so far, after every point: a long run that is stopped keeps them
        if getattr(args, "out", None):
            partial = dict(result)
            for axis in ("memories", "users"):
                runs = result[axis]["runs"]
                partial[axis] = {**result[axis], "exponents": exponents(runs, axis), **flat(runs, axis)}
            Path(args.out).write_text(json.dumps(partial, indent=1, default=str))

    try:
        with progress.bar("scale: points", len(users) + len(sizes), json_mode=bool(getattr(args, "json", False))) as shown:
            # The users axis first and the memory sizes in ascending order, the largest last: the
            # emulator does not give back what a large point held (after a 100,000-memory point the
            # same 1,000-memory list page took about three times as long, p95 109 -> 299 ms), so each
            # point finds the store no heavier than the points before it left it.
            present = 0
            for count in users:
                background = seed_background(ctx, count - 1 - present, per_user) if count - 1 > present else 0.0
                present = count - 1
                uid = harness.new_uid("scale-usr")
                seeded = seed_user(ctx, uid, target)
                _progress(f"{count} users seeded")
                figures = measure_point(ctx, uid, target, repeats, pass_items)
                result["users"]["runs"].append({"users": count, "memories_of_measured_user": target,
                                                "memories_per_other_user": per_user,
                                                "seed_seconds": round(seeded + background, 2), "figures": figures})
                save()
                shown.advance(note=f"{count} users")
            for size in sizes:
                uid = harness.new_uid("scale-mem")
                seeded = seed_user(ctx, uid, size)
                _progress(f"one user, {size} memories seeded in {seeded:.1f} s")
                started = time.monotonic()
                figures = measure_point(ctx, uid, size, repeats, pass_items)
                point: dict[str, Any] = {"memories": size, "seed_seconds": round(seeded, 2),
                                         "measure_seconds": round(time.monotonic() - started, 2), "figures": figures}
                for rtt_ms in harness.rtt_levels(args)[1:]:
                    delayed_uid = harness.new_uid("scale-rtt")
                    seed_user(ctx, delayed_uid, size)
                    _progress(f"one user, {size} memories: measuring under {rtt_ms:g} ms per request")
                    with harness.rtt(args.stack_info, rtt_ms):
                        delayed = measure_point(ctx, delayed_uid, size, repeats, pass_items)
                    point["under_rtt"] = beside(figures, delayed, rtt_ms)
                result["memories"]["runs"].append(point)
                save()
                shown.advance(note=f"{size} memories")
    finally:
        for name in paused:
            scheduled.resume(name)
    for axis in ("memories", "users"):
        runs = result[axis]["runs"]
        result[axis]["exponents"] = exponents(runs, axis)
        result[axis].update(flat(runs, axis))
    lists = [p["figures"]["list"]["p95_over_floor"] for axis in ("memories", "users") for p in result[axis]["runs"]]
    result["list_p95_over_floor_max"] = max((v for v in lists if v is not None), default=None)
    result["list_goal_met"] = result["list_p95_over_floor_max"] is not None and result["list_p95_over_floor_max"] <= 1.5
    from strata_dev.bench import startup

    # A tiny run (--size) starts only the two functions with targets.
    _progress("cold starts")
    result["startup"] = startup.run(args, only=("api", "on_conversation_complete") if getattr(args, "size", None)
                                    else None)
    if getattr(args, "plot", None):
        result["plot"] = plot(result, Path(args.plot))
    result["note"] = ("sizes " + ", ".join(str(s) for s in sizes) + " memories; users " +
                      ", ".join(str(u) for u in users))
    return result

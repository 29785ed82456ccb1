"""project: outbox events projected per second, commit → searchable lag, documents per provider call.

Throughput (in process, counted): two fresh users get the same conversations captured with
projection nudges dropped, so their outbox events stay pending. :func:`projection.drain_user` — the
code the Pub/Sub-pushed function runs — drains the first; the baseline does the minimum by hand on
the second: one query for the events plus one batched lookup of their items, one Typesense bulk
import beside one batched embedding (the service's embedder) and one raw vector upsert, one batched
acknowledgement (delete).

Lag (the real path): conversations are captured in process for a third user with the *real*
publisher; each commit's nudge travels Pub/Sub → push → ``outbox_drain`` function → Typesense. Lag
is from the moment the commit was announced to the first poll (every 50 ms) that finds the memory's
projection in Typesense.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.domain import paths
from core.domain import projection as plans
from strata_dev.bench import harness, stats


def bare_projection(ctx: Any, uid: str) -> int:
    """The minimum of a drain by hand: one query for the user's outbox events, one batched lookup of
    their items, then the Typesense bulk import beside one batched embedding of the texts the drain
    embeds (:func:`core.domain.projection.vector_text`) and one raw vector upsert, and one batched
    acknowledgement (delete) of the events. No fence, lease, cleanup or graph. Returns the number of
    events; the caller times it."""
    from core.domain.records import MemoryItem

    events = list(ctx.paths.col(uid, paths.OUTBOX).stream())
    memory_ids: list[str] = sorted({str(m) for e in events if (m := (e.to_dict() or {}).get("memory_id"))})
    refs = [ctx.paths.doc(uid, paths.MEMORY_ITEMS, mid) for mid in memory_ids]
    items = {s.id: MemoryItem.from_store(s.to_dict()) for s in ctx.client.get_all(refs) if s.exists}
    docs, _ = plans.rows(uid, memory_ids, items, False, sensitivity=ctx.sensitivity)  # the drain's own rows: the same texts to embed
    rows = [{"id": d.provider_id, "uid": uid, "memory_id": d.memory_id, "layer": d.layer, "revision": int(d.revision),
             "content": d.content, "category": d.category, "updated_at": d.updated_at} for d in docs]
    index, vectors = ctx.keyword_index, ctx.vector_index
    if rows:
        def keyword() -> None:
            index._documents.import_(rows, {"action": "upsert"})  # the raw bulk import, no cleanup

        def vector() -> None:  # one batched embedding, one raw upsert, no metadata cleanup
            values = ctx.embedder.embed([plans.vector_text(d) for d in docs])
            vectors._index.upsert(vectors=[{"id": row["id"], "values": [float(x) for x in value],
                                            "metadata": {"uid": uid, "memory_id": row["memory_id"]}}
                                           for row, value in zip(rows, values, strict=True)],
                                  namespace=vectors.namespace)

        with ThreadPoolExecutor(max_workers=2) as pool:  # side by side, as the drain writes them
            for done in [pool.submit(keyword), pool.submit(vector)]:
                done.result()
    for start in range(0, len(events), 500):
        batch = ctx.client.batch()
        for snap in events[start:start + 500]:
            batch.delete(snap.reference)
        batch.commit()
    return len(events)


def _baseline(ctx: Any, uid: str) -> tuple[int, float]:
    ctx.keyword_index.ensure_ready()
    ctx.vector_index.ensure_ready()
    ctx.embedder.embed(["warm up"])  # the model loaded before the clock starts, as _warm does for the drain
    started = time.monotonic()
    events = bare_projection(ctx, uid)
    return events, time.monotonic() - started


def _drain(ctx: Any, uid: str, events: int, rounds: int = 50) -> Any:
    """``drain_user`` until every event is acknowledged or dead (a live lease elsewhere: wait).

    Unlike :func:`harness.drain` it does not count the outbox after each drain: that count query is
    the harness's, not the projection's, and would be timed with it.
    """
    from core.services import projection

    total = projection.DrainReport()
    for _ in range(rounds):
        report = projection.drain_user(ctx, uid)
        total.add(report)
        if total.acknowledged + total.dead >= events:
            break
        if report.skipped or report.retry_later:
            time.sleep(0.2)
    return total


def _warm(ctx: Any, uid: str) -> None:
    """Open the fresh counted context's connections before the clock starts, as a warm function
    instance has them: the gRPC channel, both provider clients (the Pinecone SDK loads its TLS
    trust store when built) and the embedder. The baseline runs on the already-warm setup context."""
    ctx.keyword_index.ensure_ready()
    ctx.vector_index.ensure_ready()
    ctx.embedder.embed(["warm up"])
    ctx.paths.account_deletion(uid).get()
    ctx.client.counts.reset()


@contextlib.contextmanager
def _rounds(counts: Any) -> Any:
    """Where each drain round starts and ends in the counter's RPC intervals: ``projection._drain_round``
    wrapped for the block. Yields the list of (start, stop) index pairs."""
    from core.services import projection

    marks: list[tuple[int, int]] = []
    real = projection._drain_round

    def counted_round(*args: Any, **kwargs: Any) -> Any:
        start = len(counts.intervals)
        try:
            return real(*args, **kwargs)
        finally:
            marks.append((start, len(counts.intervals)))

    projection._drain_round = counted_round  # type: ignore[assignment]
    try:
        yield marks
    finally:
        projection._drain_round = real  # type: ignore[assignment]


def round_trips(counts: Any, marks: list[tuple[int, int]]) -> dict[str, Any]:
    """Sequential Firestore round trips of a drain: before its first round (the checks and taking the
    drain lease), in each round (``_drain_round``: lease, read, acknowledge), between rounds (what
    the drain does outside its rounds there), and after the last (the release)."""
    if not marks:
        return {"drain_sequential_rpcs": counts.sequential(), "rounds": 0}
    starts = [start for start, _ in marks]
    per_round = [counts.sequential(start, stop) for start, stop in marks]
    between = [counts.sequential(marks[i][1], starts[i + 1]) for i in range(len(marks) - 1)]
    return {"drain_sequential_rpcs": counts.sequential(), "drain_rpcs": len(counts.intervals), "rounds": len(marks),
            "before_first_round": counts.sequential(0, starts[0]),
            "per_round": per_round, "between_rounds": between,
            "first_round_chain": counts.chain(*marks[0]), "before_first_round_chain": counts.chain(0, starts[0]),
            "after_last_round": counts.sequential(marks[-1][1])}


def _lag(size: int) -> dict[str, Any]:
    from core.domain import ids

    base = harness.context()
    publisher = harness.StampingPublisher(base.publisher)
    ctx = harness.context(publisher=publisher)
    uid = harness.new_uid("project-lag")
    seen: dict[str, float] = {}
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for provider_id in ctx.keyword_index.provider_ids(uid):
                seen.setdefault(provider_id, time.monotonic())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        harness.capture_in_process(ctx, uid, harness.conversations(size, "lag"))
        stamps = {seq: at for who, seq, at in publisher.stamps if who == uid}
        expected: dict[str, float] = {}
        for snap in ctx.paths.col(uid, paths.COMMITS).stream():
            commit = snap.to_dict() or {}
            for change in commit.get("changes", []):
                if commit.get("sequence") in stamps:
                    expected[ids.provider_id(uid, change["memory_id"])] = stamps[commit["sequence"]]
        from core.domain.plan import is_projectable
        from core.domain.records import MemoryItem

        projectable = {ids.provider_id(uid, s.id) for s in ctx.paths.col(uid, paths.MEMORY_ITEMS).stream()
                       if is_projectable(MemoryItem.from_store(s.to_dict()))}
        expected = {pid: at for pid, at in expected.items() if pid in projectable}
        with contextlib.suppress(TimeoutError):  # never-seen projections are reported, not fatal
            harness.wait_for(lambda: set(expected) <= set(seen), timeout_s=90, every=0.1)
    finally:
        stop.set()
        watcher.join()
    lags = [seen[pid] - at for pid, at in expected.items() if pid in seen]
    return {**stats.latency_ms(lags), "memories": len(expected), "never_seen": len(set(expected) - set(seen)),
            "samples_s": lags}


def _measured_drain(setup: Any, convs: list[Any], label: str) -> dict[str, Any]:
    """A fresh user's captures (nudges dropped), then ``drain_user`` on a warm counted context."""
    uid = harness.new_uid(label)
    harness.capture_in_process(setup, uid, convs)
    events = harness.count_docs(setup, uid, paths.OUTBOX)
    counted = harness.counted_context(publisher=harness.NullPublisher())
    _warm(counted, uid)
    with _rounds(counted.client.counts) as marks:
        started = time.monotonic()
        report = _drain(counted, uid, events)
        elapsed = time.monotonic() - started
    return {"events": events, "report": report, "seconds": elapsed, "counts": counted.client.counts.snapshot(),
            "round_trips": round_trips(counted.client.counts, marks)}


def _level(drains: list[dict[str, Any]], lags: list[dict[str, Any]]) -> dict[str, Any]:
    """Drains and lags measured at one delay, merged: seconds and throughput over all its drains."""
    seconds = sum(d["seconds"] for d in drains)
    acknowledged = sum(d["report"].acknowledged for d in drains)
    lag_samples = [x for lag in lags for x in lag["samples_s"]]
    return {"drains": len(drains), "events": sum(d["events"] for d in drains), "acknowledged": acknowledged,
            "seconds_per_drain": [round(d["seconds"], 3) for d in drains], "events_per_s": stats.rate(acknowledged, seconds),
            "mean_drain_seconds": round(seconds / len(drains), 3),
            "firestore_round_trips": drains[0]["round_trips"],
            "commit_to_searchable": {**stats.latency_ms(lag_samples), "memories": sum(lag["memories"] for lag in lags),
                                     "never_seen": sum(lag["never_seen"] for lag in lags)}}


def run(args: Any) -> dict[str, Any]:
    size = args.size or (6 if args.quick else 30)
    info = args.stack_info
    setup = harness.context(publisher=harness.NullPublisher())
    convs = harness.conversations(size, "prj")
    levels = harness.rtt_levels(args)
    drains: dict[float, list[dict[str, Any]]] = {ms: [] for ms in levels}
    lags: dict[float, list[dict[str, Any]]] = {ms: [] for ms in levels}
    for ms in levels + levels[::-1]:  # A B B A: a drift over the run falls on both delays alike
        with harness.rtt(info, ms):
            drains[ms].append(_measured_drain(setup, convs, "project"))
            lags[ms].append(_lag(max(2, size // 4)))
    first = drains[0.0][0]
    report, counts = first["report"], first["counts"]
    zero = _level(drains[0.0], lags[0.0])
    doc_calls = 3 * report.upserts + 2 * report.deletes  # keyword+embed+vector per upsert, keyword+vector per delete

    # Captured just before it is measured: the stack's scheduled sweep drains outboxes left waiting.
    baseline_uid = harness.new_uid("project-baseline")
    harness.capture_in_process(setup, baseline_uid, convs)
    baseline_events, baseline_seconds = _baseline(setup, baseline_uid)
    throughput = zero["events_per_s"]
    baseline_throughput = stats.rate(baseline_events, baseline_seconds)
    out: dict[str, Any] = {
        "conversations": size, "events": first["events"], "acknowledged": report.acknowledged,
        "seconds": zero["mean_drain_seconds"], "drains": zero["drains"],
        "events_per_s": throughput, "upserts": report.upserts, "deletes": report.deletes,
        "provider_calls": report.provider_calls,
        "documents_per_provider_call": stats.ratio(doc_calls, report.provider_calls),
        "firestore": counts,
        "firestore_round_trips": first["round_trips"],
        "commit_to_searchable": zero["commit_to_searchable"],
        "baseline": {"what": "one events query + one batched item lookup, one Typesense bulk import beside "
                             "one batched embedding and one raw vector upsert, one batched ack",
                     "events": baseline_events, "seconds": round(baseline_seconds, 3),
                     "events_per_s": baseline_throughput},
        "ratio": stats.ratio(throughput, baseline_throughput),
    }
    if len(levels) > 1:
        rtt = levels[-1]
        delayed = _level(drains[rtt], lags[rtt])
        delayed["estimated_sequential_round_trips_per_drain"] = round(
            (delayed["mean_drain_seconds"] - zero["mean_drain_seconds"]) * 1000 / rtt, 1)
        out["under_rtt"] = {"rtt_ms": rtt, **delayed,
                            "zero_delay": {k: zero[k] for k in ("mean_drain_seconds", "events_per_s",
                                                                "commit_to_searchable")}}
    return out

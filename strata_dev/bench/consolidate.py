"""consolidate: pending Short-term items routed per second per pass, Firestore ops per promoted item.

Setup (not measured): conversations are captured in process for a fresh user (projection nudges
dropped), leaving their items pending. Measured: :func:`consolidation.run_pass` — the code the
Cloud Tasks-driven function runs — in this process through an RPC-counting client, pass after pass
until nothing overflows; projection nudges go to Pub/Sub as in production. Every commit the passes
made is recorded; the baseline writes the same documents in the same grouping (one transaction per
recorded commit, through the SDK from Python dicts) for another user. Replaying the recorded,
already encoded ``Write`` messages is reported as the floor (``ratio_to_floor``).

The baseline starts once the drain the passes' nudges started has emptied the user's outbox
(``drain_wait_seconds``): the stack's drain embeds and indexes every routed item on the same cores
and the same emulator, and a baseline written while it runs is slowed by however much of it
overlaps. The pass's own CPU (``cpu_seconds``, this process) and its RPCs do not depend on the load.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from core.domain import paths
from strata_dev.bench import harness, stats
from strata_dev.bench.counting import replay

DRAIN_DEADLINE_S = 60.0


def run(args: Any) -> dict[str, Any]:
    from core.services import consolidation

    size = args.size or (10 if args.quick else 60)
    setup = harness.context(publisher=harness.NullPublisher())
    uid = harness.new_uid("consolidate")
    captured = harness.capture_in_process(setup, uid, harness.conversations(size, "con"))

    counted = harness.counted_context()
    counted.client.counts.reset(record=True)
    passes: list[dict[str, Any]] = []
    routes: Counter[str] = Counter()
    for _ in range(20):
        started, cpu_started = time.monotonic(), time.process_time()
        summary = consolidation.run_pass(counted, uid, settle_outbox=False)  # the drain is not the pass
        elapsed, cpu = time.monotonic() - started, time.process_time() - cpu_started
        if summary.get("skipped") == "lease_held":  # a scheduled pass got there first: wait for it
            time.sleep(0.5)
            continue
        routed = sum(summary["routes"].values())
        routes.update(summary["routes"])
        passes.append({"selected": summary["selected"], "routed": routed, "seconds": round(elapsed, 3),
                       "cpu_seconds": round(cpu, 3), "items_per_s": stats.rate(routed, elapsed), "routes": summary["routes"]})
        if not summary["overflow"]:
            break
    counts = counted.client.counts.snapshot()
    chain = counted.client.counts.chain()
    recorded = counted.client.counts.recording or []
    routed_total = sum(p["routed"] for p in passes)
    pass_seconds = sum(p["seconds"] for p in passes)
    promoted = routes.get("promote", 0)

    drain_wait = wait_for_drain(setup, uid)
    replayed = replay(setup.client, recorded, uid, "consolidate")
    baseline_seconds, floor_seconds = replayed.sdk_seconds, replayed.floor_seconds

    throughput = stats.rate(routed_total, pass_seconds)
    baseline_throughput = stats.rate(routed_total, baseline_seconds)
    ops = counts["reads"] + counts["writes"]
    return {
        "conversations": size, "items_captured": captured, "passes": passes, "routes": dict(routes),
        "items_routed_per_s": throughput, "cpu_seconds": round(sum(p["cpu_seconds"] for p in passes), 3),
        "drain_wait_seconds": drain_wait,
        "firestore": {"ops_per_promoted_item": stats.ratio(ops, promoted),
                      "ops_per_routed_item": stats.ratio(ops, routed_total), **counts, "chain": chain},
        "baseline": {"what": "SDK transactions (begin + commit, no reads) writing, from Python dicts, the same "
                             "documents in the same grouping (one per commit the passes made)",
                     "transactions": replayed.transactions, "documents": replayed.documents,
                     "seconds": round(baseline_seconds, 3), "items_per_s": baseline_throughput},
        "floor": {"what": "the same commits replayed as the recorded, already encoded Write messages",
                  "seconds": round(floor_seconds, 3), "items_per_s": stats.rate(routed_total, floor_seconds)},
        "ratio": stats.ratio(throughput, baseline_throughput),
        "ratio_to_floor": stats.ratio(throughput, stats.rate(routed_total, floor_seconds)),
    }


def wait_for_drain(ctx: Any, uid: str) -> float | None:
    """Seconds until the user's outbox is empty (the stack's drain has projected what the passes
    committed), or None when it is not within :data:`DRAIN_DEADLINE_S`."""
    started = time.monotonic()
    try:
        harness.wait_for(lambda: harness.count_docs(ctx, uid, paths.OUTBOX) == 0, DRAIN_DEADLINE_S)
    except TimeoutError:
        return None
    return round(time.monotonic() - started, 2)

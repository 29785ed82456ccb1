"""doctor: ``strata doctor`` over one user with 10,000 memories, time and peak memory.

The user is seeded as the read benchmark seeds it (items written straight to ``memory_items`` in the
apply path's shape, projected with the adapters), so canonical state and both indexes agree and the
run must report zero drift. The figures are the doctor's wall time, its peak Python allocation
(``tracemalloc``, in a second, untimed run) and the process's peak resident size; the baseline, in the same run, is a bare
read of the same three streams (items, Typesense export, Pinecone metadata pages) with no
comparison, so the ratio is what the reconciliation itself costs. Targets: under 30 s and 256 MB.
The stack's scheduled jobs are paused for the run (``strata scheduler``), so no consolidation pass
changes the user under measurement.
"""

from __future__ import annotations

import resource
import time
import tracemalloc
from typing import Any

from core.domain import paths
from strata_dev.bench import harness
from strata_dev.bench.read import _seed


def _bare_read(ctx: Any, uid: str) -> int:
    rows = 0
    cursor = None
    collection = ctx.paths.col(uid, paths.MEMORY_ITEMS)
    while True:
        query = collection.order_by("__name__").limit(500)
        page = list((query.start_after(cursor) if cursor is not None else query).stream())
        rows += len(page)
        if len(page) < 500:
            break
        cursor = page[-1]
    for index in (ctx.keyword_index, ctx.vector_index):
        for chunk in index.records(uid):
            rows += len(chunk)
    return rows


def run(args: Any) -> dict[str, Any]:
    from core.services import doctor
    from strata_dev.scheduler import JOBS, LocalJobs

    size = args.size or (2000 if args.quick else 10_000)
    ctx = harness.context(publisher=harness.NullPublisher())
    uid = harness.new_uid("doctor")
    # The stack's tick would consolidate the seeded (pending) items mid-run: its jobs are paused.
    scheduled = LocalJobs(ctx.client)
    paused = [name for name in JOBS if not scheduled.paused(name)]
    for name in paused:
        scheduled.pause(name)
    try:
        seeded = _seed(ctx, uid, size)
        started = time.monotonic()
        rows = _bare_read(ctx, uid)
        baseline_s = time.monotonic() - started

        started = time.monotonic()
        report = doctor.run(ctx, uid)
        doctor_s = time.monotonic() - started
        # Peak allocation from a second run: tracing slows every allocation, so it is not timed.
        tracemalloc.start()
        traced = doctor.run(ctx, uid)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        for name in paused:
            scheduled.resume(name)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    counts = report.counts()
    return {
        "memories": size, "seeding": seeded,
        "doctor_seconds": round(doctor_s, 2),
        "doctor_peak_traced_mb": round(peak / 2**20, 1),
        "process_peak_rss_mb": round(rss_mb, 1),
        "rows_compared": report.rows,
        "drift": counts, "findings": len(report.findings) + len(traced.findings),
        "baseline": {"bare_read_seconds": round(baseline_s, 2), "rows": rows},
        "ratio": round(doctor_s / baseline_s, 2) if baseline_s else None,
        "targets": {"seconds": 30, "mb": 256,
                    "met": doctor_s < 30 and peak / 2**20 < 256 and rss_mb < 256 and not report.findings},
    }

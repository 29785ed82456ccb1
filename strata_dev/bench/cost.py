"""cost: dollars per 1,000 conversations and per 1,000 active users a month, from measured usage.

Measured (this process, through :func:`harness.counted_context`, the same service code the
functions run): for each of N sample conversations of one user, its capture, the projection drain
its commit's nudge starts, one consolidation pass over what it left pending and the drain of that
pass's nudges; then hybrid searches and list pages of 100 on that user. Per operation the run
records Firestore document reads, writes and deletes (billed the way Firestore bills; deletes are
the ``delete`` entries of the recorded commits), Pub/Sub messages (the projection nudges), Cloud
Tasks (one per pass), function invocations and CPU seconds (this process's CPU time while the
service code ran). Billed instance time is the invocation's measured wall time rounded up to
100 ms at 1 vCPU and 256 MiB; on the emulator that wall time is longer than production's.

Prices are list prices, not fetched by the run: they are constants below with their region and the
date they were taken as of. Free tiers are ignored (the figures are what usage costs past them). Not
included: the hosted Typesense and vector index (fixed-capacity plans, priced per node, not per
operation), an external embedding API, Cloud Scheduler (a few fixed jobs, $0.10 a job a month),
storage and network egress.

The model path (Terraform's default: Gemini on Vertex AI extracts and routes) is priced apart, in
``model``: the tokens of the exact extraction and routing requests the run's conversations and
passes make, at the list prices per million tokens of ``core/metering.py`` (with their date), as
:mod:`strata_dev.bench.model_cost` explains; ``..._with_model`` adds it to the figures above. The
run itself still extracts and routes with the rules.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from core.ports import Publisher, TaskQueue
from strata_dev.bench import harness, model_cost, stats

# List prices, us-central1 (Firestore: Native mode, us-central1 regional), as of 2025-06-01 (the
# providers' public pricing pages on that date, written down here; the run does not fetch them).
PRICES_AS_OF = "2025-06-01"
REGION = "us-central1"
PRICES = {
    "firestore_read": 0.03 / 100_000,      # $ per document read
    "firestore_write": 0.09 / 100_000,     # $ per document write
    "firestore_delete": 0.01 / 100_000,    # $ per document delete
    "invocation": 0.40 / 1_000_000,        # Cloud Run functions (2nd gen) requests, $ per request
    "vcpu_second": 0.000024,               # Cloud Run functions, Tier 1, $ per vCPU-second
    "gib_second": 0.0000025,               # Cloud Run functions, Tier 1, $ per GiB-second
    "pubsub_tib": 40.0,                    # Pub/Sub message delivery, $ per TiB (publish and delivery)
    "pubsub_min_bytes": 1000,              # each publish and each delivery is billed at least 1,000 bytes
    "task": 0.40 / 1_000_000,              # Cloud Tasks, $ per billable operation
}
MEMORY_GIB = 0.25  # the functions' default 256 MiB
BILLING_STEP_S = 0.1
# The usage model of one active user in a month (stated assumptions, not measurements).
USAGE = {"conversations": 90, "searches": 300, "list_pages": 60}


class CountingPublisher(Publisher):
    def __init__(self) -> None:
        self.messages = 0
        self._lock = threading.Lock()

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        with self._lock:
            self.messages += 1


class CountingTasks(TaskQueue):
    def __init__(self) -> None:
        self.tasks = 0

    def enqueue(self, url: str, payload: dict[str, Any], *, task_id: str | None = None,
                queue: str | None = None, schedule_at: Any = None) -> None:
        self.tasks += 1


class Meter:
    """Usage of one kind of operation, summed over its runs."""

    def __init__(self) -> None:
        self.reads = self.writes = self.deletes = self.messages = self.tasks = self.invocations = 0
        self.cpu_s = self.billed_s = self.wall_s = 0.0
        self.runs = 0

    def as_dict(self) -> dict[str, Any]:
        per = max(self.runs, 1)
        return {"runs": self.runs, "reads": round(self.reads / per, 2), "writes": round(self.writes / per, 2),
                "deletes": round(self.deletes / per, 2), "pubsub_messages": round(self.messages / per, 2),
                "tasks": round(self.tasks / per, 2), "invocations": round(self.invocations / per, 2),
                "cpu_ms": round(self.cpu_s / per * 1000, 1), "billed_ms": round(self.billed_s / per * 1000, 1),
                "dollars": dollars(self) / per}


def dollars(m: Meter, *, instance: str = "wall") -> float:
    """``instance``: bill instance time as the measured wall time per invocation rounded up to 100 ms
    (``wall``, an upper bound on the emulator) or as the CPU time the work used (``cpu``, a lower bound)."""
    p = PRICES
    pubsub = m.messages * 2 * p["pubsub_min_bytes"] / 2**40 * p["pubsub_tib"]
    seconds = m.billed_s if instance == "wall" else m.cpu_s
    return (m.reads * p["firestore_read"] + m.writes * p["firestore_write"] + m.deletes * p["firestore_delete"]
            + m.invocations * p["invocation"] + seconds * (p["vcpu_second"] + MEMORY_GIB * p["gib_second"])
            + pubsub + m.tasks * p["task"])


def _billed(seconds: float) -> float:
    return math.ceil(seconds / BILLING_STEP_S) * BILLING_STEP_S


def _measure(ctx: Any, meter: Meter, invocations: int, fn: Any) -> Any:
    """Run ``fn`` as ``invocations`` function invocations' worth of work and add its usage to ``meter``."""
    counts = ctx.client.counts
    counts.reset(record=True)
    publisher, tasks = ctx.publisher, ctx.tasks
    messages, queued = publisher.messages, tasks.tasks
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    cpu_s, wall_s = time.process_time() - cpu, time.perf_counter() - wall
    deletes = sum(1 for commit in counts.recording or [] for w in commit if getattr(w, "_pb", w).HasField("delete"))
    meter.reads += counts.reads
    meter.writes += counts.writes - deletes
    meter.deletes += deletes
    meter.messages += publisher.messages - messages
    meter.tasks += tasks.tasks - queued
    meter.invocations += invocations
    meter.cpu_s += cpu_s
    meter.wall_s += wall_s
    meter.billed_s += _billed(wall_s / max(invocations, 1)) * invocations if invocations else 0.0
    meter.runs += 1
    return value


def run(args: Any) -> dict[str, Any]:
    from core.services import consolidation, projection, reads, search
    from strata_dev.bench.read import QUERIES

    size = args.size or (6 if args.quick else 30)
    ctx = harness.counted_context(publisher=CountingPublisher(), tasks=CountingTasks())
    uid = harness.new_uid("cost")
    ctx.keyword_index.ensure_ready()
    ctx.vector_index.ensure_ready()
    ctx.embedder.embed(["warm up"])
    ctx.paths.account_deletion(uid).get()
    meters = {name: Meter() for name in ("capture", "projection", "consolidation", "search", "list_page")}
    memories = 0
    router = model_cost.RecordingRouter()  # the rules route; the model router's requests are recorded
    convs = harness.conversations(size, "cost")
    for conversation_id, doc in convs:
        # The client app's own write of the conversation document: one write the trigger answers.
        meters["capture"].writes += 1
        created = _measure(ctx, meters["capture"], 1,
                           lambda c=conversation_id, d=doc: harness.capture_in_process(ctx, uid, [(c, d)]))
        memories += created
        nudges = ctx.publisher.messages
        _measure(ctx, meters["projection"], 1, lambda: projection.drain_user(ctx, uid))
        _measure(ctx, meters["consolidation"], 1,
                 lambda: consolidation.run_pass(ctx, uid, settle_outbox=False, router=router))
        meters["consolidation"].tasks += 1  # in production each pass is one Cloud Task
        after_pass = ctx.publisher.messages - nudges
        _measure(ctx, meters["projection"], max(after_pass, 1), lambda: projection.drain_user(ctx, uid))
    searches = max(10, size)
    for index in range(searches):
        query = QUERIES[index % len(QUERIES)]
        _measure(ctx, meters["search"], 1, lambda q=query: search.hybrid(ctx, uid, q, 10))
    for _ in range(10):
        _measure(ctx, meters["list_page"], 1, lambda: reads.list_memories(ctx, uid, reads.ListQuery(limit=100)))

    def monthly(instance: str) -> tuple[float, float, float, float]:
        conversation = sum(dollars(meters[n], instance=instance) for n in ("capture", "projection", "consolidation"))
        per_conversation = conversation / size
        per_search = dollars(meters["search"], instance=instance) / searches
        per_list = dollars(meters["list_page"], instance=instance) / 10
        return per_conversation, per_search, per_list, (USAGE["conversations"] * per_conversation
                                                        + USAGE["searches"] * per_search + USAGE["list_pages"] * per_list)

    per_conversation, per_search, per_list, per_user_month = monthly("wall")
    cpu_conversation, cpu_search, cpu_list, cpu_user_month = monthly("cpu")
    ops = {name: m.as_dict() for name, m in meters.items()}
    for name in ("capture", "projection", "consolidation"):  # per conversation, not per measured call
        ops[name]["per_conversation_dollars"] = dollars(meters[name]) / size
    model = model_cost.figures(convs, router, USAGE["conversations"])
    return {
        "conversations": size, "memories": memories, "searches": searches,
        "operations": ops,
        "dollars_per_1000_conversations": round(per_conversation * 1000, 4),
        "dollars_per_1000_searches": round(per_search * 1000, 4),
        "dollars_per_1000_list_pages": round(per_list * 1000, 4),
        "dollars_per_1000_active_users_month": round(per_user_month * 1000, 2),
        "model": model,
        "dollars_per_1000_conversations_with_model": round(per_conversation * 1000
                                                           + model["dollars_per_1000_conversations"], 4),
        "dollars_per_1000_active_users_month_with_model": round(per_user_month * 1000
                                                                + model["dollars_per_1000_active_users_month"], 2),
        "cpu_billed": {"what": "the same with instance time billed as the CPU time used (a lower bound; the "
                               "figures above bill the emulator-bound wall time, an upper bound)",
                       "dollars_per_1000_conversations": round(cpu_conversation * 1000, 4),
                       "dollars_per_1000_searches": round(cpu_search * 1000, 4),
                       "dollars_per_1000_list_pages": round(cpu_list * 1000, 4),
                       "dollars_per_1000_active_users_month": round(cpu_user_month * 1000, 2)},
        "share_of_conversation_cost": {
            "firestore": stats.ratio(sum(m.reads * PRICES["firestore_read"] + m.writes * PRICES["firestore_write"]
                                         + m.deletes * PRICES["firestore_delete"]
                                         for n, m in meters.items() if n in ("capture", "projection", "consolidation")),
                                     per_conversation * size)},
        "usage_per_active_user_month": USAGE,
        "prices": {"region": REGION, "as_of": PRICES_AS_OF, **PRICES, "memory_gib": MEMORY_GIB,
                   "billing_step_s": BILLING_STEP_S},
        "not_included": "hosted Typesense and vector index (priced per node), an external embedding API, "
                        "Cloud Scheduler jobs, storage, egress, free tiers (the model path: `model`)",
    }

"""``strata bench pools``: each thread pool of the API and the services beside the same code run
sequentially, so a pool is kept only where it saves round trips.

For every pool one action that uses it runs in this process on a counted context (the RPC-counting
client of :mod:`strata_dev.bench.counting`), after two untimed runs, in blocks ordered pooled,
sequential, sequential, pooled, at zero delay and (``--rtt-ms``) under the stack's latency proxy.
Sequential is the pool swapped for a stand-in that runs each task in the caller at once. Per
action and level: p50 wall ms and the longest chain of Firestore RPCs each started after the
previous one answered.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from datetime import timedelta
from typing import Any

from strata_dev.bench import harness, roundtrips


class Inline:
    """A pool's stand-in: each task runs in the caller, now (the code without the pool)."""

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
        done: Future[Any] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - handed to whoever waits, as a pool would
            done.set_exception(exc)
        return done


def _measure(info: dict[str, Any], ctx: Any, pool: tuple[Any, str], levels: list[float], repeats: int,
             setup: Callable[[], Any], action: Callable[[Any], Any]) -> dict[str, Any]:
    module, name = pool
    samples: dict[str, dict[str, list[float]]] = {}
    for _ in range(2):  # untimed: lazily built clients, the emulator's first (slow) answers
        action(setup())
    for mode in ("pooled", "sequential", "sequential", "pooled"):
        original = getattr(module, name)
        if mode == "sequential":
            setattr(module, name, Inline())
        try:
            for ms in levels:
                figure = samples.setdefault(f"{mode}@{ms:g}", {"ms": [], "sequential_rpcs": []})
                for _ in range(repeats):
                    arg = setup()
                    with harness.rtt(info, ms):
                        ctx.client.counts.reset()
                        started = time.monotonic()
                        action(arg)
                        figure["ms"].append((time.monotonic() - started) * 1000)
                        figure["sequential_rpcs"].append(ctx.client.counts.sequential())
        finally:
            setattr(module, name, original)
    return {key: {"p50_ms": round(statistics.median(f["ms"]), 1),
                  "sequential_rpcs": statistics.median(f["sequential_rpcs"]), "samples": len(f["ms"])}
            for key, f in samples.items()}


def run(args: Any) -> dict[str, Any]:
    from core import config
    from core.api import app
    from core.api.auth import emulator_token
    from core.bootstrap import Context
    from core.domain import paths
    from core.domain.changes import Change
    from core.ports import Write
    from core.services import consolidation, intake, legacy, rate_limits, scheduling
    from core.services.intake import ExplicitMemory
    from strata_dev.bench.counting import counting_client

    info = args.stack_info
    levels = harness.rtt_levels(args)
    repeats = args.size or (4 if args.quick else 8)
    project = config.load().project_id
    unlimited = config.Settings(rate_limit_writes=0, rate_limit_extraction=0, rate_limit_search=0)
    counted = Context(unlimited, client=counting_client(project), publisher=harness.NullPublisher())
    limited = Context(config.load(rate_limit_writes=1000), client=counting_client(project),
                      publisher=harness.NullPublisher())
    plain = Context(unlimited, publisher=harness.NullPublisher())

    def measure(pool: tuple[Any, str], setup: Callable[[], Any], action: Callable[[Any], Any],
                ctx: Any = counted) -> dict[str, Any]:
        return _measure(info, ctx, pool, levels, repeats, setup, action)

    def memory(uid: str) -> Callable[[], str]:
        return lambda: intake.create_explicit(plain, uid, [ExplicitMemory(
            content=f"User keeps bees {uuid.uuid4().hex[:6]}")])[0].id

    writer = harness.new_uid("pools-api")
    token = emulator_token(writer, info["project_id"])

    def call(method: str, path: str, query: dict[str, Any] | None = None, body: Any = None,
             as_token: str = token) -> None:
        roundtrips.counted_dispatch(counted, method, path, as_token, query, body)

    reader = harness.new_uid("pools-list")
    intake.create_explicit(plain, reader, [ExplicitMemory(content=f"User likes tea {n}") for n in range(20)])
    reader_token = emulator_token(reader, info["project_id"])

    def pending_user() -> str:
        uid = harness.new_uid("pools-pass")
        intake.create_explicit(plain, uid, [ExplicitMemory(
            content=f"My locker number at the climbing gym {n} is {n * 7}", category="system") for n in range(24)])
        plain.store.write(Change("bench.pools_mark_pending", [Write("set", paths.schedule_entry(uid), {
            "uid": uid, "pending": True, "marked_at": plain.now() - timedelta(seconds=5)})]))
        return uid

    def consolidate(uid: str) -> None:
        consolidation.run_pass(counted, uid, settle_outbox=False)

    fence = (app, "_FENCE_READS")
    return {"repeats": repeats, "actions": {
        "api_fence.create": measure(fence, lambda: None, lambda _: call(
            "POST", "/v3/memories", body={"content": f"User practises rowing {uuid.uuid4().hex[:6]}"})),
        "api_fence.edit": measure(fence, memory(writer), lambda mid: call(
            "PATCH", f"/v3/memories/{mid}", {"value": f"User practises sailing {uuid.uuid4().hex[:6]}"})),
        "api_fence.delete": measure(fence, memory(writer), lambda mid: call("DELETE", f"/v3/memories/{mid}")),
        "rate_limits.first_of_window": measure((rate_limits, "_CLEANUP"), lambda: harness.new_uid("pools-rate"),
                                               lambda uid: rate_limits.check(limited, uid, "writes"), limited),
        "legacy.list_page": measure((legacy, "_PREFETCH"), lambda: None, lambda _: call(
            "GET", "/v1/memories", {"limit": "100"}, as_token=reader_token)),
        "legacy.ids_citing": measure((legacy, "_PREFETCH"), lambda: reader,
                                     lambda uid: legacy.ids_citing(counted, uid, "c-none", 100)),
        "consolidation.pass_of_24": measure((consolidation, "_READS"), pending_user, consolidate),
        "scheduling.pass_of_24": measure((scheduling, "_READS"), pending_user, consolidate),
    }}

"""ingest: conversations written to Firestore, captured through the real trigger path.

Measured path: this process writes ``users/{uid}/conversations/{id}`` (status completed) one after
the other; the Firestore emulator fires the trigger → relay → ``on_conversation_complete`` →
capture. A conversation is *visible* once its ``capture_runs/{id}`` marker says the memories job
is done: capture commits that marker in the memories' apply transaction, so the marker's commit time
is when its memories became readable.

Document reads and writes per memory cannot be observed inside the function process, so the same
conversations are captured once more *in this process* (a shadow user, projection nudges dropped)
through a client that counts every RPC (:mod:`strata_dev.bench.counting`). That replay also records the
documents it wrote; the baseline writes exactly those documents again, one raw transaction per
conversation, on a third user, in two forms: through the SDK from Python dicts (what any client
pays to write those documents; the ratio's denominator) and as a replay of the recorded, already
encoded ``Write`` messages (a floor no client reaches; reported as ``ratio_to_floor``).

Ten conversations for another user go through the trigger path first and are not timed: the first
events of a process pay its start-up (imports, clients, channels) and a fresh emulator runs several
times slower until its JIT has warmed up; ``warm_up_ms`` is how long they took. The measured run is
the steady state. The headline figures are for one
user (its captures queue on its ledger); ``spread_over_users`` repeats the run with the same number
of conversations spread round-robin over four users, as a service with many users sees them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from core.domain import paths
from strata_dev.bench import harness, stats
from strata_dev.bench.counting import replay
from strata_dev.bench.procs import CpuMeter
from strata_dev.localstack import stack

SPREAD_USERS = 4
WARM_UP = 10  # conversations through the trigger path before anything is timed


def _captured_at(snapshot: Any) -> float | None:
    """When the conversation's memories became readable: the commit time of its capture marker once
    the marker says the memories job is done (capture commits the marker with the memories). The
    emulator stamps commits with this machine's clock, the one ``time.time()`` reads."""
    if snapshot.exists and (snapshot.to_dict() or {}).get("jobs", {}).get("memories") is True:
        return float(snapshot.update_time.timestamp())
    return None


def _missing(ctx: Any, where: dict[str, str], cids: list[str]) -> str:
    """What the store says of conversations that were not captured in time (for the error)."""
    notes = []
    for cid in cids[:5]:
        conversation = ctx.paths.doc(where[cid], paths.CONVERSATIONS, cid).get()
        marker = ctx.paths.doc(where[cid], paths.CAPTURE_RUNS, cid).get()
        state = (marker.to_dict() or {}) if marker.exists else None
        notes.append(f"{cid}: conversation {'stored' if conversation.exists else 'missing'}, capture marker "
                     + ("absent" if state is None else f"jobs={state.get('jobs')} errors={state.get('errors')}"))
    return "; ".join(notes)


def trigger_path(ctx: Any, uids: list[str], convs: list[tuple[str, dict[str, Any]]],
                 timeout_s: float = 120.0) -> dict[str, Any]:
    """Write ``convs`` one after the other (round-robin over ``uids``) and wait until each is captured.

    Each conversation's latency runs from its write to the commit of its capture marker, both on
    this machine's clock, so how often the markers are looked at changes no figure: a lookup of the
    still-pending markers every quarter second is all the benchmark adds to the emulator's work. (A
    Firestore listener on ``capture_runs``, used for a while, once reported a conversation as never
    captured in a CI run; its figures also depended on when the listener was told.)"""
    where = {cid: uids[i % len(uids)] for i, (cid, _) in enumerate(convs)}
    written: dict[str, float] = {}
    visible: dict[str, float] = {}
    started = time.time()
    for cid, doc in convs:
        ctx.paths.doc(where[cid], paths.CONVERSATIONS, cid).set(doc)
        written[cid] = time.time()

    def all_captured() -> bool:
        refs = [ctx.paths.doc(where[cid], paths.CAPTURE_RUNS, cid) for cid, _ in convs if cid not in visible]
        for snapshot in ctx.client.get_all(refs):
            at = _captured_at(snapshot)
            if at is not None:
                visible[snapshot.id] = at
        return len(visible) == len(convs)

    try:
        harness.wait_for(all_captured, timeout_s, every=0.25)
    except TimeoutError:
        missing = [cid for cid, _ in convs if cid not in visible]
        raise TimeoutError(f"only {len(visible)} of {len(convs)} conversations were captured within "
                           f"{timeout_s:.0f} s ({_missing(ctx, where, missing)})") from None
    elapsed = max(visible.values()) - started
    return {"seconds": elapsed, "latencies": [visible[cid] - written[cid] for cid, _ in convs],
            "memories": sum(harness.count_docs(ctx, uid, paths.MEMORY_ITEMS) for uid in uids)}


def one_at_a_time(ctx: Any, uid: str, convs: list[tuple[str, dict[str, Any]]]) -> list[float]:
    """Each conversation written only once the one before is visible: completion → visible with no
    queue ahead of it (what one user's single conversation waits), in seconds."""
    return [trigger_path(ctx, [uid], [conv])["latencies"][0] for conv in convs]


def _under_rtt(ctx: Any, info: dict[str, Any], rtt: float, count: int) -> dict[str, Any]:
    """Completion → visible of single conversations at zero delay and under ``rtt`` ms, blocks
    ordered 0, N, N, 0 (a drift over the run falls on both alike)."""
    samples: dict[float, list[float]] = {0.0: [], rtt: []}
    for block, ms in enumerate((0.0, rtt, rtt, 0.0)):
        with harness.rtt(info, ms):
            uid = harness.new_uid(f"ingest-rtt{block}")
            samples[ms] += one_at_a_time(ctx, uid, harness.conversations(count // 2, f"ingr{block}"))
    zero, delayed = stats.latency_ms(samples[0.0]), stats.latency_ms(samples[rtt])
    estimate = (round((delayed["p50_ms"] - zero["p50_ms"]) / rtt, 1)
                if delayed["p50_ms"] is not None and zero["p50_ms"] is not None else None)
    return {"rtt_ms": rtt, "capture_to_visible_single": delayed, "zero_delay_capture_to_visible_single": zero,
            "estimated_sequential_round_trips": estimate,
            "what": "one conversation at a time (none queued ahead), from its write to its capture marker's "
                    "commit; the trigger's own hop (emulator -> relay -> function) is not delayed"}


def _rpc_wall(counts: Any, into: dict[str, list[float]]) -> float:
    """Add each RPC's wall time (by name) to ``into``; return the time with at least one RPC
    outstanding (the union of the intervals: concurrent RPCs count once)."""
    with counts.lock:
        spans = sorted((begin, end, name) for (begin, end), name in zip(counts.intervals, counts.names, strict=True))
    union, reach = 0.0, float("-inf")
    for begin, end, name in spans:
        into.setdefault(name or "other", []).append(end - begin)
        if end > reach:
            union += end - max(begin, reach)
            reach = end
    return union


def _split(size: int, wall_s: float, waiting_s: float, cpu: dict[str, float], rpc_wall: dict[str, list[float]]
           ) -> dict[str, Any]:
    """Where the in-process capture's time goes, per conversation: waiting on Firestore RPCs against
    this process's own CPU (the capture code, the SDK's encoding and decoding), and the emulator's CPU
    per RPC — the capture function runs the same code on the same RPCs."""
    rpcs = sum(len(times) for times in rpc_wall.values())
    emulator_s = cpu.get("firestore", 0.0)
    return {
        "wall_ms": round(1000 * wall_s / size, 2),
        "waiting_on_rpcs_ms": round(1000 * waiting_s / size, 2),
        "our_cpu_ms": round(1000 * cpu.get("bench", 0.0) / size, 2),
        "emulator_cpu_ms": round(1000 * emulator_s / size, 2),
        "rpcs": round(rpcs / size, 2),
        "emulator_cpu_ms_per_rpc": round(1000 * emulator_s / rpcs, 2) if rpcs else None,
        "rpc_wall_ms": {name: {"per_conversation": round(len(times) / size, 2),
                               "mean_ms": round(1000 * sum(times) / len(times), 2)}
                        for name, times in sorted(rpc_wall.items())},
    }


def run(args: Any) -> dict[str, Any]:
    size = args.size or (8 if args.quick else 40)
    ctx = harness.context()
    uid = harness.new_uid("ingest")
    convs = harness.conversations(size, "ing")

    # ---- warm-up (not timed): the first events of a process pay its start-up, and a fresh
    # emulator is several times slower until its JIT has compiled the hot paths
    warm_uid = harness.new_uid("ingest-warm")
    warm_started = time.monotonic()
    trigger_path(ctx, [warm_uid], harness.conversations(WARM_UP, "warm"))
    warm_up_ms = round((time.monotonic() - warm_started) * 1000, 1)

    # ---- the real path: one user (every capture of that user queues on its ledger)
    processes = stack.recorded_processes(Path(args.stack_info["state_dir"]))
    emulator = {name: pid for name, pid in processes.items() if name == "firestore"}  # the default suite's
    trigger_cpu = CpuMeter(processes).start()
    real = trigger_path(ctx, [uid], convs)
    trigger_cpu.stop()
    elapsed, memories, latencies = real["seconds"], real["memories"], real["latencies"]
    # ---- the same number of conversations spread over four users (captures run side by side)
    spread_uids = [harness.new_uid(f"ingest-spread{i}") for i in range(SPREAD_USERS)]
    spread = trigger_path(ctx, spread_uids, harness.conversations(size, "ings"))

    # Let the projections those captures started finish, so they do not slow what is timed next.
    def projected() -> bool:
        return all(harness.count_docs(ctx, u, paths.OUTBOX) == 0 for u in [uid, *spread_uids])

    harness.wait_for(projected, 60.0, every=0.1)

    # ---- the same captures in process, counted and recorded
    counted = harness.counted_context(publisher=harness.NullPublisher())
    shadow = harness.new_uid("ingest-shadow")
    per_conversation: list[list[Any]] = []
    reads = writes = shadow_memories = 0
    rpcs = dict.fromkeys(("lookups", "queries", "begins", "commits"), 0)
    sequential: list[int] = []
    chains: list[list[str]] = []
    rpc_wall: dict[str, list[float]] = {}  # RPC name -> each call's wall seconds (the emulator answering)
    waiting = 0.0  # seconds the capture spent with at least one RPC outstanding
    shadow_cpu = CpuMeter(emulator).start()
    shadow_started = time.monotonic()
    for cid, doc in convs:
        counted.client.counts.reset(record=True)
        shadow_memories += harness.capture_in_process(counted, shadow, [(cid, doc)])
        reads += counted.client.counts.reads
        writes += counted.client.counts.writes
        for kind in rpcs:
            rpcs[kind] += getattr(counted.client.counts, kind)
        sequential.append(counted.client.counts.sequential())
        chains.append(counted.client.counts.chain())
        waiting += _rpc_wall(counted.client.counts, rpc_wall)
        per_conversation.append([w for commit in counted.client.counts.recording or [] for w in commit])
    shadow_elapsed = time.monotonic() - shadow_started
    shadow_cpu.stop()

    # ---- baseline and floor: one transaction per conversation with the same documents
    baseline_cpu = CpuMeter(emulator)
    replayed = replay(ctx.client, per_conversation, shadow, "ingest", sdk_meter=baseline_cpu)
    baseline_elapsed, floor_elapsed = replayed.sdk_seconds, replayed.floor_seconds

    throughput = stats.rate(size, elapsed)
    baseline_throughput = stats.rate(size, baseline_elapsed)
    floor_throughput = stats.rate(size, floor_elapsed)
    ordered = sorted(sequential)
    out: dict[str, Any] = {
        "conversations": size, "memories": memories, "seconds": round(elapsed, 3),
        "conversations_per_s": throughput, "memories_per_s": stats.rate(memories, elapsed),
        "completion_to_visible": stats.latency_ms(latencies),
        "firestore": {
            "reads_per_memory": stats.ratio(reads, shadow_memories),
            "writes_per_memory": stats.ratio(writes, shadow_memories),
            "reads": reads, "writes": writes, "memories": shadow_memories,
            "method": "same conversations captured in process through an RPC-counting client "
                      "(lookups count every requested document, queries their results or 1, commits their writes)",
        },
        "warm_up_ms": warm_up_ms,
        "spread_over_users": {
            "users": SPREAD_USERS, "conversations_per_s": stats.rate(size, spread["seconds"]),
            "completion_to_visible": stats.latency_ms(spread["latencies"]),
            "ratio": stats.ratio(stats.rate(size, spread["seconds"]), baseline_throughput)},
        "in_process_capture_conversations_per_s": stats.rate(size, shadow_elapsed),
        "baseline": {"what": "one SDK transaction per conversation (begin + commit, no reads) writing, from "
                             "Python dicts, the documents capture wrote",
                     "documents": replayed.documents, "seconds": round(baseline_elapsed, 3),
                     "conversations_per_s": baseline_throughput},
        "floor": {"what": "the same commits replayed as the recorded, already encoded Write messages",
                  "seconds": round(floor_elapsed, 3), "conversations_per_s": floor_throughput},
        "ratio": stats.ratio(throughput, baseline_throughput),
        "in_process_ratio": stats.ratio(stats.rate(size, shadow_elapsed), baseline_throughput),
        "ratio_to_floor": stats.ratio(throughput, floor_throughput),
        "profile": {
            "what": "where one conversation's time goes: Firestore RPCs per conversation (capture in process, "
                    "counted; the baseline makes 1 begin + 1 commit) and CPU milliseconds per conversation of "
                    "every stack process and this one (bench), from /proc",
            "rpcs_per_conversation": {kind: stats.ratio(count, size) for kind, count in rpcs.items()},
            "trigger_path_cpu_ms_per_conversation": trigger_cpu.per(size),
            "trigger_path_wall_ms_per_conversation": round(1000 * elapsed / size, 2),
            "in_process_cpu_ms_per_conversation": shadow_cpu.per(size),
            "in_process_wall_ms_per_conversation": round(1000 * shadow_elapsed / size, 2),
            "baseline_cpu_ms_per_conversation": baseline_cpu.per(size),
            "baseline_wall_ms_per_conversation": round(1000 * baseline_elapsed / size, 2),
            "in_process_split": _split(size, shadow_elapsed, waiting, shadow_cpu.used, rpc_wall),
            "sequential_firestore_rpcs_per_capture": {
                "median": ordered[len(ordered) // 2] if ordered else None, "max": max(ordered, default=None),
                "chain_of_the_first": chains[0] if chains else []},
        },
    }
    rtt = getattr(args, "rtt_ms", None)
    if rtt:
        out["under_rtt"] = _under_rtt(ctx, args.stack_info, float(rtt), 8 if args.quick else 16)
    return out

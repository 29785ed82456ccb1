"""The user that sorts last, on the real local stack (issue 18): no simulated clock, no in-process
dispatcher. A private stack starts with ``STRATA_TICK_SECONDS`` (default 60) as both the
scheduler's tick and the consolidation interval; three users whose ids sort first get ``--items``
pending items each through the apply path (the deployed outbox drain enqueues their named tasks in
the Tasks emulator, which dispatches them to the consolidate function); half a tick later a user
whose id sorts last writes one item. Reported: seconds and ticks from that write until its item is
routed, with the tick times the stack's scheduler logged.

Run: ``python -m strata_dev.bench.schedule_live [--items 1000] [--tick 60]`` (about five minutes at
the defaults; prints one JSON object).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from typing import Any

from core.domain import paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strata_dev.bench.schedule_live")
    parser.add_argument("--items", type=int, default=1000, help="pending items of each user that sorts first")
    parser.add_argument("--tick", type=int, default=60, help="STRATA_TICK_SECONDS of the private stack")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args(argv)
    os.environ.pop("FIRESTORE_EMULATOR_HOST", None)  # always a private stack with this tick
    os.environ["STRATA_TICK_SECONDS"] = str(args.tick)
    from strata_dev.bench import harness

    with harness.local_stack():
        print(json.dumps(measure(args.items, args.tick, args.timeout)))
    return 0


def measure(items: int, tick: int, timeout: float) -> dict[str, Any]:
    from core.services import intake
    from core.services.intake import ExplicitMemory
    from strata_dev.bench import harness

    ctx = harness.context()
    first = [f"a{n}-{uuid.uuid4().hex[:6]}" for n in range(3)]
    started = time.monotonic()
    for uid in first:
        for start in range(0, items, 100):
            intake.create_explicit(ctx, uid, [ExplicitMemory(content=f"Shelf {n} of {uid} holds box {n}",
                                                             category="system")
                                              for n in range(start, min(items, start + 100))])
    seeded_s = time.monotonic() - started
    time.sleep(tick / 2)
    last = f"zz-{uuid.uuid4().hex[:6]}"
    (item,) = intake.create_explicit(ctx, last, [ExplicitMemory(content="My last note is on the door",
                                                                category="system")])
    written = time.monotonic()
    ref = ctx.paths.doc(last, paths.MEMORY_ITEMS, item.id)
    routed_at = None
    while time.monotonic() - written < timeout:
        if (ref.get().to_dict() or {}).get("route"):
            routed_at = time.monotonic()
            break
        time.sleep(1.0)
    left = {uid: sum(1 for s in ctx.paths.col(uid, paths.MEMORY_ITEMS).stream()
                     if (s.to_dict() or {}).get("route") is None) for uid in first}
    waited = None if routed_at is None else round(routed_at - written, 1)
    return {"tick_s": tick, "users_first": len(first), "items_each": items, "seed_s": round(seeded_s, 1),
            "last_user_routed_after_s": waited,
            "last_user_routed_after_ticks": None if waited is None else round(waited / tick, 2),
            "unrouted_items_of_first_users_then": left}


if __name__ == "__main__":
    raise SystemExit(main())

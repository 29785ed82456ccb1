"""Per-user rate limits: how many requests of one kind a user may make per window.

The API runs as many function instances, so the count lives in Firestore: fixed windows of
``STRATA_RATE_WINDOW_S`` seconds (aligned to the epoch), and for each (user, kind, window) a few
counter documents (:data:`SHARDS`) under ``rate_limits``. A request adds 1 to one counter picked at
random with a server-side increment whose commit answers the new value: one write, no transaction
and no read, so requests never wait on each other's locks, and a burst spreads over the shards
instead of queueing on one document. The limit is split over the counters (5 over 4: 2, 1, 1, 1),
so a user never gets more than ``limit`` in a window; a burst can meet the 429 a little before it
when the random picks are uneven. A refused request counts too (hammering does not help) and does nothing
else: the limiter runs before the handler, so every request answered 2xx was carried out in full.

Counters name a hash of the uid, never the uid, and hold a count and ``expire_at`` only; the first
use of a counter in a window deletes the same counter of the window before (in the background), so
a user keeps at most two windows of counters. They live outside ``users/{uid}``, so a request that
races an account wipe cannot recreate the user's subtree.
"""

from __future__ import annotations

import hashlib
import logging
import math
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from core.domain import paths
from core.domain.changes import Change, Increment
from core.errors import RateLimited
from core.ports import Ports, Write

log = logging.getLogger(__name__)

KINDS = ("writes", "extraction", "search")
SHARDS = 4
# bench pools --rtt-ms 8, sequential -> pooled: a window's first request 2 -> 1 round trips, p50 24 -> 15 ms.
_CLEANUP = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rate-cleanup")


def limit_of(ctx: Ports, kind: str) -> int:
    """The requests of ``kind`` a user may make per window (0: no limit)."""
    return int(getattr(ctx.settings, f"rate_limit_{kind}"))


def check(ctx: Ports, uid: str, kind: str) -> None:
    """Count one request of ``kind`` for ``uid``; :class:`RateLimited` (429, ``Retry-After`` the
    seconds to the window's end) when its counter is over its share of the limit."""
    limit = limit_of(ctx, kind)
    if limit <= 0:
        return
    window_s = ctx.settings.rate_window_s
    now = ctx.now().timestamp()
    window = int(now // window_s)
    shards = min(SHARDS, limit)
    shard = random.randrange(shards)
    user = hashlib.sha256(uid.encode()).hexdigest()[:32]
    ends = (window + 1) * window_s
    counter = paths.rate_counter(f"{user}_{kind}_{window}_{shard}")
    count = ctx.store.write(Change("rate_limit.count", [Write("set", counter, {
        "count": Increment(1), "expire_at": datetime.fromtimestamp(ends + window_s, UTC)}, merge=True)])).counts[counter]
    if count == 1:
        _CLEANUP.submit(_forget, ctx, paths.rate_counter(f"{user}_{kind}_{window - 1}_{shard}"))
    if count > limit // shards + (shard < limit % shards):
        wait = max(1, math.ceil(ends - now))
        raise RateLimited(f"too many {kind} requests: at most {limit} per {window_s} s for a user; "
                          f"retry in {wait} s", retry_after_s=wait)


def _forget(ctx: Ports, path: str) -> None:
    try:
        ctx.store.write(Change("rate_limit.forget", [Write("delete", path)]))
    except Exception:  # a leftover counter is harmless: it only holds a count
        log.warning("rate-limit counter cleanup failed", exc_info=True)

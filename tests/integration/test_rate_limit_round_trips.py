"""What a rate limit costs a request, on the Firestore emulator (issue 45; docs/api.md, *Rate
limits*): exactly one RPC, a commit of one write that is not a transaction (no begin, no read, so
no lock another request waits on), plus one background delete per counter per window. And the
count it keeps is the documented one: over a window, at most the limit, never more."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from core import config
from core.bootstrap import Context
from core.errors import RateLimited
from core.services import rate_limits
from strata_dev.bench.counting import counting_client

pytestmark = pytest.mark.integration
LIMIT = 20
WARM = 200


def test_one_write_rpc_per_request_and_never_more_than_the_limit(stack: dict[str, Any]) -> None:
    settings = config.load(rate_limit_writes=LIMIT, rate_window_s=3600)
    client = counting_client(settings.project_id)
    ctx = Context(settings, client=client)
    uid = f"rate-{uuid.uuid4().hex[:10]}"
    # Warm every counter of this window (its first use also schedules a background delete): the
    # shard is drawn at random, so draw enough that no counter is left for the counted checks
    # (a counter missed by 200 draws: 4 x 0.75^200, about 1e-25).
    admitted = refused = 0
    for _ in range(WARM):
        try:
            rate_limits.check(ctx, uid, "writes")
            admitted += 1
        except RateLimited:
            refused += 1
    rate_limits._CLEANUP.submit(lambda: None).result()  # the background deletes are done (two workers)
    rate_limits._CLEANUP.submit(lambda: None).result()
    client.counts.reset()
    for _ in range(100):
        try:
            rate_limits.check(ctx, uid, "writes")
            admitted += 1
        except RateLimited as exc:
            refused += 1
            assert 1 <= exc.retry_after_s <= 3600
    counts = client.counts.snapshot()
    print(f"100 checks: {counts}; admitted {admitted} of {WARM + 100}")
    assert counts["rpcs"] == 100 and counts["commits"] == 100, counts
    assert counts["begins"] == 0 and counts["lookups"] == 0 and counts["queries"] == 0, counts
    assert admitted <= LIMIT and refused == WARM + 100 - admitted

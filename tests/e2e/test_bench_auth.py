"""`strata bench auth` on the session stack: both phases answer 200 and the certificate server's
hit counter shows one fetch per request before and one per certificate lifetime after (a lifetime
longer than the run: exactly one). Rates and latencies are measured, so only their presence is
checked; performance is judged by the benchmark (docs/benchmarks.md), never by a timed test."""

from __future__ import annotations

from typing import Any

import pytest

from strata_dev.bench import auth as bench_auth

pytestmark = pytest.mark.e2e


def test_one_certificate_fetch_per_lifetime_on_the_real_request_path(stack: dict[str, Any]) -> None:
    result = bench_auth.measure(seconds=1.0, max_age_s=3600, delay_ms=0.0, concurrency=2)
    before, after = result["before"], result["after"]
    for phase in (before, after):
        assert phase["requests"] > 0 and set(phase["statuses"]) == {"200"}, phase
        for figure in ("requests_per_s", "p50_ms", "p95_ms"):
            assert phase[figure] is not None
    assert before["cert_fetches"] == before["requests"]
    assert after["cert_fetches"] == 1
    assert result["requests_per_s_ratio"] is not None and result["p95_ratio"] is not None

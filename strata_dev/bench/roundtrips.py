"""Round trips per action, and latency under the stack's latency proxy beside the zero-delay figure.

Two independent measures of how many round trips an action pays for one after another:

- **counted** (Firestore only): the action runs through the API's own dispatcher
  (:func:`core.api.app.dispatch`, the code the ``api`` function runs, account fence and device
  registry included) in this process on an RPC-counting client; ``sequential_rpcs`` is the longest
  chain of its RPCs each started after the previous one answered
  (:meth:`strata_dev.bench.counting.Counts.sequential`).
- **estimated** (every provider): ``(p50 under N ms − p50 at 0) / N`` from the HTTP figures — the
  proxy delays every request to Firestore, Typesense and the vector index by N, so this counts the
  sequential requests to all three, whatever process makes them.
"""

from __future__ import annotations

import json
from typing import Any


def counted_dispatch(ctx: Any, method: str, path: str, token: str, query: dict[str, Any] | None = None,
                     body: Any = None) -> dict[str, Any]:
    """Run one request through the API's dispatcher on ``ctx`` (a counted context); its Firestore
    RPCs. ``ctx.client.counts`` is reset first."""
    from core.api.app import dispatch

    raw = json.dumps(body).encode() if body is not None else b""
    headers = {"authorization": "Bearer " + token}
    if body is not None:
        headers["content-type"] = "application/json"
    params = {k: [str(v)] for k, v in (query or {}).items()}
    counts = ctx.client.counts
    counts.reset()
    status, answer, _ = dispatch(ctx, method, path, headers, params, raw, len(raw))
    snap = counts.snapshot()
    out = {"status": status, "rpcs": snap["rpcs"], "sequential_rpcs": snap["sequential_rpcs"],
           "reads": snap["reads"], "writes": snap["writes"], "chain": counts.chain()}
    if status >= 400:
        out["error"] = answer
    elif isinstance(answer, dict):
        out["body"] = answer
    return out


def _p(figure: dict[str, Any], key: str) -> float | None:
    value = figure.get(key)
    return float(value) if isinstance(value, (int, float)) else None


def compare(levels: dict[str, dict[str, Any]], rtt_ms: float) -> dict[str, Any]:
    """Per action: p50/p95 at zero delay and under ``rtt_ms``, the sequential round trips the
    difference implies, and (list page) the issue's bound ``2.5 × (rtt × round trips + p95 at 0)``."""
    zero, delayed = levels["0"], levels[f"{rtt_ms:g}"]
    out: dict[str, Any] = {"rtt_ms": rtt_ms}
    for name, figure in zero.items():
        other = delayed.get(name)
        if not isinstance(figure, dict) or not isinstance(other, dict) or "p50_ms" not in figure:
            continue
        p50_0, p95_0, p50_n, p95_n = (_p(figure, "p50_ms"), _p(figure, "p95_ms"), _p(other, "p50_ms"),
                                      _p(other, "p95_ms"))
        row: dict[str, Any] = {"p50_ms": p50_n, "p95_ms": p95_n, "zero_delay_p50_ms": p50_0, "zero_delay_p95_ms": p95_0}
        if p50_0 is not None and p50_n is not None and rtt_ms:
            row["estimated_sequential_round_trips"] = round((p50_n - p50_0) / rtt_ms, 2)
        counted = (delayed.get("firestore_round_trips") or {}).get(name)
        if counted:
            row["firestore_rpcs"] = counted["rpcs"]
            row["firestore_sequential_rpcs"] = counted["sequential_rpcs"]
            if p95_0 is not None and p95_n is not None:
                bound = 2.5 * (rtt_ms * counted["sequential_rpcs"] + p95_0)
                row["bound_p95_ms"] = round(bound, 1)
                row["within_bound"] = p95_n <= bound
        out[name] = row
    return out

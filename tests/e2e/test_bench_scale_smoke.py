"""`strata bench scale` and `strata bench cost` at tiny sizes on the session stack: every figure the
issue names is printed, each ratio beside its floor (values are measured, so only presence and sanity
are checked; performance is judged by the benchmarks themselves, never by timed tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from strata_dev.bench import scale
from strata_dev.localstack import stack as localstack

REPO = Path(__file__).resolve().parents[2]


def _bench(stack: dict, *args: str) -> dict:
    env = {**os.environ, **localstack.stack_env(stack), "STRATA_STATE_DIR": stack["state_dir"]}
    done = subprocess.run([sys.executable, "-m", "strata_dev.cli.main", "bench", *args, "--json"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = map(json.loads, done.stdout.splitlines())
    assert "error" not in result, result
    return result


@pytest.mark.e2e
def test_bench_scale_tiny_prints_every_figure_beside_its_floor(stack, tmp_path):
    plot = tmp_path / "scale.png"
    result = _bench(stack, "scale", "--size", "4", "--plot", str(plot))
    for axis, values in (("memories", [4, 8]), ("users", [1, 3])):
        assert [p[axis] for p in result[axis]["points"]] == values
        for point in result[axis]["points"]:
            for name in scale.FIGURES:
                key = f"{name}_p95_over_floor" if name in scale.LATENCY_FIGURES else f"{name}_over_floor"
                assert point[key] is not None and point[key] > 0, (axis, key, point)
        for run in result[axis]["runs"]:
            figures = run["figures"]
            assert figures["consolidation"]["selected"] == run.get("memories", run.get("memories_of_measured_user"))
            assert figures["drain"]["acknowledged"] == figures["drain"]["events"] > 0
            assert 0 < figures["delete_all"]["deleted"] <= figures["delete_all"]["documents"]
        assert set(result[axis]["exponents"]) == set(scale.FIGURES)
    assert result["list_p95_over_floor_max"] is not None
    startup = result["startup"]["functions"]
    for name in ("api", "on_conversation_complete"):
        figures = startup[name]
        assert figures["first_request_status"] in (200, 204), figures
        assert figures["import_ms"] > 0 and figures["cold_start_ms"] > 0 and figures["peak_rss_mb"] > 0
        assert "over_floor_ms" in figures and figures["emulator_warm_up_ms"] is not None
    floor = result["startup"]["floor"]
    assert [start["first_request_status"] for start in floor["starts"]] == [200] * 3 and floor["cold_start_ms"] > 0
    assert plot.is_file() and plot.stat().st_size > 0


@pytest.mark.e2e
def test_bench_cost_tiny_prices_every_operation(stack):
    result = _bench(stack, "cost", "--size", "2")
    assert result["conversations"] == 2 and result["memories"] > 0
    for name in ("capture", "projection", "consolidation", "search", "list_page"):
        op = result["operations"][name]
        assert op["runs"] > 0 and op["reads"] > 0 and op["dollars"] > 0, (name, op)
    assert result["operations"]["capture"]["writes"] > 0 and result["operations"]["capture"]["pubsub_messages"] > 0
    assert result["dollars_per_1000_conversations"] > 0 and result["dollars_per_1000_active_users_month"] > 0
    assert result["prices"]["region"] and result["prices"]["as_of"]
    # The model path priced apart: one extraction request per conversation (each sample is one window),
    # at least one routing request, list prices with their date.
    model = result["model"]
    assert model["extraction"]["requests"] == 2 and model["extraction"]["prompt_tokens"] > 0
    assert model["routing"]["requests"] >= 1 and model["prices_per_million_tokens"]["as_of"]
    assert model["dollars_per_1000_conversations"] > 0
    assert result["dollars_per_1000_conversations_with_model"] > result["dollars_per_1000_conversations"]

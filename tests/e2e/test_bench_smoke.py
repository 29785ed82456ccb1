"""`strata bench all --quick` at a tiny size on the session stack: every benchmark prints one JSON
object with every figure its issue names (values are measured, so only presence and sanity are
checked here; performance is judged by the benchmarks themselves, never by timed tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from strata_dev.localstack import stack as localstack

REPO = Path(__file__).resolve().parents[2]

FIGURES = {
    "ingest": ["conversations_per_s", "memories_per_s", "completion_to_visible.p50_ms", "completion_to_visible.p95_ms",
               "firestore.reads_per_memory", "firestore.writes_per_memory", "baseline.conversations_per_s", "ratio",
               "profile.rpcs_per_conversation.commits", "profile.rpcs_per_conversation.begins",
               "profile.trigger_path_cpu_ms_per_conversation", "profile.trigger_path_wall_ms_per_conversation",
               "profile.baseline_cpu_ms_per_conversation", "profile.in_process_split.waiting_on_rpcs_ms",
               "profile.in_process_split.our_cpu_ms", "profile.in_process_split.emulator_cpu_ms_per_rpc"],
    "consolidate": ["items_routed_per_s", "passes", "firestore.ops_per_routed_item", "baseline.items_per_s", "ratio"],
    "schedule": ["sizes", "sorts_last.ticks_until_last_routed", "sorts_last.routed"],
    "project": ["events_per_s", "commit_to_searchable.p50_ms", "commit_to_searchable.p95_ms",
                "documents_per_provider_call", "baseline.events_per_s", "ratio"],
    "read": ["list_page_100.p50_ms", "list_page_100.p95_ms", "keyword_search.p50_ms", "keyword_search.p95_ms",
             "vector_search.p50_ms", "vector_search.p95_ms", "firestore_reads_per_returned_memory.list",
             "note"],
    "recall": ["files.0.all_questions.bm25_recall@5", "files.0.all_questions.bm25_recall@10",
               "files.0.all_questions.keyword_recall@5", "files.0.all_questions.keyword_recall@10",
               "files.0.all_questions.vector_recall@10", "files.0.all_questions.hybrid_recall@10",
               "files.0.extraction_coverage.all_observations",
               "files.0.extraction_coverage.evidence_turns.evidence_coverage"],
    "doctor": ["doctor_seconds", "doctor_peak_traced_mb", "process_peak_rss_mb", "baseline.bare_read_seconds",
               "ratio"],
}


def _get(result: dict, dotted: str):
    value = result
    for part in dotted.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


@pytest.mark.e2e
def test_bench_all_quick_prints_every_figure(stack):
    env = {**os.environ, **localstack.stack_env(stack), "STRATA_STATE_DIR": stack["state_dir"]}
    done = subprocess.run([sys.executable, "-m", "strata_dev.cli.main", "bench", "all", "--quick", "--size", "3", "--json"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    results = {r["benchmark"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(results) == set(FIGURES)
    for name, figures in FIGURES.items():
        result = results[name]
        assert "error" not in result, result
        for figure in figures:
            assert _get(result, figure) is not None, f"{name}: {figure} missing in {result}"
    assert results["ingest"]["conversations"] == 3 and results["ingest"]["memories"] > 0
    assert results["ingest"]["firestore"]["writes_per_memory"] > 1  # items plus commit, journal, outbox
    assert results["ingest"]["profile"]["rpcs_per_conversation"]["commits"] >= 1  # the apply transaction's
    assert results["consolidate"]["passes"][0]["routed"] > 0
    (scheduled,) = results["schedule"]["sizes"]
    assert scheduled["users"] == scheduled["routed"] == 3 and scheduled["tasks"] >= 3
    assert results["schedule"]["sorts_last"]["ticks_until_last_routed"] <= 2
    assert results["project"]["acknowledged"] == results["project"]["events"]
    assert results["project"]["commit_to_searchable"]["never_seen"] == 0
    assert results["read"]["memories"] == 3 and "fewer than 10,000" in results["read"]["note"]
    assert results["read"]["list_page_100"]["memories_returned"] > 0
    # Three seeded memories may match no search query, so these two may honestly be null; they must exist.
    assert {"keyword", "vector"} <= set(results["read"]["firestore_reads_per_returned_memory"])
    assert results["doctor"]["findings"] == 0 and results["doctor"]["rows_compared"]["typesense"] == 3
    recall = results["recall"]["files"][0]["all_questions"]
    assert recall["questions"] >= 15
    assert all(0.0 <= value <= 1.0 for key, value in recall.items() if "recall" in key)

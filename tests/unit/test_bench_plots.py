"""`strata bench ... --plot FILE`: charts drawn from results, and `--replot` from a saved run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strata_dev.bench import plots
from strata_dev.cli import main as cli

pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"
RESULTS = [{"benchmark": "ingest", "ratio": 0.59}, {"benchmark": "consolidate", "ratio": 0.93},
           {"benchmark": "read", "keyword": {"p95_ms": 30}}]


def test_replot_draws_the_summary_from_a_saved_json_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "run.jsonl"
    saved.write_text("\n".join(json.dumps(r) for r in RESULTS) + "\n")
    out = tmp_path / "img" / "all.png"
    assert cli.main(["bench", "all", "--replot", str(saved), "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(PNG)
    assert "chart written" in capsys.readouterr().err


def test_replot_without_plot_is_a_usage_error(tmp_path: Path) -> None:
    saved = tmp_path / "run.jsonl"
    saved.write_text(json.dumps(RESULTS[0]))
    assert cli.main(["bench", "all", "--replot", str(saved)]) == 2


def test_recall_and_quality_charts(tmp_path: Path) -> None:
    recall = {"embedder": "minilm", "files": [{"data": "dev_set.json", "owners": 8, "all_questions": {
        "bm25_recall@10": 0.545, "keyword_recall@10": 0.53, "vector_recall@10": 0.68, "hybrid_recall@10": 0.67}}]}
    assert plots.draw("recall", [recall], tmp_path / "recall.png") == str(tmp_path / "recall.png")
    quality = {"split": "dev", "sessions": 29, "paths": {
        "rules": {"visible_memories": 117, "precision": 0.85, "good_per_session": 4.1,
                  "by_judge": {"blind-c": {"precision": 0.78, "good_per_session": 3.8}}},
        "model": {"skipped": "no recorded-replies server"}}}
    assert plots.draw("quality", [quality], tmp_path / "quality.png") == str(tmp_path / "quality.png")
    assert (tmp_path / "quality.png").read_bytes().startswith(PNG)


def test_nothing_to_draw_draws_nothing(tmp_path: Path) -> None:
    assert plots.draw("all", [{"benchmark": "read"}], tmp_path / "x.png") is None
    assert not (tmp_path / "x.png").exists()

"""The blind-pair measurement (``strata_dev.bench.supersession``) counts what the services stored:
an owner's later change of a declared attribute ends the first fact; someone else's remark does
not. Pairs written here, in the blind files' format."""

from __future__ import annotations

import json
from pathlib import Path

from strata_dev.bench import supersession


def _side(day: str, text: str) -> dict:
    return {"date": day, "segments": [{"speaker": "assistant", "text": "How are things?"},
                                      {"speaker": "user", "text": text}]}


def test_an_update_ends_the_first_fact_and_a_remark_about_someone_else_does_not(tmp_path: Path) -> None:
    pairs = [
        {"id": "u1", "label": "update", "attribute": "residence",
         "first": _side("2025-01-05", "I live in Leeds."), "later": _side("2025-06-01", "We moved to Bristol in May.")},
        {"id": "n1", "label": "non_update", "attribute": "residence",
         "first": _side("2025-01-05", "I live in Leeds."), "later": _side("2025-06-01", "My brother lives in Bristol.")},
    ]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"pairs": pairs}))
    out = supersession.measure(path)
    assert (out["updates_ended"], out["non_updates_ending_a_fact"], out["first_fact_stated"]) == (1.0, 0.0, 1.0)

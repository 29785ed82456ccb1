"""The knowledge-update replay (``python -m strata_dev.bench.updates``): the rule extractor and
router on pairs of conversations without a stack. Expectations from the issue's rule: the owner's
own ending of a thing supersedes the fact that names it; someone else's does not."""

from __future__ import annotations

import json
from pathlib import Path

from strata_dev.bench import updates


def _conv(day: str, *lines: str) -> dict:
    return {"date": day, "turns": [{"speaker": "user", "text": line} for line in lines]}


def test_replay_supersedes_the_owner_s_ending_only(tmp_path: Path) -> None:
    pairs = [
        {"id": "possession-a", "kind": "possession", "expect": "supersede",
         "first": _conv("2025-01-02", "I drive an old green Saab."),
         "second": _conv("2025-03-02", "I sold the Saab last week, so it's the tram everywhere.")},
        {"id": "possession-b", "kind": "possession", "expect": "keep",
         "first": _conv("2025-01-02", "I drive an old green Saab."),
         "second": _conv("2025-03-02", "My brother sold his Saab last week.")},
    ]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"pairs": pairs}), encoding="utf-8")
    result = updates.replay(path)
    assert result["updates_caught"] == ["possession-a"]
    assert result["wrongly_superseded"] == []
    assert (result["updates_superseded"], result["non_updates_superseded"]) == (1.0, 0.0)

"""``strata bench quality``: sessions through the real capture and consolidation on the fakes, verdicts
that hold no text, figures from blind verdicts only, and a packet for a blind judge."""

from __future__ import annotations

import json
from pathlib import Path

from strata_dev.bench import quality


def _session(*lines: str) -> quality.Session:
    doc = {"status": "completed", "transcript_segments": [
        {"id": f"s{i}", "text": text, "speaker": "SPEAKER_00", "is_user": True} for i, text in enumerate(lines)]}
    return quality.Session(id="t/s1/owner", ref="written for this test", owner="owner", doc=doc)


def test_a_session_leaves_its_durable_memories_visible_and_archives_a_plan() -> None:
    memories = quality.run_session("rules", _session(
        "I work as a baker in Ghent.", "Yesterday I went bowling with my cousins.", "Thanks, great chat!"))
    assert [(m.content, m.layer, m.kind) for m in memories] == [("User works as a baker in Ghent", "long_term", "fact")]


def test_the_model_path_is_skipped_without_a_replay_server() -> None:
    result, memories, _ = quality.measure(data=None, split="heldout",
                                          paths_=("model",), with_samples=False)
    assert "skipped" in result["paths"]["model"] and memories == {}


def test_a_verdict_holds_the_key_and_answers_only(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    key = quality.key("t/s1/owner", "User works as a baker in Ghent")
    answers.write_text(json.dumps({"answers": [{"key": key, "faithful": True, "attributed": True, "durable": True,
                                                "self_contained": False, "memory": "not to be kept"}]}))
    target = quality.record(str(answers), "judge one", out=tmp_path / "quality_verdicts_one.json")
    (row,) = json.loads(target.read_text())["verdicts"]
    assert set(row) == {"key", "faithful", "attributed", "durable", "self_contained", "good", "judge", "blind"}
    assert row["good"] is False and row["blind"] is True


def test_figures_count_blind_verdicts_only() -> None:
    memories = [quality.Memory("t/s1/owner", text, "long_term", "fact", "user") for text in ("a b c", "d e f")]
    verdicts = {
        memories[0].key: [{"key": memories[0].key, "faithful": True, "attributed": True, "durable": True,
                           "self_contained": True, "good": True, "judge": "blind one", "blind": True}],
        memories[1].key: [{"key": memories[1].key, "faithful": True, "attributed": True, "durable": False,
                           "self_contained": True, "good": False, "judge": "self", "blind": False}],
    }
    headline = quality.figures(memories, 2, verdicts)
    assert (headline["judged"], headline["precision"], headline["good_per_session"]) == (1, 1.0, 0.5)
    assert quality.figures(memories, 2, verdicts, "self")["precision"] == 0.0


def test_the_packet_mixes_paths_under_keys_and_leaves_out_blind_judged(tmp_path: Path) -> None:
    session = _session("I work as a baker in Ghent.")
    a = quality.Memory(session.id, "User works as a baker in Ghent", "long_term", "fact", "user")
    b = quality.Memory(session.id, "User is a baker", "long_term", "fact", "user")
    judged = quality.Memory(session.id, "User lives in Ghent", "long_term", "fact", "user")
    verdicts = {judged.key: [{"key": judged.key, "good": True, "blind": True}]}
    out = tmp_path / "packet.json"
    summary = quality.packet({"rules": [a, judged], "model": [b, a]}, [session], verdicts, str(out))
    (row,) = json.loads(out.read_text())["sessions"]
    assert summary["memories"] == 2 and row["transcript"] == "written for this test"
    assert sorted(m["key"] for m in row["memories"]) == sorted([a.key, b.key])
    assert all(set(m) == {"key", "memory"} for m in row["memories"])  # never the path that made it

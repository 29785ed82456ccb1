"""Reading LoCoMo-format data tolerantly and turning sessions into conversation docs."""

import json

from strata_dev.bench import locomo
from strata_dev.bench.recall import evaluate


def _raw():
    return {
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_2_date_time": "2 May", "session_1_date_time": "1 May",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Porto."},
                          {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice!"},
                          {"speaker": "Ben", "dia_id": "D1:3", "text": "", "blip_caption": "a dog"}],
            "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "I adopted a greyhound."}],
        },
        "observation": {"session_1_observation": {"Ana": [["Ana moved to Porto", "D1:1"]],
                                                  "Ben": [["Ben has a dog", ["D1:3"]], ["no id"]]}},
        "qa": [{"question": "Where does Ana live?", "answer": "Porto", "evidence": ["D1:1"], "category": 1},
               {"question": "Which pet?", "adversarial_answer": "cat", "evidence": ["D2:1; D1:2"], "category": 5},
               {"answer": "no question"}],
    }


def test_parse_sessions_in_order_with_dates_and_captions():
    sample = locomo.parse_sample(_raw())
    assert [s.index for s in sample.sessions] == [1, 2]
    assert sample.sessions[0].date == "1 May"
    assert [t.dia_id for t in sample.turns()] == ["D1:1", "D1:2", "D1:3", "D2:1"]
    assert sample.turns()[2].text == "[shares a photo: a dog]"
    assert (sample.speaker_a, sample.speaker_b) == ("Ana", "Ben")


def test_observations_and_questions_accept_the_real_files_quirks():
    sample = locomo.parse_sample(_raw())
    assert [(o.fact, o.dia_ids, o.speaker) for o in sample.observations] == [
        ("Ana moved to Porto", ("D1:1",), "Ana"), ("Ben has a dog", ("D1:3",), "Ben")]
    assert [(q.answer, q.evidence) for q in sample.questions] == [("Porto", ("D1:1",)), ("cat", ("D2:1", "D1:2"))]


def test_load_accepts_a_list_a_single_sample_or_a_samples_key(tmp_path):
    for payload in ([_raw()], _raw(), {"samples": [_raw()]}):
        path = tmp_path / "data.json"
        path.write_text(json.dumps(payload))
        assert [s.sample_id for s in locomo.load(path)] == ["s1"]


def test_conversation_doc_keeps_dia_ids_and_marks_only_the_owner():
    sample = locomo.parse_sample(_raw())
    doc = locomo.conversation_doc(sample, sample.sessions[0], "Ana")
    assert doc["status"] == "completed"
    assert [(s["id"], s["is_user"]) for s in doc["transcript_segments"]] == [
        ("D1:1", True), ("D1:2", False), ("D1:3", False)]


def test_shipped_sample_is_well_formed():
    [sample] = locomo.load(locomo.default_sample_path())
    turn_ids = {t.dia_id for t in sample.turns()}
    assert len(sample.sessions) == 3 and 35 <= len(turn_ids) <= 45
    assert len(sample.questions) >= 15
    assert all(q.evidence and set(q.evidence) <= turn_ids for q in sample.questions)
    assert all(set(o.dia_ids) <= turn_ids for o in sample.observations)


class _Item:
    def __init__(self, *segment_ids):
        ref = type("Ref", (), {})
        refs = []
        for sid in segment_ids:
            r = ref()
            r.segment_id = sid
            refs.append(r)
        evidence = type("Ev", (), {})()
        evidence.quote_refs = refs
        self.evidence = [evidence]


class _Scored:
    def __init__(self, *segment_ids):
        self.item = _Item(*segment_ids)


def test_evaluate_reaches_turns_through_cited_quote_refs():
    sample = locomo.parse_sample(_raw())
    results = [_Scored("D2:1"), _Scored("D1:1")]
    rows = evaluate(sample, "Ana", {"keyword": lambda q: results})["rows"]
    first, second = rows
    assert first["owner_only"] is True and second["owner_only"] is False
    assert first["keyword@5"] == 1.0
    assert first["bm25@5"] == 0.0  # "Where does Ana live?" shares no word with "I moved to Porto."
    assert second["keyword@5"] == 0.5  # D2:1 reached, D1:2 (Ben's) not cited by any memory

"""Extraction types, sources and grounding."""

from __future__ import annotations

import pytest

from core.adapters.rules import sensitivity
from core.domain.extraction import (
    Candidate,
    ExtractionResult,
    ExtractionSource,
    GroundingError,
    QuoteRef,
    Segment,
    WorkflowCandidate,
    drop_secret_candidates,
    ground,
    normalize_text,
    source_from_conversation,
    source_segments,
    split_external_text,
)
from core.errors import StrataError

OWNER = Segment("s0", "Something vegetarian. I stopped eating meat about two years ago.", "SPEAKER_00", True)
OTHER = Segment("s1", "Does your brother eat meat?", "SPEAKER_01", False)
OWNER2 = Segment("s2", "Tom does, but he's allergic to peanuts, so no satay this time.", "SPEAKER_00", True)
SOURCE = ExtractionSource("u1", "c1", (OWNER, OTHER, OWNER2))


def candidate(*quotes: str, subject: str = "user", label: str | None = None, content: str = "User x") -> Candidate:
    return Candidate(content=content, kind="fact", category="core", subject=subject,  # type: ignore[arg-type]
                     subject_label=label, quotes=tuple(quotes), sensitivity=frozenset())


def result(*candidates: Candidate) -> ExtractionResult:
    return ExtractionResult(tuple(candidates), (), (), "test", "1")


def test_normalisation_case_folds_and_collapses_punctuation() -> None:
    assert normalize_text("  Tom DOES,   but he's -- allergic!! ") == "tom does but he s allergic"
    assert normalize_text("...") == ""


def test_quote_binds_to_its_one_segment() -> None:
    (grounded,) = ground(SOURCE, result(candidate("I stopped eating meat about two years ago")), sensitivity=sensitivity)
    assert grounded.quote_refs == (QuoteRef(segment_id="s0", quote="I stopped eating meat about two years ago",
                                            segment="Something vegetarian. I stopped eating meat about two years ago."),)
    assert grounded.subject == "user"


@pytest.mark.parametrize("restricted", ["My password is hunter2.", "I was diagnosed with diabetes last year."])
def test_a_segment_with_anything_restricted_keeps_its_quote_but_not_its_text(restricted: str) -> None:
    """The quote ref keeps the segment's whole text for vector search only when none of it is
    restricted or secret: a restricted word never reaches an index, not even as a vector."""
    segment = Segment("s9", f"{restricted} I moved to Leeds last spring.", "SPEAKER_00", True)
    source = ExtractionSource("u1", "c1", (segment,))
    (grounded,) = ground(source, result(candidate("I moved to Leeds last spring")), sensitivity=sensitivity)
    assert grounded.quote_refs == (QuoteRef(segment_id="s9", quote="I moved to Leeds last spring", segment=""),)


def test_grounding_ignores_case_and_punctuation_on_both_sides() -> None:
    (grounded,) = ground(SOURCE, result(candidate("i STOPPED eating meat... about two-years ago!!")), sensitivity=sensitivity)
    assert grounded.quote_refs[0].segment_id == "s0"
    (grounded,) = ground(SOURCE, result(candidate("TOM DOES; but he’s allergic", subject="third_party", label="Tom")), sensitivity=sensitivity)
    assert grounded.quote_refs[0].segment_id == "s2"
    with pytest.raises(GroundingError):  # punctuation becomes a word break: "hes" is not "he s"
        ground(SOURCE, result(candidate("tom does but hes allergic", subject="third_party", label="Tom")), sensitivity=sensitivity)


def test_apostrophes_collapse_like_any_punctuation() -> None:
    (grounded,) = ground(SOURCE, result(candidate("Tom does -- but he's allergic", subject="third_party",
                                                  label="Tom")), sensitivity=sensitivity)
    assert grounded.quote_refs[0].segment_id == "s2"
    assert grounded.subject == "third_party"


def test_missing_quote_fails_the_whole_set() -> None:
    good = candidate("I stopped eating meat")
    bad = candidate("I love steak")
    with pytest.raises(GroundingError) as info:
        ground(SOURCE, result(good, bad), sensitivity=sensitivity)
    assert info.value.code == "grounding_failed"
    assert isinstance(info.value, StrataError)


def test_quote_in_two_segments_is_ambiguous_and_fails() -> None:
    source = ExtractionSource("u1", "c1", (
        Segment("a", "I love hiking.", "SPEAKER_00", True),
        Segment("b", "Honestly, I LOVE hiking!", "SPEAKER_00", True),
    ))
    with pytest.raises(GroundingError, match="2 segments"):
        ground(source, result(candidate("I love hiking")), sensitivity=sensitivity)


def test_candidate_without_quotes_or_with_empty_quote_fails() -> None:
    with pytest.raises(GroundingError):
        ground(SOURCE, result(candidate()), sensitivity=sensitivity)
    with pytest.raises(GroundingError):
        ground(SOURCE, result(candidate("?!")), sensitivity=sensitivity)


def test_partial_word_does_not_bind() -> None:
    with pytest.raises(GroundingError):
        ground(SOURCE, result(candidate("topped eating")), sensitivity=sensitivity)


def test_user_subject_downgraded_when_a_quote_is_not_the_owners() -> None:
    (grounded,) = ground(SOURCE, result(candidate("I stopped eating meat", "Does your brother eat meat")), sensitivity=sensitivity)
    assert grounded.subject == "unknown"
    assert [r.segment_id for r in grounded.quote_refs] == ["s0", "s1"]


def test_third_party_stays_third_party_even_from_other_speakers() -> None:
    (grounded,) = ground(SOURCE, result(candidate("your brother", subject="third_party", label="Tom")), sensitivity=sensitivity)
    assert grounded.subject == "third_party"


def test_secret_in_a_candidate_fails_grounding() -> None:
    source = ExtractionSource("u1", "c1", (Segment("s", "my password is Tulip-2291", "A", True),))
    with pytest.raises(GroundingError):
        ground(source, result(candidate("my password is Tulip-2291")), sensitivity=sensitivity)


def test_empty_result_grounds_to_nothing() -> None:
    assert ground(SOURCE, result(), sensitivity=sensitivity) == ()


def test_external_text_is_split_into_deterministic_pseudo_segments() -> None:
    text = "Notes from today.\nI moved to Lisbon in March. I climb a lot!\n\n  Call Marco?  "
    segments = split_external_text(text)
    assert [s.id for s in segments] == ["external:0", "external:1", "external:2", "external:3"]
    assert [s.text for s in segments] == ["Notes from today.", "I moved to Lisbon in March.", "I climb a lot!",
                                          "Call Marco?"]
    assert all(s.is_user for s in segments)
    assert split_external_text(text) == segments


def test_quotes_bind_to_external_text_instead_of_transcript() -> None:
    source = ExtractionSource("u1", "c1", (Segment("s0", "I moved to Lisbon in March", "A", True),),
                              external_text="Diary. I moved to Lisbon in March.")
    assert [s.id for s in source_segments(source)] == ["external:0", "external:1"]
    (grounded,) = ground(source, result(candidate("moved to Lisbon in March")), sensitivity=sensitivity)
    assert grounded.quote_refs[0].segment_id == "external:1"
    assert grounded.subject == "user"


def test_source_from_conversation_copies_only_segments() -> None:
    doc = {
        "id": "c1", "status": "completed", "language": "pt",
        "structured": {"title": "T", "overview": "secret overview", "action_items": []},
        "apps_results": [{"content": "app output"}],
        "transcript_segments": [
            {"id": "x0", "text": "Hello", "speaker": "SPEAKER_00", "is_user": True, "start": 0, "end": 1},
            {"text": "No id here", "speaker": "SPEAKER_01", "is_user": False},
        ],
    }
    source = source_from_conversation("u1", "c1", doc)
    assert source.segments == (Segment("x0", "Hello", "SPEAKER_00", True),
                               Segment("seg:1", "No id here", "SPEAKER_01", False))
    assert source.external_text is None and source.language == "pt"
    assert "overview" not in repr(source) and "app output" not in repr(source)
    doc["transcript_segments"][0]["text"] = "changed"
    assert source.segments[0].text == "Hello"  # nothing aliases the document


def test_source_from_integration_conversation_uses_external_text() -> None:
    doc = {"transcript_segments": [{"id": "s", "text": "ignored", "is_user": True}],
           "external_data": {"text": "I work as a nurse.", "text_source": "other"}}
    source = source_from_conversation("u1", "c2", doc)
    assert source.external_text == "I work as a nurse."
    assert source.segments == ()
    assert [s.text for s in source_segments(source)] == ["I work as a nurse."]


def test_drop_secret_candidates_removes_memories_and_workflow_with_secrets() -> None:
    res = ExtractionResult(
        (candidate("my pin is 1234", content="User's PIN is 1234"), candidate("I climb", content="User climbs")),
        (WorkflowCandidate("action_item", "Change password to hunter22", "password is hunter22"),),
        (WorkflowCandidate("goal", "Run a marathon", "run a marathon"),),
        "t", "1",
    )
    cleaned = drop_secret_candidates(res, sensitivity=sensitivity)
    assert [c.content for c in cleaned.memories] == ["User climbs"]
    assert cleaned.action_items == ()
    assert len(cleaned.goals) == 1


def test_candidate_validates_its_enums() -> None:
    with pytest.raises(ValueError):
        Candidate("x", "opinion", "core", "user", None, ("q",), frozenset())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Candidate("x", "fact", "core", "someone", None, ("q",), frozenset())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        WorkflowCandidate("todo", "x", "q")  # type: ignore[arg-type]

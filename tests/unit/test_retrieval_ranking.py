"""Retrieval on real conversations: question terms, the projected quote field, relative dates and
the owner's turns that no specific rule recognises (issue 15). Oracles are written by hand from the
rules the docstrings state, never taken from the code under test."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from core.adapters.rules import sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.adapters.rules.extractor.dates import resolve
from core.adapters.rules.query_words import keyword_terms
from core.adapters.rules.sensitivity import contains_secret
from core.domain.extraction import ExtractionSource, Segment, ground, source_from_conversation
from core.domain.plan import projected_context, projected_quote
from core.domain.records import Evidence, MemoryItem, QuoteRef
from core.ports import ProjectionDoc
from strata_dev.bench import locomo


def test_a_question_keeps_only_its_content_words() -> None:
    assert keyword_terms("What did I say about the trip to Lisbon?") == "trip Lisbon"
    assert keyword_terms("Which company did I start working for in January 2025?") == \
        "company start working January 2025"
    assert keyword_terms("What did you tell me?") == "What did you tell me?"  # nothing left: the query itself


def _item(**changes: object) -> MemoryItem:
    evidence = [Evidence(evidence_id="e1", source_id="c1", quote_refs=[
        QuoteRef(segment_id="s1", quote="I play the cello on Sundays"),
        QuoteRef(segment_id="s2", quote="my password is tulip-2291")])]
    fields: dict[str, object] = {"id": "m", "uid": "u", "content": "User plays the cello", "layer": "long_term",
                                 "status": "active", "processing_state": "processed", "evidence": evidence}
    fields.update(changes)
    return MemoryItem(**fields).settle()  # type: ignore[arg-type]


def test_the_projected_quote_holds_the_users_words_but_never_a_secret_or_a_restricted_item() -> None:
    assert projected_quote(_item(), sensitivity=sensitivity) == "I play the cello on Sundays"
    assert projected_quote(_item(sensitivity_labels=["health"]), sensitivity=sensitivity) == ""  # restricted: never indexed
    assert projected_quote(_item(layer="archive"), sensitivity=sensitivity) == ""
    assert projected_quote(_item(edited=True), sensitivity=sensitivity) == ""  # an edit replaces the words that found it


def _cited(*refs: QuoteRef, status: str = "active") -> list[Evidence]:
    return [Evidence(evidence_id="e1", source_id="c1", quote_refs=list(refs), status=status)]  # type: ignore[arg-type]


CELLO = QuoteRef(segment_id="s1", quote="I play the cello on Sundays",
                 segment="Mostly quiet weekends. I play the cello on Sundays with two friends.")
DINNER = QuoteRef(segment_id="s2", quote="we cook together", segment="We cook together on Fridays.")


def test_the_vector_side_embeds_the_content_with_the_whole_quoted_segments() -> None:
    """docs/data-model.md: the vector index embeds the content, then each quoted segment's whole
    text once, in order; nothing for a segment whose text was left empty (restricted or secret),
    for tombstoned evidence, or for an item that is restricted, not visible or edited."""
    from core.domain.projection import vector_text

    assert projected_context(_item(evidence=_cited(CELLO, DINNER, CELLO))) == (
        "Mostly quiet weekends. I play the cello on Sundays with two friends. We cook together on Fridays.")
    assert projected_context(_item(evidence=_cited(CELLO, QuoteRef(segment_id="s3", quote="x")))) == CELLO.segment
    assert projected_context(_item()) == ""  # grounded before segments were kept: the content alone
    for changes in ({"sensitivity_labels": ["health"]}, {"layer": "archive"}, {"edited": True},
                    {"evidence": _cited(CELLO, status="tombstoned")}):
        assert projected_context(_item(**{"evidence": _cited(CELLO), **changes})) == ""
    doc = ProjectionDoc(provider_id="p", uid="u", memory_id="m", layer="long_term", revision=1,
                        content="User plays the cello", context=CELLO.segment)
    assert vector_text(doc) == "User plays the cello " + CELLO.segment
    assert vector_text(replace(doc, context="")) == "User plays the cello"


def test_the_public_view_shows_each_quote_but_not_its_whole_segment() -> None:
    from datetime import UTC, datetime

    from core.domain.records import to_public

    view = to_public(_item(evidence=_cited(CELLO)), datetime(2026, 1, 1, tzinfo=UTC))
    assert view["evidence"][0]["quote_refs"] == [{"segment_id": "s1", "quote": "I play the cello on Sundays"}]


def test_relative_dates_resolve_against_the_session_day() -> None:
    thursday = date(2024, 11, 14)
    assert resolve("last Tuesday I went", thursday) == [("last Tuesday", "12 November 2024")]
    assert resolve("on Wednesday I found a bug", thursday) == [("on Wednesday", "13 November 2024")]
    assert resolve("yesterday", thursday) == [("yesterday", "13 November 2024")]
    assert resolve("next Monday", thursday) == [("next Monday", "18 November 2024")]
    assert resolve("it's the 21st", thursday) == [("the 21st", "21 November 2024")]
    assert resolve("out of Southampton on the 8th of June 2025", thursday) == [
        ("the 8th of June 2025", "8 June 2025")]
    assert resolve("two weeks ago", thursday) == [("two weeks ago", "the week of 28 October 2024")]
    assert resolve("I may go", thursday) == [] and resolve("last Tuesday", None) == []


def _memories(*turns: tuple[str, str, bool], day: date | None = None) -> list[str]:
    segments = tuple(Segment(f"D1:{i}", text, speaker, is_user) for i, (speaker, text, is_user) in enumerate(turns))
    source = ExtractionSource("u", "c", segments, session_date=day)
    result = RuleExtractor().extract(source)
    grounded = ground(source, result, sensitivity=sensitivity)
    for item in grounded:  # a fact about the user is quoted from the user's own turns only
        if item.candidate.subject == "user":
            assert all(ref.segment_id in {s.id for s in segments if s.is_user} for ref in item.quote_refs)
    return [c.content for c in result.memories]


def test_an_answer_with_no_subject_is_not_dumped_with_its_question() -> None:
    # "User said, asked '...': ..." never reads alone (issue 43): the model path keeps such answers.
    facts = _memories(("Rui", "Where's the new job?", False),
                      ("Inês", "Vento Pay. It's a payments startup, like 60 people.", True))
    assert facts == []


def test_a_first_person_clause_no_rule_knows_is_kept_with_its_date_resolved() -> None:
    facts = _memories(("Derek", "Honestly, I'm collecting the keys to the new flat on the 18th of July. The "
                                "solicitors have finally pulled their fingers out.", True), day=date(2025, 6, 20))
    assert facts == ["User is collecting the keys to the new flat on the 18th of July "
                     "(the 18th of July: 18 July 2025)"]


def test_small_talk_questions_reactions_and_secrets_stay_out() -> None:
    assert _memories(("Ana", "Haha thanks, see you Sunday!", True), ("Ana", "How's baby Wren??", True),
                     ("Ana", "I know, I know. Honestly.", True)) == []
    facts = _memories(("Ana", "My new flat is in Alfama. My door code is 4471 and the wifi password is "
                              "tulip-2291. It has a tiny balcony over the river.", True))
    assert facts and not any(contains_secret(f) or "4471" in f or "tulip" in f for f in facts)


def test_the_other_speakers_facts_stay_theirs() -> None:
    facts = _memories(("Ana", "How was the weekend?", True),
                      ("Ben", "I've started volunteering at the city farm on Saturdays.", False))
    assert facts == ["Ben has started volunteering at the city farm on Saturdays"]


def test_the_bench_gives_each_session_its_start_and_extraction_reads_it() -> None:
    sample = locomo.parse_sample({"sample_id": "s", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "7:40 pm on 12 January, 2025",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Porto yesterday."}]}})
    doc = locomo.conversation_doc(sample, sample.sessions[0], "Ana")
    assert source_from_conversation("u", "c", doc).session_date == date(2025, 1, 12)

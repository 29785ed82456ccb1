"""The rule extractor on named other speakers.

A transcript that names who spoke ("Jonas", not ``SPEAKER_01``) lets the extractor keep what another
speaker says about themselves in the first person, as a ``third_party`` fact labelled with their
name. It is never the user's, never a workflow item, and an anonymous speaker is still not read.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.adapters.rules import sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.adapters.rules.sensitivity import contains_secret
from core.domain.extraction import ExtractionResult, ExtractionSource, Segment, bind_quote, ground
from core.domain.records import is_restricted


def extract(*turns: tuple[str, str, bool]) -> tuple[ExtractionSource, ExtractionResult]:
    """Turns are ``(speaker, text, is_user)``; every result must ground."""
    segments = tuple(Segment(f"s{i}", text, speaker, is_user) for i, (speaker, text, is_user) in enumerate(turns))
    source = ExtractionSource("u", "c", segments)
    result = RuleExtractor().extract(source)
    ground(source, result, sensitivity=sensitivity)
    return source, result


def about(result: ExtractionResult, label: str) -> dict[str, tuple[str, ...]]:
    return {c.content: c.quotes for c in result.memories if c.subject_label == label}


def test_a_named_speakers_first_person_fact_is_theirs() -> None:
    source, result = extract(("Maya", "Anything new?", True),
                             ("Jonas", "Nice, Lisbon is close. I started learning the cello in January.", False))
    (fact,) = result.memories
    assert fact.content == "Jonas started learning the cello in January"
    assert (fact.subject, fact.subject_label, fact.kind) == ("third_party", "Jonas", "fact")
    assert fact.quotes == ("I started learning the cello in January",)
    (grounded,) = ground(source, result, sensitivity=sensitivity)
    assert grounded.subject == "third_party" and grounded.quote_refs[0].segment_id == "s1"


def test_speaker_rewrites_keep_the_speaker_as_subject() -> None:
    _, result = extract(("Jonas", "Yes, my teacher is strict but patient.", False),
                        ("Jonas", "I switched to decaf myself.", False),
                        ("Daniel", "Every Monday I swim at the lido.", False))
    assert about(result, "Jonas") == {"Jonas's teacher is strict but patient": ("my teacher is strict but patient",),
                                      "Jonas switched to decaf": ("I switched to decaf myself",)}
    assert about(result, "Daniel") == {"Daniel swims at the lido every Monday": ("Every Monday I swim at the lido",)}


def test_anonymous_speakers_are_still_not_read() -> None:
    for label in ("SPEAKER_01", "Speaker 2", "B", "", "speaker", "Unknown"):
        _, result = extract((label, "I moved to Berlin in May and I love jazz.", False), ("A", "Nice.", True))
        assert result.memories == (), label


def test_another_speakers_tasks_goals_and_talk_about_you_are_skipped() -> None:
    _, result = extract(("Ben", "I need to call the landlord by Friday.", False),
                        ("Ben", "I'm aiming for a sub-two half marathon.", False),
                        ("Ben", "I love your new flat, I'd like to visit you soon.", False),
                        ("Ben", "Hey! How are you? The weather is grey today.", False))
    assert result.memories == () and result.action_items == () and result.goals == ()


def test_another_speakers_secret_and_health_stay_out_of_reach() -> None:
    _, result = extract(("Ben", "My password is Tulip-2291, and I take insulin every morning.", False))
    texts = [t for c in result.memories for t in (c.content, *c.quotes)]
    assert not any(contains_secret(t) or "tulip" in t.lower() for t in texts)
    for candidate in result.memories:
        assert candidate.subject == "third_party"
        if "insulin" in candidate.content:
            assert is_restricted(candidate.sensitivity)


PHRASES = ["I moved to Lisbon in March", "I love hiking", "my password is Tulip-2291", "I need to call Marco",
           "I'm training for a marathon", "Hey, what's up", "I climb three times a week", "my pin is 4417",
           "my brother Tom is a nurse", "I'd like to visit you", "We opened a second shop in Leeds",
           "I've been practising for a recital", "I love hiking!", "the weather is grey"]
SPEAKERS = [("Maya", True), ("Jonas", False), ("SPEAKER_01", False), ("Lena Park", False)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(PHRASES), min_size=1, max_size=3), st.sampled_from(SPEAKERS)),
                max_size=6))
def test_named_speakers_never_make_user_facts_and_always_ground(rows: list) -> None:
    segments = tuple(Segment(f"s{i}", ". ".join(parts) + ".", speaker, is_user)
                     for i, (parts, (speaker, is_user)) in enumerate(rows))
    source = ExtractionSource("u", "c", segments)
    result = RuleExtractor().extract(source)
    for item in ground(source, result, sensitivity=sensitivity):  # raises if a quote does not bind to exactly one segment
        assert not contains_secret(item.candidate.content)
        for ref in item.quote_refs:
            segment = next(s for s in segments if s.id == ref.segment_id)
            assert not contains_secret(ref.quote)
            if not segment.is_user:  # another speaker's words are about that speaker, never the user
                assert item.subject == "third_party" and item.candidate.subject_label == segment.speaker
            if item.subject == "user":
                assert segment.is_user
    for workflow in (*result.action_items, *result.goals):
        assert bind_quote(segments, workflow.quote).is_user


def contents_of(result: ExtractionResult) -> list[str]:
    return [c.content for c in result.memories]


def test_a_named_speakers_answer_with_no_subject_is_not_dumped() -> None:
    # An answer with no first-person clause reads only beside its question: no "Jonas said, asked
    # ...:" dump is made (issue 43); the model path keeps such answers.
    _, result = extract(("Maya", "How many kids do you have now?", True),
                        ("Jonas", "Three. The eldest is at Leeds studying geology.", False))
    assert result.memories == ()


def test_a_named_speakers_first_person_clause_no_rule_knows_is_theirs() -> None:
    source, result = extract(("Maya", "How was the trip?", True),
                             ("Jonas", "Long. Anyway I repair old fishing boats at the harbour on weekends now.",
                              False))
    (fact,) = result.memories
    assert fact.content == "Jonas repairs old fishing boats at the harbour on weekends"
    assert (fact.subject, fact.subject_label, fact.kind) == ("third_party", "Jonas", "fact")
    (grounded,) = ground(source, result, sensitivity=sensitivity)
    assert [ref.segment_id for ref in grounded.quote_refs] == ["s1"]


def test_a_named_speakers_fallback_leaves_out_what_they_say_to_the_owner() -> None:
    _, result = extract(("Jonas", "Your garden looks amazing this year. I keep bees on the allotment since April.",
                         False))
    assert contents_of(result) == ["Jonas keeps bees on the allotment since April"]
    _, result = extract(("Jonas", "Your garden looks amazing, Maya. Can you send me a photo of it?", False))
    assert result.memories == ()

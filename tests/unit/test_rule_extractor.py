"""The rule-based extractor on the sample conversations, plus property tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from core.adapters.rules import sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.adapters.rules.sensitivity import contains_secret
from core.domain.extraction import (
    ExtractionResult,
    ExtractionSource,
    Segment,
    bind_quote,
    ground,
    normalize_text,
    source_from_conversation,
)
from core.domain.records import is_restricted
from strata_dev.samples import load_sample
from tests.support.transcripts import segments_from

REPO = Path(__file__).resolve().parents[2]


def load(name: str) -> dict[str, Any]:
    return load_sample(name)


def run(name: str) -> tuple[ExtractionSource, ExtractionResult]:
    doc = load(name)
    source = source_from_conversation("u-test", doc["id"], doc)
    return source, RuleExtractor().extract(source)


def by_content(result: ExtractionResult, needle: str):
    found = [c for c in result.memories if needle.lower() in c.content.lower()]
    assert found, f"no memory mentions {needle!r}: {[c.content for c in result.memories]}"
    return found[0]


SAMPLES = ["c-bank-call", "c-dinner-plans", "c-doctor", "c-empty-chatter", "c-morning-standup"]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_candidate_grounds_and_quotes_are_exact_substrings(name: str) -> None:
    source, result = run(name)
    grounded = ground(source, result, sensitivity=sensitivity)
    assert len(grounded) == len(result.memories)
    texts = {s.id: s.text for s in source.segments}
    for item in grounded:
        for ref in item.quote_refs:
            assert ref.quote in texts[ref.segment_id]
        assert item.subject == item.candidate.subject  # the extractor never over-claims the user
    for workflow in (*result.action_items, *result.goals):
        assert bind_quote(source.segments, workflow.quote).is_user
    assert result.extractor_id == "rules" and result.extractor_version == "6"


@pytest.mark.parametrize("name", SAMPLES)
def test_no_secret_anywhere(name: str) -> None:
    _, result = run(name)
    texts = [c.content for c in result.memories] + [q for c in result.memories for q in c.quotes]
    texts += [w.description for w in (*result.action_items, *result.goals)]
    texts += [w.quote for w in (*result.action_items, *result.goals)]
    assert not any(contains_secret(t) for t in texts)
    assert not any("tulip" in t.lower() or "2291" in t for t in texts)


def test_small_talk_yields_nothing() -> None:
    _, result = run("c-empty-chatter")
    assert result.memories == () and result.action_items == () and result.goals == ()


def test_bank_call_keeps_the_plan_restricted_and_drops_the_password() -> None:
    _, result = run("c-bank-call")
    plan = by_content(result, "card limit")
    assert "used car" in plan.content
    assert plan.kind == "plan" and plan.subject == "user"
    assert "financial" in plan.sensitivity and is_restricted(plan.sensitivity)
    assert plan.quotes == ("I want to raise my card limit because I'm buying a used car next month",)
    assert all("password" not in c.content.lower() for c in result.memories)


def test_doctor_health_fact_is_restricted_and_goals_are_workflow() -> None:
    _, result = run("c-doctor")
    pressure = by_content(result, "blood pressure")
    assert pressure.subject == "user"
    assert "health" in pressure.sensitivity and is_restricted(pressure.sensitivity)
    assert pressure.quotes == ("The doctor said my blood pressure is a bit high",)
    goals = {g.description for g in result.goals}
    assert any("coffee" in g.lower() and "one" in g.lower() for g in goals)
    assert any("lisbon half marathon" in g.lower() for g in goals)
    assert result.action_items == ()
    assert by_content(result, "half marathon").subject == "user"  # a goal may also be a memory
    assert not any("aiming" in c.content.lower() for c in result.memories)


def test_dinner_plans_keep_tom_as_third_party() -> None:
    source, result = run("c-dinner-plans")
    vegetarian = by_content(result, "vegetarian")
    assert vegetarian.subject == "user" and "stopped eating meat" in vegetarian.content
    allergy = by_content(result, "allergic to peanuts")
    assert allergy.content == "Tom is allergic to peanuts"
    assert (allergy.subject, allergy.subject_label) == ("third_party", "Tom")
    assert "health" in allergy.sensitivity
    nurse = by_content(result, "nurse")
    assert (nurse.subject, nurse.subject_label) == ("third_party", "Tom")
    assert nurse.content.startswith("Tom works as a nurse")
    brother = by_content(result, "brother")
    assert brother.kind == "relationship" and brother.content == "Tom is the user's brother"
    assert brother.subject == "third_party"
    assert not any("weather" in c.content.lower() or "grey" in c.content.lower() for c in result.memories)
    for memory in result.memories:
        if "tom" in normalize_text(memory.content):
            assert memory.subject != "user"
    # the allergy quote is a clause, not the whole segment
    assert all(q != source.segments[3].text for q in allergy.quotes)


def test_morning_standup() -> None:
    _, result = run("c-morning-standup")
    lisbon = by_content(result, "moved to Lisbon in March")
    assert lisbon.subject == "user" and lisbon.quotes == ("I moved to Lisbon in March",)
    climbing = by_content(result, "climbs three times a week")
    assert climbing.subject == "user"
    billing = by_content(result, "billing migration")
    search = by_content(result, "search rewrite")
    assert billing.category == "work" and search.category == "work"
    assert billing.quotes != search.quotes  # one fact per clause of the same segment
    (action,) = result.action_items
    assert action.description == "Send the draft to Marco by Wednesday evening"
    assert action.due == "Wednesday evening"
    assert action.quote == "I need to send the draft to Marco by Wednesday evening"
    assert not any("marco" in c.content.lower() for c in result.memories)  # action items are not memories
    assert not any("design review" in c.content.lower() for c in result.memories)  # not the owner's


def test_other_speakers_are_never_extracted() -> None:
    source = ExtractionSource("u", "c", (
        Segment("a", "I moved to Berlin in May and I love jazz.", "SPEAKER_01", False),
        Segment("b", "Nice.", "SPEAKER_00", True),
    ))
    assert RuleExtractor().extract(source).memories == ()


def test_external_text_is_extracted_from_pseudo_segments() -> None:
    doc = {"external_data": {"text": "Weekly notes.\nI moved to Porto in June. My sister Ana is a dentist."},
           "transcript_segments": [{"id": "s0", "text": "I love steak.", "is_user": True}]}
    source = source_from_conversation("u", "c-int", doc)
    result = RuleExtractor().extract(source)
    grounded = ground(source, result, sensitivity=sensitivity)
    contents = {g.candidate.content for g in grounded}
    assert "User moved to Porto in June" in contents
    assert "Ana is the user's sister" in contents
    assert not any("steak" in c.lower() for c in contents)
    assert all(r.segment_id.startswith("external:") for g in grounded for r in g.quote_refs)


def test_repeated_clause_widens_or_drops_instead_of_failing_grounding() -> None:
    source = ExtractionSource("u", "c", (
        Segment("a", "I love hiking. It's great.", "A", True),
        Segment("b", "I love hiking!", "A", True),
    ))
    result = RuleExtractor().extract(source)
    ground(source, result, sensitivity=sensitivity)  # never raises
    assert [c.quotes for c in result.memories] == [("I love hiking. It's great.",)]


# --------------------------------------------------------------------------- properties
PHRASES = [
    "I moved to Lisbon in March", "I love hiking", "my password is Tulip-2291", "Tom is allergic to peanuts",
    "he's allergic to peanuts", "I need to call Marco by Friday", "I'm training for a marathon",
    "my pin is 4417", "Hey, what's up", "the weather is grey", "I climb three times a week",
    "my brother Tom is a nurse", "I want to buy a car next month", "I'm aiming for one",
    "my api key is sk-abcdefghijklmnop1234", "I stopped eating meat", "Anna works as a pilot",
    "I finished the billing migration", "card 4111 1111 1111 1111", "I'm a vegetarian",
]
segments_strategy = segments_from(PHRASES)


@settings(max_examples=200, deadline=None)
@given(segments_strategy)
def test_rule_output_always_grounds_and_never_holds_a_secret(segments: tuple[Segment, ...]) -> None:
    source = ExtractionSource("u", "c", segments)
    result = RuleExtractor().extract(source)
    grounded = ground(source, result, sensitivity=sensitivity)  # raises if any candidate does not bind uniquely
    for item in grounded:
        assert item.subject == item.candidate.subject
        assert not contains_secret(item.candidate.content)
        assert item.candidate.content.strip()
        for ref in item.quote_refs:
            segment = next(s for s in segments if s.id == ref.segment_id)
            assert ref.quote in segment.text
            assert not contains_secret(ref.quote)
    for workflow in (*result.action_items, *result.goals):
        assert not contains_secret(workflow.quote) and not contains_secret(workflow.description)
        assert bind_quote(segments, workflow.quote).is_user


@settings(max_examples=100, deadline=None)
@given(segments_strategy)
def test_rule_extractor_is_deterministic(segments: tuple[Segment, ...]) -> None:
    source = ExtractionSource("u", "c", segments)
    assert RuleExtractor().extract(source) == RuleExtractor().extract(source)


def _owner_lines(*lines: str) -> list[str]:
    from core.domain.extraction import ExtractionSource, Segment

    source = ExtractionSource(uid="u", conversation_id="c", segments=tuple(
        Segment(id=f"s{i}", text=text, speaker="SPEAKER_0", is_user=True) for i, text in enumerate(lines)))
    return [m.content for m in RuleExtractor().extract(source).memories]


def test_lowercase_i_is_the_owner() -> None:
    # Casual writing spells "I" in lower case; the memory is about "User", never "I".
    assert "User hates running" in _owner_lines("i hate running. genuinely hate it")
    assert "User is an aisle person" in _owner_lines("i'm an aisle person now")


def test_a_pet_named_in_a_request_is_kept() -> None:
    assert "User has a dog named Biscuit" in _owner_lines("remind me to buy food for my dog biscuit")
    assert not any("named" in c for c in _owner_lines("remind me to buy food for my dog tomorrow"))


def test_a_change_told_in_a_turn_keeps_its_first_person_clause() -> None:
    # No dialogue dump (issue 43): the clause that says where the owner is now, written about them.
    contents = _owner_lines("Honestly a mess. the company relocated me, I'm in Vancouver now")
    assert contents == ["User is in Vancouver"]

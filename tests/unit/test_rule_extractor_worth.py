"""The rule extractor keeps only what is worth keeping (issue 43): no dialogue dumps, greetings,
thanks, agreement or passing moods; every memory reads alone; an event of one day is a ``plan``;
someone the speaker has is a relationship; relative dates resolve in the tense the speaker used.

Every sentence here was written for these tests (none comes from a data set)."""

from __future__ import annotations

from datetime import date

import pytest

from core.adapters.rules import sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.adapters.rules.extractor.dates import annotation, tense
from core.domain.extraction import Candidate, ExtractionSource, Segment, ground

DAY = date(2026, 12, 4)  # a Friday


def extract(*turns: tuple[str, str, bool], day: date | None = DAY) -> list[Candidate]:
    segments = tuple(Segment(f"s{i}", text, speaker, is_user) for i, (speaker, text, is_user) in enumerate(turns))
    source = ExtractionSource("u", "c", segments, session_date=day)
    result = RuleExtractor().extract(source)
    ground(source, result, sensitivity=sensitivity)  # every quote binds
    return list(result.memories)


def owner(*lines: str, day: date | None = DAY) -> list[Candidate]:
    return extract(*(("Priya", line, True) for line in lines), day=day)


def contents(memories: list[Candidate]) -> list[str]:
    return [m.content for m in memories]


# --------------------------------------------------------------------------- nothing that does not read alone
@pytest.mark.parametrize("line", [
    "Hi Sam, so good to hear from you!",
    "Thanks so much, that means a lot.",
    "Totally agree, Sam. Balance is everything.",
    "I love it here.",
    "I've had them for ages.",
    "I finally tried that ramen place.",
    "I bought it in Porto.",
    "I go there every Sunday.",
    "I'm working on something big.",
    "My sister got me these for my birthday.",
])
def test_chatter_and_dangling_pointers_make_no_memory(line: str) -> None:
    assert owner(line) == []


def test_no_dialogue_dump_of_another_speaker() -> None:
    memories = extract(("Priya", "What did you do at the weekend?", True),
                       ("Sam", "Oh, nothing much. The usual, you know. Great chat as always!", False))
    assert memories == []
    assert not any(" said" in m.content or "asked" in m.content
                   for m in extract(("Priya", "How was it?", True), ("Sam", "Amazing. Best trip ever.", False)))


def test_a_pointer_in_a_trailing_clause_is_cut_away() -> None:
    (memory,) = owner("I've been learning the cello for two years and it's been hard work.")
    assert memory.content == "User has been learning the cello for two years"
    assert memory.quotes == ("I've been learning the cello for two years",)


def test_a_thing_named_after_this_reads_alone() -> None:
    assert "User is really into this podcast called Deep Field" in contents(
        owner("I'm really into this podcast called Deep Field."))


def test_a_capitalised_first_word_is_no_person() -> None:
    # A sentence's first word is capitalised whatever it is: no "Gardening is ..." fact about "Gardening".
    assert owner("Gardening is a lovely way to unwind.") == []
    # A name the turn refers back to with "he"/"she" is a person.
    assert "Ravi teaches chemistry at the college" in contents(
        owner("Ravi teaches chemistry at the college. He loves it."))


# --------------------------------------------------------------------------- moods and wishes
@pytest.mark.parametrize("line", [
    "I'm feeling hopeful about everything.",
    "I'm so excited for the new season.",
    "I've been super busy lately.",
    "I was sitting in the garden all afternoon.",
    "I'm craving dumplings.",
])
def test_a_passing_mood_is_no_memory(line: str) -> None:
    assert owner(line) == []


def test_a_wish_or_an_offer_is_a_plan_at_most() -> None:
    for memory in owner("I'll bake a carrot cake for the office party.", "I'd love to learn the banjo someday."):
        assert memory.kind == "plan", memory


# --------------------------------------------------------------------------- one-day events
def test_an_event_of_one_day_is_a_plan() -> None:
    (memory,) = owner("Yesterday I went bowling with the team.")
    assert memory.kind == "plan"


def test_a_life_change_told_with_its_day_is_a_fact() -> None:
    (memory,) = owner("I started a new job at the council last week.")
    assert memory.kind == "fact"
    assert memory.content.startswith("User started a new job at the council last week")


# --------------------------------------------------------------------------- who and what the speaker has
def test_someone_named_in_passing_is_a_relationship() -> None:
    memories = owner("Honestly the best part was meeting my new colleague Farah at the induction.")
    assert "Farah is the user's colleague" in contents(memories)
    assert next(m for m in memories if m.content == "Farah is the user's colleague").kind == "relationship"


def test_what_the_speaker_has_is_a_relationship() -> None:
    assert {"User has a wife", "User has three cats"} <= set(contents(
        owner("Trying to keep my three cats off the sofa while my wife naps is a full-time job.")))


def test_another_speakers_relation_is_theirs() -> None:
    memories = extract(("Priya", "How's the family?", True),
                       ("Sam", "Good! My brother Idris just visited from Cairo.", False))
    relation = next(m for m in memories if m.kind == "relationship")
    assert relation.content == "Sam has a brother named Idris"
    assert (relation.subject, relation.subject_label) == ("third_party", "Sam")


# --------------------------------------------------------------------------- dates in the speaker's tense
def test_a_past_month_is_the_one_before_the_conversation() -> None:
    (memory,) = owner("I left the bakery in June.")
    assert memory.content == "User left the bakery in June (in June: June 2026)"


def test_a_future_month_is_the_one_to_come() -> None:
    assert annotation("We're moving to Bristol in June", DAY) == " (in June: June 2027)"
    assert annotation("I'll start the course in March", DAY) == " (in March: March 2027)"


def test_a_day_of_the_month_follows_the_tense() -> None:
    assert annotation("I started on the 21st", DAY) == " (on the 21st: 21 November 2026)"
    assert annotation("I'm starting on the 21st", DAY) == " (on the 21st: 21 December 2026)"


def test_a_weekday_follows_the_tense() -> None:
    assert annotation("I flew to Oslo on Tuesday", DAY) == " (on Tuesday: 1 December 2026)"
    assert annotation("I'm flying to Oslo on Tuesday", DAY) == " (on Tuesday: 8 December 2026)"


def test_the_tense_of_a_sentence() -> None:
    assert tense("I moved out in May") == -1
    assert tense("we'll move out in May") == 1
    assert tense("May is lovely") == 0


def test_a_habit_told_with_try_is_no_plan() -> None:
    (memory,) = owner("I usually try to swim at the lido twice a week.")
    assert memory.kind == "fact"


def test_another_speakers_pet_is_theirs() -> None:
    memories = extract(("Priya", "How are the animals?", True),
                       ("Sam", "Great, my second tortoise Dumpling finally woke up.", False))
    pet = next(m for m in memories if m.kind == "relationship")
    assert (pet.content, pet.subject, pet.subject_label) == ("Sam has a tortoise named Dumpling", "third_party", "Sam")


def test_this_before_a_time_is_no_pointer() -> None:
    assert contents(owner("I started learning the oboe this winter.", day=None)) == [
        "User started learning the oboe this winter"]


def test_an_activity_without_its_object_is_no_memory() -> None:
    assert owner("I've been practising for six weeks now.") == []
    assert contents(owner("I've been practising karate for six weeks now.", day=None)) == [
        "User has been practising karate for six weeks"]

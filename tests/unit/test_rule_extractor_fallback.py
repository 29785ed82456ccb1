"""The rule extractor's fallback for first-person statements that no specific rule knows, and what a
relation statement says about the person beyond the relation.

A declarative first-person clause with substance becomes a fact about its speaker; questions,
reactions and mental verbs ("I know", "I can't wait"), clauses addressed to the other person and
action items do not.
"""

from __future__ import annotations

from core.adapters.rules import sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.domain.extraction import ExtractionSource, Segment, ground


def contents(*turns: tuple[str, str, bool]) -> list[str]:
    segments = tuple(Segment(f"s{i}", text, speaker, is_user) for i, (speaker, text, is_user) in enumerate(turns))
    source = ExtractionSource("u", "c", segments)
    result = RuleExtractor().extract(source)
    ground(source, result, sensitivity=sensitivity)  # every fallback quote binds to exactly one segment
    return [c.content for c in result.memories]


def test_an_unknown_first_person_statement_becomes_a_fact() -> None:
    assert contents(("Ana", "I'm restoring an old Vespa in my uncle's garage.", True)) == [
        "User is restoring an old Vespa in their uncle's garage"]
    assert contents(("Ana", "Busy week: I was rehearsing with the choir every night.", True)) == [
        "User was rehearsing with the choir every night"]


def test_reactions_questions_and_asides_are_not_facts() -> None:
    for text in ("I know, I know.", "I think so, honestly.", "I can't wait to see it!",
                 "I'm so glad it worked out.", "Did I tell you about the garage?",
                 "I'll send you the photos of the garage tomorrow.", "I guess we'll see how it goes."):
        assert contents(("Ana", text, True)) == [], text


def test_a_named_other_speaker_gets_the_fallback_too() -> None:
    facts = contents(("Ana", "How was the weekend?", True),
                     ("Ben", "I've started volunteering at the city farm on Saturdays.", False))
    assert facts == ["Ben has started volunteering at the city farm on Saturdays"]


def test_a_relation_statement_keeps_what_it_says_about_the_person() -> None:
    facts = contents(("Ana", "My cousin Meera lives in Marseille, which is two hours away by train.", True))
    assert facts == ["Meera is the user's cousin", "Meera lives in Marseille"]
    assert contents(("Ana", "My brother Tom.", True)) == ["Tom is the user's brother"]


def test_a_routine_or_a_change_told_in_passing_is_kept_only_when_it_reads_alone() -> None:
    # A routine or a change with the owner as its subject is kept, written about them ...
    assert contents(("Ana", "haha yeah, i restore vespas in my uncle's garage most weekends", True)) == [
        "User restores vespas in their uncle's garage most weekends"]
    # ... but someone else's routine is not the owner's, and a turn with no subject or a dangling
    # "it" is no memory: a dialogue dump ("User said: ...") never reads alone (issue 43).
    assert contents(("Ana", "He naps on the rug every afternoon.", True)) == []
    assert contents(("Ana", "yeah every friday, the kids expect it", True)) == []
    assert contents(("Ana", "no more sugar!", True)) == []


def test_a_part_of_life_said_short_is_kept() -> None:
    # Who, where, what one eats, however few the words: the fact a later change ends.
    for text in ("i'm pescatarian", "im in leeds, headingley", "engaged to sol! wedding's in june",
                 "single and loving it"):
        assert contents(("Ana", text, True)) != [], text
    # A mood or a moment is no part of life.
    for text in ("i'm tired", "im fine", "we're in the car"):
        assert contents(("Ana", text, True)) == [], text

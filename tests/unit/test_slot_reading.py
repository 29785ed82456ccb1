"""The rules path reads a slot only from a plain first-person statement (core/adapters/rules/slot_words.py);
a plan, a question, a trip, a negation or someone else's news reads none. Sentences written here."""

from __future__ import annotations

import pytest

from core.adapters.rules.slot_words import read_slot


@pytest.mark.parametrize(("text", "attribute", "value", "ended"), [
    ("I live in Porto with two cats.", "residence", "Porto", False),
    ("We moved to Tallinn in the spring.", "residence", "Tallinn", False),
    ("I work at Brightwell Labs as a tester.", "employer", "Brightwell Labs", False),
    ("I quit Brightwell Labs in May.", "employer", "Brightwell Labs", True),
    ("I work as a staff nurse.", "job_title", "staff nurse", False),
    ("I sold my Skoda Octavia.", "vehicle", "Skoda Octavia", True),
    ("I picked up a used Honda Jazz.", "vehicle", "Honda Jazz", False),
    ("Priya and I split up over the summer.", "partner", "Priya", True),
    ("I'm a junior at Carleton College.", "school", "Carleton College", False),
    ("I gave up on being vegan.", "diet", "vegan", True),
    ("My cat Biscuit sleeps all day.", "pet", "Biscuit", False),
])
def test_a_plain_statement_reads_its_slot(text: str, attribute: str, value: str, ended: bool) -> None:
    slot = read_slot(text)
    assert slot is not None and (slot.attribute, slot.value, slot.ended) == (attribute, value, ended)


@pytest.mark.parametrize("text", [
    "I might move to Tallinn one day.",
    "Do you think I should live in Porto?",
    "I'm in Tallinn for the week.",
    "My brother moved to Tallinn.",
    "I would never sell my Skoda.",
    "Back when I lived in Porto the rent was low.",
    "I'm thinking about going vegan.",
    "If I quit Brightwell Labs I'd travel.",
])
def test_anything_but_a_plain_statement_reads_nothing(text: str) -> None:
    assert read_slot(text) is None

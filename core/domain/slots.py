"""Facts that hold one value at a time, and the one rule by which a later statement ends one.

A memory may state the value of one *attribute* of one *subject*: where the user lives, who employs
them, whom they are married to (its :class:`Slot`). The attributes form a small declared
vocabulary (:data:`VOCABULARY`); each is single-valued (a new value replaces the old) or
multi-valued (a new value stands beside the old; only a statement that a value ended ends it). The
value ``none`` says the subject has none (no car, no pets): any value conflicts with it.
Whoever reads the slot -- the model extractor, or the rules adapter from the owner's own words --
only *proposes* it; this module alone decides what ends what, for every router:

:func:`relation` says a later statement ends an earlier fact only when

1. both carry a slot of the same declared attribute,
2. both are about the same, firmly known subject (the user; or the same named person -- an
   ``unknown`` subject never ends and is never ended),
3. they conflict: two different values of a single-valued attribute, one states that the very
   value the other holds has ended ("sold the Volvo" against "drives a Volvo"), or one says the
   subject has none ("has no pets" against "adopted a dog"),
4. and one is strictly later in *conversation* time (``valid_from``). The order in which the
   statements were processed never matters: an older conversation imported later becomes history
   ended by the current fact, never the reverse. Same day: nothing is decided (review asks).

Anything outside this rule ends nothing: consolidation promotes the statement beside the fact, or
asks the owner in review naming the fact it would end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator


@dataclass(frozen=True)
class Attribute:
    name: str
    single: bool
    about: str  # what a value of it is, as an extractor prompt says it


VOCABULARY: dict[str, Attribute] = {a.name: a for a in (
    Attribute("residence", True, "the city, town or area where the person lives"),
    Attribute("employer", True, "the organisation the person works for (or: self-employed, unemployed, retired)"),
    Attribute("job_title", True, "the person's job, role or profession"),
    Attribute("partner", True, "the person's spouse or romantic partner (their name; none when single)"),
    Attribute("vehicle", True, "the car or other vehicle the person drives"),
    Attribute("phone", True, "the phone the person uses"),
    Attribute("diet", True, "the person's diet (vegetarian, vegan, ...)"),
    Attribute("school", True, "the school, college or programme the person is studying at"),
    Attribute("field_of_study", True, "the subject or major the person studies"),
    Attribute("pet", False, "a pet the person has"),
    Attribute("sport", False, "a sport or regular physical activity the person practises"),
    Attribute("habit", False, "a lasting habit such as smoking or drinking"),
)}
NONE = "none"  # the value of "has none": no car, no pets, no partner
ATTRIBUTES: tuple[str, ...] = tuple(VOCABULARY)


class Slot(BaseModel):
    """The attribute a memory states and its value; ``ended``: the statement says that value no
    longer holds ("sold the Volvo", "we divorced")."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    attribute: str
    value: str
    ended: bool = False

    @field_validator("attribute")
    @classmethod
    def _declared(cls, name: str) -> str:
        if name not in VOCABULARY:
            raise ValueError(f"attribute {name!r} is not in the declared vocabulary")
        return name

    @field_validator("value")
    @classmethod
    def _named(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value or len(value) > 120:
            raise ValueError("a slot's value is 1 to 120 characters")
        return value


def subject_key(subject: str, label: str | None) -> str | None:
    """Whom a fact is about, as slots compare it: the user, a named person, or None (not firmly known)."""
    if subject in ("user", "legacy_assumed"):
        return "user"
    if subject == "third_party" and label and label.strip():
        return "person:" + " ".join(label.split()).casefold()
    return None


def slot_key(slot: Slot | None, subject: str, label: str | None) -> str | None:
    """The stored key the router's neighbour query uses: subject and attribute (never the value)."""
    who = subject_key(subject, label)
    return f"{who}|{slot.attribute}" if slot is not None and who is not None else None


_NOISE = frozenset({"the", "a", "an", "my", "our", "his", "her", "their", "new", "old", "city", "of"})
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


def _words(value: str) -> frozenset[str]:
    return frozenset(w for w in _WORDS.findall(value.casefold()) if w not in _NOISE)


def same_value(a: str, b: str) -> bool:
    """One value names the other ("Acme" and "Acme Corp", "Seattle" and "Seattle, WA")."""
    left, right = _words(a), _words(b)
    if not left or not right:
        return a.strip().casefold() == b.strip().casefold()
    return left <= right or right <= left


def conflict(a: Slot, b: Slot) -> bool:
    """Whether two slots of one subject cannot both hold: different values of a single-valued
    attribute, one ending the very value the other holds, or "none" against a value."""
    if a.attribute != b.attribute or a.attribute not in VOCABULARY:
        return False
    if a.ended != b.ended:
        return same_value(a.value, b.value)
    if a.ended:
        return False
    if (a.value.casefold() == NONE) != (b.value.casefold() == NONE):
        return True
    return VOCABULARY[a.attribute].single and not same_value(a.value, b.value)


@dataclass(frozen=True)
class Statement:
    """What the rule needs of one memory: its slot, its subject and when it was said."""

    slot: Slot | None
    subject: str | None  # subject_key(...)
    said: datetime | None


Relation = Literal["ends", "ended_by"]


def relation(new: Statement, old: Statement) -> Relation | None:
    """``ends`` when ``new`` ends ``old``, ``ended_by`` when ``old`` ends ``new`` (``new`` is the
    earlier statement), None when the rule ends nothing (see the module docstring)."""
    if new.slot is None or old.slot is None or new.subject is None or new.subject != old.subject:
        return None
    if not conflict(new.slot, old.slot) or new.said is None or old.said is None:
        return None
    if new.said > old.said:
        return "ends"
    if new.said < old.said:
        return "ended_by"
    return None


def undecided(new: Statement, old: Statement) -> bool:
    """Two conflicting statements of one subject said at the same moment: only the owner can tell
    which stands."""
    return (new.slot is not None and old.slot is not None and new.subject is not None
            and new.subject == old.subject and conflict(new.slot, old.slot) and new.said == old.said)

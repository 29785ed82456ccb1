"""Consolidation route proposals: what a router sees and what it may answer.

A router only *proposes*. The server hands it :class:`RouteCandidate` s addressed by opaque refs
("i0", "n3") and validates whatever comes back (exactly one route per selected item, known refs,
legal targets); a router never invents ids. Whatever a router proposes to end passes the one
server rule of :mod:`core.domain.slots` first. The routers themselves are adapters: the rules router
(:mod:`core.adapters.rules`) and the model router (:mod:`core.adapters.llm`).

What stays here is the model's own notion of one fact: :func:`fact_key` (the same statement twice)
and :func:`pass_survivors` (one Long-term memory per fact in a pass). How alike two statements read
is the rules' (:mod:`core.adapters.rules.similarity`, ``Ports.similarity``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .slots import Slot

Route = Literal["promote", "archive", "review", "reject"]
ROUTES: tuple[str, ...] = ("promote", "archive", "review", "reject")
LONG_TERM = "long_term"
DUPLICATE_THRESHOLD = 0.8


@dataclass(frozen=True)
class Neighbour:
    """A memory near a candidate, found by the server; ``restricted`` ones never go to an LLM.
    ``slot`` and ``said`` (its valid time's start) are what the ending rule reads."""

    ref: str
    content: str
    layer: str
    subject_label: str | None = None
    restricted: bool = False
    subject: str = "user"  # its subject attribution (user | third_party | unknown | legacy_assumed)
    slot: Slot | None = None
    said: datetime | None = None


@dataclass(frozen=True)
class RouteCandidate:
    ref: str
    content: str
    subject: str
    subject_label: str | None
    category: str
    kind: str
    source_ids: tuple[str, ...]
    independent_sources: int
    manually_added: bool
    expired: bool
    restricted: bool
    neighbours: tuple[Neighbour, ...] = ()
    slot: Slot | None = None
    said: datetime | None = None  # when it was said: its conversation's day


@dataclass(frozen=True)
class RouteProposal:
    item_ref: str
    route: Route
    reason: str
    duplicate_of: str | None = None
    supersedes: tuple[str, ...] = ()


# The LLM router's strict JSON schema (OpenAI "json_schema" response format).
ROUTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["proposals"],
    "properties": {
        "proposals": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["item_ref", "route", "reason", "duplicate_of", "supersedes"],
                "properties": {
                    "item_ref": {"type": "string"},
                    "route": {"type": "string", "enum": list(ROUTES)},
                    "reason": {"type": "string"},
                    "duplicate_of": {"type": ["string", "null"]},
                    "supersedes": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}


# ------------------------------------------------------------------ one logical memory per fact
MERGING_ROUTES = ("promote", "archive")  # the routes whose duplicates become aliases of a survivor


def changes_subject(subject: str, label: str | None, other_subject: str, other_label: str | None) -> bool:
    """Whether folding a statement about (``subject``, ``label``) into one about (``other_subject``,
    ``other_label``) — a merge or a supersession — would change whom it is about: the user (a
    historical row's assumed user included) against a third party, or two differently named third
    parties. A subject that is not firmly known (``unknown``, an unnamed third party against a named
    one) changes nothing known."""
    def kind(value: str) -> str:
        return "user" if value in ("user", "legacy_assumed") else value

    mine, theirs = kind(subject), kind(other_subject)
    if "unknown" in (mine, theirs) or mine not in ("user", "third_party") or theirs not in ("user", "third_party"):
        return False
    if mine != theirs:
        return True
    if mine == "third_party" and label and other_label:
        return " ".join(label.split()).casefold() != " ".join(other_label.split()).casefold()
    return False


def fact_key(content: str, subject: str, subject_label: str | None) -> str:
    """Two items state the same fact when their statement is equal after case-folding and collapsing
    whitespace, about the same subject (the key is only ever compared, never stored)."""
    return "\x1f".join((" ".join((content or "").split()).casefold(), subject or "",
                        " ".join((subject_label or "").split()).casefold()))


def pass_survivors(entries: list[tuple[str, str, str]], known: dict[str, str] | None = None) -> dict[str, str]:
    """Which items of one consolidation pass merge into which: ``entries`` are ``(memory_id,
    fact_key, route)`` in settle order, ``known`` maps a fact key to a memory promoted earlier in the
    same pass. Per fact key the survivor is the known one, else the first promoted entry; every other
    ``promote`` / ``archive`` entry of that key maps to it (``review`` / ``reject`` stay apart: they
    are not admitted). Survivors map to nothing, so exactly one Long-term memory per fact remains."""
    survivors = dict(known or {})
    for memory_id, key, route in entries:
        if route == "promote" and key not in survivors:
            survivors[key] = memory_id
    return {memory_id: survivors[key] for memory_id, key, route in entries
            if route in MERGING_ROUTES and key in survivors and survivors[key] != memory_id}


__all__ = [
    "DUPLICATE_THRESHOLD", "LONG_TERM", "ROUTES", "ROUTE_SCHEMA", "Neighbour", "Route", "RouteCandidate",
    "RouteProposal", "changes_subject", "fact_key", "pass_survivors",
]

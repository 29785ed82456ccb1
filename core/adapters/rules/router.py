"""The rules router (id ``rules``): deterministic consolidation routing without a model.

It proposes; the server validates and applies the ending rule of :mod:`core.domain.slots` to
whatever it proposes. First match wins:

1. empty or unreadable content, or content disclosing a secret          -> ``reject``
2. a near-duplicate of a Long-term neighbour about the same subject      -> ``archive`` (``duplicate_of``)
3. a value of the same attribute as a Long-term neighbour's said the same day, or a like of the same
   thing turned into a dislike (or back)                               -> ``review`` naming it
4. corroborated by two independent sources, or added by the user's hand -> ``promote``
5. a durable kind (fact, preference, relationship) about the user or a named person -> ``promote``,
   ending each neighbour the ending rule lets it end (same subject, same declared attribute, a
   conflicting value, said later)
6. anything else (a plan, an unattributed statement): not durable      -> ``archive`` once its
   deadline has passed, ``review`` before (the owner decides)
"""

from __future__ import annotations

import re

from core.adapters.rules.sensitivity import contains_secret
from core.adapters.rules.similarity import content_words, similarity
from core.domain.routing import (
    DUPLICATE_THRESHOLD,
    LONG_TERM,
    Neighbour,
    RouteCandidate,
    RouteProposal,
    changes_subject,
)
from core.domain.slots import Statement, relation, subject_key, undecided

DURABLE_KINDS = frozenset({"fact", "preference", "relationship"})


class RuleRouter:
    """Deterministic consolidation routing (see the module docstring)."""

    router_id = "rules"
    router_version = "2"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [self.route_one(candidate) for candidate in candidates]

    def route_one(self, c: RouteCandidate) -> RouteProposal:
        content = (c.content or "").strip()
        if _unreadable(content):
            return RouteProposal(c.ref, "reject", "empty or unreadable content")
        if contains_secret(content):
            return RouteProposal(c.ref, "reject", "content discloses a secret")
        long_term = [n for n in c.neighbours if n.layer == LONG_TERM and (n.content or "").strip()]
        return _duplicate(c, content, long_term) or _asked(c, long_term) or _settled(c, long_term)


def _asked(c: RouteCandidate, long_term: list[Neighbour]) -> RouteProposal | None:
    """What only the owner can tell: two values said the same day, or a taste turned around."""
    unsure = tuple(n.ref for n in long_term if undecided(_statement(c), _statement(n)))
    if unsure:
        return RouteProposal(c.ref, "review", "two values of one attribute said the same day; the owner decides",
                             supersedes=unsure)
    turned = tuple(n.ref for n in long_term if _taste_turned(c, n))
    if turned:
        return RouteProposal(c.ref, "review", "a taste turned around; the owner decides", supersedes=turned)
    return None


def _settled(c: RouteCandidate, long_term: list[Neighbour]) -> RouteProposal:
    """Promote what lasts, ending what the rule lets it end; review or archive the rest."""
    ends = rule_endings(c, long_term)
    if c.independent_sources >= 2:
        return RouteProposal(c.ref, "promote", f"corroborated by {c.independent_sources} independent sources",
                             supersedes=ends)
    if c.manually_added:
        return RouteProposal(c.ref, "promote", "explicitly added by the user", supersedes=ends)
    if c.kind in DURABLE_KINDS and subject_key(c.subject, c.subject_label) is not None:
        reason = f"durable {c.kind} about {c.subject_label or c.subject}"
        if ends:
            reason += "; a later statement of the same attribute ends the earlier fact"
        return RouteProposal(c.ref, "promote", reason, supersedes=ends)
    if c.expired:
        return RouteProposal(c.ref, "archive", "not a durable fact, and its deadline passed")
    return RouteProposal(c.ref, "review", "not clearly durable; the owner decides before its deadline")


def _unreadable(content: str) -> bool:
    letters = sum(ch.isalpha() for ch in content)
    return len(content) < 3 or letters < 3 or letters < len(content) * 0.4 or not content_words(content)


def _duplicate(c: RouteCandidate, content: str, long_term: list[Neighbour]) -> RouteProposal | None:
    """A near-duplicate of a Long-term memory about the same subject is archived into it."""
    best: tuple[float, Neighbour] | None = None
    for neighbour in long_term:
        if changes_subject(c.subject, c.subject_label, neighbour.subject, neighbour.subject_label):
            continue
        score = similarity(content, neighbour.content)
        if score >= DUPLICATE_THRESHOLD and (best is None or score > best[0]):
            best = (score, neighbour)
    if best is None:
        return None
    return RouteProposal(c.ref, "archive", f"near-duplicate of Long-term memory ({best[0]:.2f})",
                         duplicate_of=best[1].ref)


_TASTE = re.compile(r"^\s*(?:user|[\w'’-]+)\s+(?:really\s+|still\s+|now\s+)?(?P<verb>loves?|likes?|enjoys?|adores?|"
                    r"hates?|dislikes?|can['’]t\s+stand|doesn['’]t\s+like|does\s+not\s+like)\s+(?P<what>.+)$",
                    re.IGNORECASE)


def _taste(content: str) -> tuple[bool, frozenset[str]] | None:
    """A plain statement of liking or disliking something: (liked, what) or None."""
    match = _TASTE.match(content or "")
    if match is None:
        return None
    return match.group("verb").casefold().startswith(("lov", "lik", "enj", "ado")), content_words(match.group("what"))


def _taste_turned(c: RouteCandidate, n: Neighbour) -> bool:
    """The same subject's like of one thing turned into a dislike, or back: a question for the owner,
    never an ending (tastes are not declared attributes)."""
    mine, theirs = _taste(c.content), _taste(n.content)
    return (mine is not None and theirs is not None and bool(mine[1]) and mine[1] == theirs[1]
            and mine[0] != theirs[0] and not changes_subject(c.subject, c.subject_label, n.subject, n.subject_label))


def _statement(x: RouteCandidate | Neighbour) -> Statement:
    return Statement(x.slot, subject_key(x.subject, x.subject_label), x.said)


def _ends(c: RouteCandidate, n: Neighbour) -> bool:
    return relation(_statement(c), _statement(n)) == "ends"


def rule_endings(c: RouteCandidate, neighbours: list[Neighbour]) -> tuple[str, ...]:
    """The Long-term neighbours the ending rule alone lets ``c`` end (for a router that cannot show
    some neighbours to its model: the restricted ones)."""
    return tuple(n.ref for n in neighbours if n.layer == LONG_TERM and _ends(c, n))

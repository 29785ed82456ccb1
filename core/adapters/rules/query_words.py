"""The rules reading of a question: the words a keyword index should not match on, and the owner's
name put in the owner's voice (what services reach through ``Ports.keyword_terms`` and
``Ports.owner_voice``).

A question to an assistant is worded as a question ("What did I say about the trip to Lisbon?"):
its function words, question words and verbs of reporting ("say", "mention", "tell", "remember")
match nearly every memory and would only add noise to an any-term match. Memories speak of their
owner as "User", so that word is dropped too.

Memories never name their owner ("User adopted a dog named Max"). A question may ("What did
Caroline adopt?"): the name matches none of the owner's memories by keyword and pulls the question's
embedding towards facts about other people. :func:`owner_voice` replaces the owner's display name
(learnt from their profile) by the first person, "Caroline's" by "my" and "Caroline" by "I", as the
owner would ask their own assistant (measured on the development split: docs/benchmarks.md). Only
the owner's name is ever replaced, never a third party's.
"""

from __future__ import annotations

import re

_WORDS = """
a about after again all am an and any are as at be been before being both but by can could did do does doing
during each few for from had has have having he her here hers him his how i if in into is it its just me more
most my no nor not of off on once only or other our out over own same she should so some such than that the
their them then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your user users's
i'm i've i'd i'll im ive also ever anything something someone somebody stuff thing things kind sort type
say says said saying mention mentioned mentions mentioning tell tells told talk talked talking talks remember
remembered recall recalled know knew think thought name named again currently recently exactly actually
yes anyone everyone whose t s d ll ve m re didn doesn don isn wasn aren weren haven hasn
"""

STOPWORDS = frozenset(_WORDS.split())
_WORD = re.compile(r"\w+")


def keyword_terms(query: str) -> str:
    """The content words of a question (what a keyword index can match); the query itself if none.
    The index matches any of them, weighted by how rare each is (see the keyword index)."""
    words = [w for w in _WORD.findall(query) if w.casefold() not in STOPWORDS]
    return " ".join(words) or query


def owner_voice(query: str, name: str | None) -> str:
    """The query with the owner's name (the whole display name, then its first word) in the first
    person; unchanged when there is no name."""
    parts = (name or "").split()
    if not parts:
        return query
    for form in [" ".join(parts)] + ([parts[0]] if len(parts) > 1 else []):
        escaped = re.escape(form)
        query = re.sub(rf"\b{escaped}['’]s?(?=\W|$)", "my", query)
        query = re.sub(rf"\b{escaped}\b", "I", query)
    return query

"""A question that names the owner, rewritten in the owner's voice.

Memories speak of their owner as "User" ("User adopted a dog named Max"), never by name. A question
to an assistant may name the owner ("What did Caroline adopt?"): the name matches none of the
owner's memories by keyword and pulls the question's embedding towards facts about other people.
:func:`owner_voice` replaces the owner's display name (learnt from their profile) by the first
person, "Caroline's" by "my" and "Caroline" by "I", as the owner would ask their own assistant
(measured on the development split: docs/benchmarks.md). Only the owner's name is ever replaced,
never a third party's.
"""

from __future__ import annotations

import re


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

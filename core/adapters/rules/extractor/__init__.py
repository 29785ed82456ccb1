"""The deterministic, rule-based extractor (the default; id ``rules``, version ``1``).

It reads the owner's segments (every pseudo-segment of integration text), splits them into clauses
and keeps the clauses that state something durable in the first person -- facts, preferences,
relationships, plans -- or a durable fact about a named other person. A segment of another speaker
is read only when the transcript names that speaker ("Jonas", not a diarization label such as
``SPEAKER_01``): what they say about themselves in the first person is a fact about them
(``third_party``, ``subject_label`` their name), never the user's; their action items and goals are
not the owner's and are skipped, and so is any clause of theirs that mentions "you". Greetings,
weather and small talk match no rule and are skipped. Every draft then passes :mod:`.worth`: a
memory that does not read alone (a dangling "it", "them", "there", "this"), a mood or a feeling is
not made, and an event of one day or a wish is a ``plan`` (consolidation archives it); a turn no
rule knows keeps only its clauses with the speaker as subject, never a "said: ..." dump (issue 43). Action items ("I need to ...") and goals
("I'm aiming for ...", "I'm training for ...") become workflow candidates, never memories.

Durable self-disclosure it recognises: states and roles ("I'm a nurse", "I'm leading a project"),
habits ("I take classes twice a week", "I usually cook ...", "Every Monday I drive ..."), experiences
("I went hiking ...", "I got a grant ...", "We went camping ...", "Lena and I visited ..."),
possessions and family ("my contract runs until ...", "my parents live in ..."), preferences,
durations ("I've been vegetarian for eight years") and plans ("I'm planning to ...", "I'd like to
..."). A short answer to a question about the owner ("Are you still vegetarian?" / "Yes, for eight
years") is rewritten with the question's predicate but quotes only the owner's answer. A habit of a
named person or pet ("He sleeps on my keyboard whenever ...") stays theirs.

Content convention: one short sentence written about its subject, without a final period --
"User stopped eating meat about two years ago", "Tom is allergic to peanuts". A fact about another
person keeps that person as the subject (``third_party`` with ``subject_label`` the name); it is
never rewritten as the user's. Each quote is the exact clause (a substring of its segment, not the
whole segment when it carries several facts); a clause that discloses a secret is dropped whole.

Every emitted candidate has been bound against the source (:func:`bind_quote`): a quote that is
ambiguous is widened to its sentence and then its segment; if it still does not bind to exactly one
segment the candidate is not emitted, so :func:`ground` never fails on this extractor's output.
"""

from .extractor import RuleExtractor

__all__ = ["RuleExtractor"]

"""The words of a question that a keyword index should not match on.

A question to an assistant is worded as a question ("What did I say about the trip to Lisbon?"):
its function words, question words and verbs of reporting ("say", "mention", "tell", "remember")
match nearly every memory and would only add noise to an any-term match. Memories speak of their
owner as "User", so that word is dropped too.
"""

from __future__ import annotations

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

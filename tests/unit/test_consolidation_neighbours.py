"""The neighbours consolidation shows the router beside a candidate: the eight Long-term memories
most similar to it (similarity above zero, ties by id); the facts sharing its slot are added by
the pass from their own query. Indexing the pool by word must choose exactly what scoring every
memory chooses."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from core.adapters.rules.similarity import content_words, similarity
from core.services.consolidation import NEIGHBOURS, _Pool

WORDS = ["volvo", "sold", "drives", "tram", "job", "quit", "lives", "leeds", "moved", "girlfriend", "maya",
         "coffee", "now", "every", "morning", "the", "a", "bakery", "works", "at", "new", "flat", "in"]


def _every_memory(item: SimpleNamespace, pool: list[SimpleNamespace]) -> list[str]:
    scored = sorted(((similarity(item.content, o.content), o.id, o) for o in pool if o.id != item.id),
                    key=lambda t: (-t[0], t[1]))
    return [o.id for score, _, o in scored[:NEIGHBOURS] if score > 0]


sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(lambda ws: "User " + " ".join(ws))


@settings(max_examples=200, deadline=None)
@given(pool=st.lists(sentence, max_size=30), candidate=sentence)
def test_the_word_index_chooses_what_scoring_every_memory_chooses(pool: list[str], candidate: str) -> None:
    memories = [SimpleNamespace(id=f"m{i:02d}", content=text) for i, text in enumerate(pool)]
    item = SimpleNamespace(id="c", content=candidate)
    words = SimpleNamespace(content_words=content_words, similarity=similarity)  # what Ports hands the pool
    assert [o.id for o in _Pool(memories, words).nearest(item)] == _every_memory(item, memories)

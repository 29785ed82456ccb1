"""The rules notion of two statements saying the same thing: the Jaccard overlap of their content
words (what services reach through ``Ports.content_words`` and ``Ports.similarity``; the rules router
and extractor import it). The stop words are English: they live here, never in the domain.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(re.findall(r"\S+", (
    "a an the and or but of to in on at for with is are was were be been being it its that this "
    "user user's users they their them he she his her has have had does do did just about very so"
)))


@lru_cache(maxsize=1 << 15)
def _tokens(text: str) -> frozenset[str]:
    words = _WORD.findall((text or "").casefold().replace("'s", ""))
    return frozenset(w[:-1] if len(w) > 4 and w.endswith("s") else w for w in words if w not in _STOP)


def content_words(text: str) -> frozenset[str]:
    """The words :func:`similarity` compares (stop words out, crude plural folding)."""
    return _tokens(text)


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of content words (crude plural folding); 1.0 for the same statement."""
    left, right = _tokens(a), _tokens(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


__all__ = ["content_words", "similarity"]

"""Okapi BM25 over short texts: the raw-turn baseline of the recall benchmark."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+")
# Question words carry no evidence; everything else counts (no stemming: a plain, honest baseline).
_STOP = ("a an and are as at be by did do does for from had has have he her his how i in is it its me my of on "
         "or our she so that the their them they this to was we were what when where which who whom why will "
         "with you your")
STOPWORDS = frozenset(_STOP.split(" "))


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall((text or "").casefold()) if t not in STOPWORDS]


class BM25:
    """Scores documents (token lists) for a query; ``k1``/``b`` are the usual Okapi constants."""

    def __init__(self, documents: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.docs = [Counter(tokenize(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.docs]
        self.avg_length = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.docs:
            frequency.update(counts.keys())
        total = len(self.docs)
        # The "plus one" form keeps every idf positive, even for terms in most documents.
        self.idf = {term: math.log(1.0 + (total - n + 0.5) / (n + 0.5)) for term, n in frequency.items()}

    def score(self, query: str, index: int) -> float:
        counts = self.docs[index]
        length = self.lengths[index]
        norm = self.k1 * (1.0 - self.b + self.b * (length / self.avg_length if self.avg_length else 0.0))
        total = 0.0
        for term in set(tokenize(query)):
            tf = counts.get(term, 0)
            if tf:
                total += self.idf[term] * tf * (self.k1 + 1.0) / (tf + norm)
        return total

    def rank(self, query: str, limit: int | None = None) -> list[int]:
        """Document indexes by descending score (ties by index); documents scoring 0 are left out."""
        scored = [(self.score(query, i), i) for i in range(len(self.docs))]
        ranked = [i for s, i in sorted(scored, key=lambda t: (-t[0], t[1])) if s > 0]
        return ranked[:limit] if limit is not None else ranked

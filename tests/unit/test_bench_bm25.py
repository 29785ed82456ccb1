"""The raw-turn BM25 baseline of the recall benchmark."""

import math

from strata_dev.bench.bm25 import BM25, tokenize


def test_tokenize_folds_case_and_drops_question_words():
    assert tokenize("What is Maya's JOB?") == ["maya", "s", "job"]


def test_rank_prefers_rare_matching_terms_and_omits_non_matches():
    docs = ["I adopted a greyhound called Pico", "I love swimming in the ocean", "the ocean was cold today",
            "we talked about the weather"]
    bm25 = BM25(docs)
    assert bm25.rank("what is the name of the greyhound") == [0]
    ranked = bm25.rank("ocean swimming")
    assert ranked[0] == 1 and set(ranked) == {1, 2}
    assert bm25.rank("quantum chromodynamics") == []


def test_score_matches_the_okapi_formula():
    docs = ["apple banana", "apple apple cherry", "durian"]
    bm25 = BM25(docs, k1=1.2, b=0.75)
    n, df = 3, 2
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    avg = (2 + 3 + 1) / 3
    tf, length = 2, 3
    expected = idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))
    assert math.isclose(bm25.score("apple", 1), expected)


def test_limit_and_ties_are_deterministic():
    bm25 = BM25(["tea", "tea", "coffee"])
    assert bm25.rank("tea") == [0, 1]
    assert bm25.rank("tea", limit=1) == [0]

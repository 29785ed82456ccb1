"""The keyword index's BM25F scoring of candidates (pure; the Typesense round trip is tested in
tests/integration/test_typesense_index.py). Expectations follow from BM25's definition: rarer terms
weigh more, repeated terms saturate, shorter documents win a tie, a quote match counts less."""

import math

from core.adapters.typesense_index import bm25_scores


def _idf(total: int, found: int) -> float:
    return math.log(1.0 + (total - found + 0.5) / (found + 0.5))


def _score(docs: dict[str, dict[str, str]], matched: dict[str, dict[str, set[str]]], terms: list[str],
           found: dict[str, int], total: int = 100) -> dict[str, float]:
    return bm25_scores(terms, {t: _idf(total, found[t]) for t in terms}, docs, matched)


def test_a_shorter_memory_wins_the_same_single_match():
    docs = {"short": {"content": "User loves kayaking"},
            "long": {"content": "User talked about the garden, the neighbours, the weather and kayaking"}}
    matched = {mid: {"kayaking": {"content"}} for mid in docs}
    scores = _score(docs, matched, ["kayaking"], {"kayaking": 2})
    assert scores["short"] > scores["long"] > 0.0


def test_a_rarer_term_weighs_more():
    docs = {"rare": {"content": "User adopted Max"}, "common": {"content": "User adopted dog"}}
    matched = {"rare": {"max": {"content"}}, "common": {"dog": {"content"}}}
    scores = _score(docs, matched, ["max", "dog"], {"max": 1, "dog": 40})
    assert scores["rare"] > scores["common"]


def test_a_quote_match_counts_less_than_a_content_match():
    docs = {"content": {"content": "User flew to Lisbon", "quote": "we flew there"},
            "quote": {"content": "User went on a trip", "quote": "Lisbon"}}
    matched = {"content": {"lisbon": {"content"}}, "quote": {"lisbon": {"quote"}}}
    scores = _score(docs, matched, ["lisbon"], {"lisbon": 2})
    assert scores["content"] > scores["quote"] > 0.0


def test_repeats_saturate_and_scores_stay_within_zero_and_one():
    docs = {"once": {"content": "tea morning"}, "twice": {"content": "tea tea"}}
    matched = {"once": {"tea": {"content"}, "morning": {"content"}}, "twice": {"tea": {"content"}}}
    scores = _score(docs, matched, ["tea", "morning"], {"tea": 2, "morning": 1})
    assert 0.0 < scores["twice"] < scores["once"] <= 1.0


def test_a_prefix_or_typo_match_counts_once_in_its_field():
    docs = {"typo": {"content": "User kayaks weekly"}}
    matched = {"typo": {"kayak": {"content"}}}
    assert _score(docs, matched, ["kayak"], {"kayak": 1})["typo"] > 0.0

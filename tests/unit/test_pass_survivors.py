"""One logical memory per fact within a consolidation pass: the pure merge rule
(:func:`core.domain.routing.pass_survivors`) against a reference model written from the spec."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.domain.routing import fact_key, pass_survivors

ROUTES = ("promote", "archive", "review", "reject")
KEYS = ("k0", "k1", "k2", "k3")

entries = st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(ROUTES)), max_size=30).map(
    lambda rows: [(f"m{i}", key, route) for i, (key, route) in enumerate(rows)])
known = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(("old0", "old1", "old2")), max_size=3)


def reference(rows: list[tuple[str, str, str]], earlier: dict[str, str]) -> dict[str, str]:
    """Per fact: the survivor is the memory an earlier batch settled it in, else the first promoted
    copy; every other promoted or archived copy becomes its alias; review/reject copies stay apart."""
    out: dict[str, str] = {}
    for key in KEYS:
        copies = [(mid, route) for mid, k, route in rows if k == key]
        promoted = [mid for mid, route in copies if route == "promote"]
        survivor = earlier.get(key) or (promoted[0] if promoted else None)
        if survivor is None:
            continue
        for mid, route in copies:
            if mid != survivor and route in ("promote", "archive"):
                out[mid] = survivor
    return out


@given(entries, known)
def test_pass_survivors_matches_the_reference_model(rows: list[tuple[str, str, str]], earlier: dict[str, str]) -> None:
    assert pass_survivors(rows, earlier) == reference(rows, earlier)


@given(entries, known)
def test_exactly_one_long_term_memory_per_promoted_fact(rows: list[tuple[str, str, str]],
                                                        earlier: dict[str, str]) -> None:
    merges = pass_survivors(rows, earlier)
    # What stays Long-term: the earlier survivors and every promoted copy that merges into nothing.
    remaining = {key: {mid for mid, k, route in rows if k == key and route == "promote" and mid not in merges}
                 | ({earlier[key]} if key in earlier else set()) for key in KEYS}
    for key, memories in remaining.items():
        assert len(memories) <= 1, (key, memories)
    assert not set(merges) & set(merges.values())  # a survivor is never itself an alias
    assert all(route in ("promote", "archive") for mid, _, route in rows if mid in merges)


def test_fact_key_ignores_case_and_spacing_but_not_the_subject() -> None:
    assert fact_key("User moved to  Lisbon", "user", None) == fact_key("user moved to lisbon", "user", None)
    assert fact_key("Ana is a nurse", "third_party", "Ana") != fact_key("Ana is a nurse", "third_party", "Eve")
    assert fact_key("Likes tea", "user", None) != fact_key("Likes tea", "unknown", None)

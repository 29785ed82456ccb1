"""Hypothesis strategies for transcript segments built from phrase lists (extractor properties)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from core.domain.extraction import Segment

SEPARATORS = [". ", ", ", ", and ", " and ", "! ", "? ", "; ", " "]


def segments_from(phrases: Sequence[str]) -> st.SearchStrategy[tuple[Segment, ...]]:
    """Up to six segments (owner or other speaker), each a few phrases joined by punctuation, or
    arbitrary text."""
    text = st.one_of(
        st.lists(st.sampled_from(list(phrases)), min_size=1, max_size=4).flatmap(
            lambda parts: st.lists(st.sampled_from(SEPARATORS), min_size=len(parts), max_size=len(parts)).map(
                lambda seps: "".join(p + s for p, s in zip(parts, seps, strict=True)))),
        st.text(max_size=120),
    )
    return st.lists(st.tuples(text, st.booleans()), max_size=6).map(
        lambda rows: tuple(Segment(f"s{i}", body, "A" if is_user else "B", is_user)
                           for i, (body, is_user) in enumerate(rows)))

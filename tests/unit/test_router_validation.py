"""The server's check of router output: exactly one legal route per selected item, only known refs.

``consolidation.validate`` is pure: it maps refs back to ids or raises ``InvalidRouterOutput``.
Each malformed shape is pinned by an example, and a property compares it with an independent
statement of what a valid answer is, over generated proposal lists that mix good and bad fields.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.domain.routing import Neighbour, RouteCandidate, RouteProposal
from core.services.consolidation import ROUTES, InvalidRouterOutput, validate

ITEM_REFS = {"i0": "mem-a", "i1": "mem-b", "i2": "mem-c"}
NEIGHBOUR_REFS = {"n0": "lt-x", "n1": "lt-y", "n2": "lt-z"}
# i0 was shown n0 and n1, i1 only n1, i2 nothing; n2 exists in the batch but was shown to nobody.
SHOWN = {"i0": ("n0", "n1"), "i1": ("n1",), "i2": ()}


def _candidate(ref: str) -> RouteCandidate:
    return RouteCandidate(
        ref=ref, content=f"content of {ref}", subject="user", subject_label=None, category="system",
        kind="fact", source_ids=("c1",), independent_sources=1, manually_added=False, expired=False,
        restricted=False,
        neighbours=tuple(Neighbour(ref=n, content=f"neighbour {n}", layer="long_term") for n in SHOWN[ref]),
    )


CANDIDATES = [_candidate(ref) for ref in ITEM_REFS]


def run(proposals: Any) -> dict[str, tuple[str, list[str], str | None, str]]:
    return validate(proposals, ITEM_REFS, NEIGHBOUR_REFS, CANDIDATES)


def good() -> list[RouteProposal]:
    return [
        RouteProposal("i0", "promote", "contradiction", supersedes=("n0",), duplicate_of=None),
        RouteProposal("i1", "archive", "duplicate", duplicate_of="n1"),
        RouteProposal("i2", "review", "unsure"),
    ]


def test_exactly_one_route_per_item_is_accepted_and_mapped_to_ids() -> None:
    decisions = run(good())
    assert decisions == {
        "mem-a": ("promote", ["lt-x"], None, "contradiction"),
        "mem-b": ("archive", [], "lt-y", "duplicate"),
        "mem-c": ("review", [], None, "unsure"),
    }


def test_order_does_not_matter_and_every_route_is_allowed() -> None:
    for route in ROUTES:
        proposals = [RouteProposal(ref, route, "r") for ref in reversed(list(ITEM_REFS))]
        assert {d[0] for d in run(proposals).values()} == {route}


def test_long_reasons_are_truncated_not_refused() -> None:
    proposals = good()
    proposals[2] = RouteProposal("i2", "review", "x" * 1000)
    assert run(proposals)["mem-c"][3] == "x" * 300


def _replace(index: int, proposal: Any) -> list[Any]:
    proposals: list[Any] = list(good())
    proposals[index] = proposal
    return proposals


MALFORMED: dict[str, Any] = {
    "not a list (None)": None,
    "not a list (dict)": {"i0": "promote"},
    "not a list (tuple)": tuple(good()),
    "empty list": [],
    "missing one item": good()[:2],
    "duplicate route for one item": [*good(), RouteProposal("i0", "review", "again")],
    "same item twice, same route": [*good(), good()[0]],
    "unknown item ref": [*good(), RouteProposal("i9", "promote", "who")],
    "neighbour ref as item ref": _replace(2, RouteProposal("n0", "review", "x")),
    "an id instead of a ref": _replace(2, RouteProposal("mem-c", "review", "x")),
    "invalid route name": _replace(2, RouteProposal("i2", "keep", "x")),  # type: ignore[arg-type]
    "route in upper case": _replace(2, RouteProposal("i2", "PROMOTE", "x")),  # type: ignore[arg-type]
    "dict instead of a proposal": _replace(1, {"item_ref": "i1", "route": "archive", "reason": "x"}),
    "string instead of a proposal": _replace(1, "i1:archive"),
    "None in the list": [*good(), None],
    "unknown neighbour in supersedes": _replace(0, RouteProposal("i0", "promote", "x", supersedes=("n9",))),
    "unknown neighbour in duplicate_of": _replace(1, RouteProposal("i1", "archive", "x", duplicate_of="n9")),
    "neighbour shown to another item": _replace(1, RouteProposal("i1", "promote", "x", supersedes=("n0",))),
    "neighbour shown to nobody": _replace(0, RouteProposal("i0", "archive", "x", duplicate_of="n2")),
    "item ref as neighbour": _replace(0, RouteProposal("i0", "promote", "x", supersedes=("i1",))),
    "memory id as neighbour": _replace(0, RouteProposal("i0", "promote", "x", supersedes=("lt-x",))),
    "duplicate supersedes": _replace(0, RouteProposal("i0", "promote", "x", supersedes=("n0", "n0"))),
    "duplicate_of also superseded": _replace(
        0, RouteProposal("i0", "promote", "x", supersedes=("n0",), duplicate_of="n0")),
    "neighbour on an item shown none": _replace(2, RouteProposal("i2", "archive", "x", duplicate_of="n1")),
    # Wrong field types (a buggy or hostile router is not bound by the dataclass annotations).
    "item ref not a string": _replace(2, RouteProposal(["i2"], "review", "x")),  # type: ignore[arg-type]
    "route not a string": _replace(2, RouteProposal("i2", None, "x")),  # type: ignore[arg-type]
    "reason missing": _replace(2, RouteProposal("i2", "review", None)),  # type: ignore[arg-type]
    "reason not a string": _replace(2, RouteProposal("i2", "review", 7)),  # type: ignore[arg-type]
    "supersedes None": _replace(0, RouteProposal("i0", "promote", "x", supersedes=None)),  # type: ignore[arg-type]
    "supersedes a bare string": _replace(0, RouteProposal("i0", "promote", "x", supersedes="n0")),  # type: ignore[arg-type]
    "supersedes holds a list": _replace(
        0, RouteProposal("i0", "promote", "x", supersedes=(["n0"],))),  # type: ignore[arg-type]
    "duplicate_of not a string": _replace(
        1, RouteProposal("i1", "archive", "x", duplicate_of=["n1"])),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_output_is_refused(name: str) -> None:
    with pytest.raises(InvalidRouterOutput):
        run(MALFORMED[name])


# ------------------------------------------------------------------------------ property
def _is_valid(proposals: Any) -> bool:
    """What a valid answer is, stated independently of the implementation."""
    if not isinstance(proposals, list) or not all(isinstance(p, RouteProposal) for p in proposals):
        return False
    for p in proposals:
        if not (isinstance(p.item_ref, str) and isinstance(p.route, str) and isinstance(p.reason, str)):
            return False
        if p.duplicate_of is not None and not isinstance(p.duplicate_of, str):
            return False
        if not isinstance(p.supersedes, tuple | list) or not all(isinstance(r, str) for r in p.supersedes):
            return False
    if sorted(p.item_ref for p in proposals) != sorted(ITEM_REFS):
        return False  # exactly one per selected item: nothing missing, nothing twice, nothing unknown
    for p in proposals:
        if p.route not in ROUTES:
            return False
        linked = list(p.supersedes) + ([p.duplicate_of] if p.duplicate_of is not None else [])
        if not set(linked) <= set(SHOWN[p.item_ref]):
            return False
        if len(set(p.supersedes)) != len(p.supersedes) or p.duplicate_of in p.supersedes:
            return False
    return True


REF_POOL = ["i0", "i1", "i2", "i0", "i1", "i2", "i9", "n0", "mem-a", None, ["i0"]]
ROUTE_POOL = [*ROUTES, *ROUTES, "keep", "Promote", None]
NEIGHBOUR_POOL = ["n0", "n1", "n2", "n9", "i0", "lt-x", 3]


def _proposal() -> st.SearchStrategy[Any]:
    fields = st.builds(
        RouteProposal,
        item_ref=st.sampled_from(REF_POOL),
        route=st.sampled_from(ROUTE_POOL),
        reason=st.one_of(st.text(max_size=5), st.sampled_from([None, 1])),
        duplicate_of=st.one_of(st.none(), st.none(), st.sampled_from(NEIGHBOUR_POOL)),
        supersedes=st.one_of(st.lists(st.sampled_from(NEIGHBOUR_POOL), max_size=3).map(tuple),
                             st.just(()), st.sampled_from([None, "n0"])),
    )
    junk = st.sampled_from([None, "i0", {"item_ref": "i0", "route": "promote", "reason": ""}, 42])
    return st.one_of(fields, fields, fields, fields, junk)


def _near_valid() -> st.SearchStrategy[list[Any]]:
    """One well-formed proposal per item, in any order: valid unless a neighbour draw is illegal."""

    def one(ref: str) -> st.SearchStrategy[RouteProposal]:
        pool = list(SHOWN[ref]) + ["n9"]
        return st.builds(
            RouteProposal, item_ref=st.just(ref), route=st.sampled_from(ROUTES), reason=st.text(max_size=5),
            duplicate_of=st.one_of(st.none(), st.none(), st.sampled_from(pool)),
            supersedes=st.lists(st.sampled_from(pool), max_size=2).map(tuple),
        )

    return st.tuples(*(one(ref) for ref in ITEM_REFS)).map(list).flatmap(st.permutations)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(_proposal(), max_size=5), _near_valid()))
def test_validate_accepts_exactly_the_valid_outputs(proposals: list[Any]) -> None:
    if _is_valid(proposals):
        decisions = run(proposals)
        assert set(decisions) == set(ITEM_REFS.values())
        for p in proposals:
            route, supersedes, duplicate_of, reason = decisions[ITEM_REFS[p.item_ref]]
            assert route == p.route
            assert supersedes == [NEIGHBOUR_REFS[r] for r in p.supersedes]
            assert duplicate_of == (NEIGHBOUR_REFS[p.duplicate_of] if p.duplicate_of else None)
            assert reason == p.reason[:300]
    else:
        with pytest.raises(InvalidRouterOutput):
            run(proposals)

"""The deterministic consolidation router."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from core.domain.routing import (
    ROUTE_SCHEMA,
    ROUTES,
    Neighbour,
    RouteCandidate,
    RuleRouter,
    contradicts,
    similarity,
)

BASE = RouteCandidate(
    ref="i0", content="User moved to Lisbon in March", subject="user", subject_label=None, category="lifestyle",
    kind="fact", source_ids=("c1",), independent_sources=1, manually_added=False, expired=False,
    restricted=False, neighbours=(),
)
ROUTER = RuleRouter()


def route(**changes):
    (proposal,) = ROUTER.route([replace(BASE, **changes)])
    assert proposal.item_ref == changes.get("ref", "i0")
    return proposal


def test_identity() -> None:
    assert (ROUTER.router_id, ROUTER.router_version) == ("rules", "1")


def test_empty_and_garbage_are_rejected() -> None:
    for content in ("", "   ", "??", "### 123 !!!", "a"):
        assert route(content=content).route == "reject"


def test_secret_content_is_rejected() -> None:
    assert route(content="User's password is Tulip-2291").route == "reject"


def test_near_duplicate_of_long_term_is_archived() -> None:
    neighbours = (Neighbour("n1", "User likes jazz", "long_term"),
                  Neighbour("n2", "User moved to Lisbon in March.", "long_term"))
    proposal = route(neighbours=neighbours)
    assert (proposal.route, proposal.duplicate_of) == ("archive", "n2")


def test_duplicate_only_counts_long_term_and_same_subject() -> None:
    short = (Neighbour("n1", "User moved to Lisbon in March", "short_term"),)
    assert route(neighbours=short).route == "promote"
    other_person = (Neighbour("n1", "Tom moved to Lisbon in March", "long_term", "Tom"),)
    assert route(neighbours=other_person).duplicate_of is None


def test_contradiction_supersedes_on_the_same_attribute() -> None:
    proposal = route(neighbours=(Neighbour("n3", "User lives in Seattle", "long_term"),
                                 Neighbour("n4", "User likes jazz", "long_term")))
    assert proposal.route == "promote"
    assert proposal.supersedes == ("n3",)
    assert proposal.duplicate_of is None


def test_diet_contradiction() -> None:
    proposal = route(content="User is vegetarian and stopped eating meat about two years ago", kind="preference",
                     neighbours=(Neighbour("n7", "User loves steak", "long_term"),))
    assert (proposal.route, proposal.supersedes) == ("promote", ("n7",))


def test_soft_contradiction_or_unknown_subject_goes_to_review() -> None:
    soft = route(content="User hates jazz", kind="preference",
                 neighbours=(Neighbour("n1", "User loves jazz", "long_term"),))
    assert soft.route == "review" and soft.supersedes == ()
    unknown = route(subject="unknown", neighbours=(Neighbour("n1", "User lives in Seattle", "long_term"),))
    assert unknown.route == "review"


def test_third_party_contradiction_needs_the_same_person() -> None:
    tom = replace(BASE, content="Tom works as a nurse at Saint Mary's", subject="third_party", subject_label="Tom")
    (p,) = ROUTER.route([replace(tom, neighbours=(Neighbour("n1", "Tom works as a teacher", "long_term", "tom"),))])
    assert (p.route, p.supersedes) == ("promote", ("n1",))
    (p,) = ROUTER.route([replace(tom, neighbours=(Neighbour("n1", "User works as a teacher", "long_term"),))])
    assert p.supersedes == ()


def test_corroboration_and_manual_and_durable_promote() -> None:
    assert route(kind="plan", independent_sources=2).route == "promote"
    assert route(kind="plan", manually_added=True).route == "promote"
    assert route(kind="fact").route == "promote"
    assert route(kind="relationship", subject="third_party", subject_label="Tom").route == "promote"


def test_expired_trivial_is_archived_and_ambiguous_is_reviewed() -> None:
    assert route(kind="plan", content="User is buying a used car next month", expired=True).route == "archive"
    assert route(kind="plan", content="User is buying a used car next month").route == "review"
    assert route(kind="fact", subject="unknown").route == "review"


def test_similarity_and_contradiction_helpers() -> None:
    assert similarity("User moved to Lisbon in March", "user moved to lisbon in march!") == 1.0
    assert similarity("", "x") == 0.0
    assert contradicts("User moved to Lisbon in March", "User lives in Seattle") == "firm"
    assert contradicts("User moved to Lisbon in March", "User lives in Lisbon") is None


def test_route_schema_is_strict() -> None:
    item = ROUTE_SCHEMA["properties"]["proposals"]["items"]
    assert ROUTE_SCHEMA["additionalProperties"] is False and item["additionalProperties"] is False
    assert set(item["required"]) == set(item["properties"])
    assert item["properties"]["route"]["enum"] == list(ROUTES)


refs = st.sampled_from(["n0", "n1", "n2", "n3"])
neighbour_st = st.builds(Neighbour, ref=refs, content=st.sampled_from(
    ["User lives in Seattle", "User loves steak", "User moved to Lisbon in March", "Tom works as a nurse", ""]),
    layer=st.sampled_from(["long_term", "short_term", "archive"]),
    subject_label=st.sampled_from([None, "Tom", "user"]))
candidate_st = st.builds(
    RouteCandidate, ref=st.just("i"), content=st.text(max_size=60), subject=st.sampled_from(["user", "third_party",
                                                                                            "unknown"]),
    subject_label=st.sampled_from([None, "Tom"]), category=st.just("core"),
    kind=st.sampled_from(["fact", "preference", "relationship", "plan"]), source_ids=st.just(("c",)),
    independent_sources=st.integers(0, 3), manually_added=st.booleans(), expired=st.booleans(),
    restricted=st.booleans(), neighbours=st.lists(neighbour_st, max_size=4).map(tuple))


@given(st.lists(candidate_st, max_size=8))
def test_exactly_one_proposal_per_candidate_using_only_given_refs(candidates: list[RouteCandidate]) -> None:
    candidates = [replace(c, ref=f"i{i}") for i, c in enumerate(candidates)]
    proposals = ROUTER.route(candidates)
    assert [p.item_ref for p in proposals] == [c.ref for c in candidates]
    for candidate, proposal in zip(candidates, proposals, strict=True):
        assert proposal.route in ROUTES
        known = {n.ref for n in candidate.neighbours if n.layer == "long_term"}
        assert proposal.duplicate_of is None or proposal.duplicate_of in known
        assert set(proposal.supersedes) <= known
        if proposal.duplicate_of:
            assert proposal.route == "archive"
        if proposal.supersedes:
            assert proposal.route == "promote"

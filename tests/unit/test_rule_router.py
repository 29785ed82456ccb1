"""The deterministic consolidation router (core.adapters.rules): its routes, and the endings it
proposes exactly where the ending rule of core.domain.slots allows them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from core.adapters.rules import RuleRouter
from core.adapters.rules.similarity import similarity
from core.domain.routing import ROUTE_SCHEMA, ROUTES, Neighbour, RouteCandidate
from core.domain.slots import Slot

BASE = RouteCandidate(
    ref="i0", content="User moved to Lisbon in March", subject="user", subject_label=None, category="lifestyle",
    kind="fact", source_ids=("c1",), independent_sources=1, manually_added=False, expired=False,
    restricted=False, neighbours=(), slot=Slot(attribute="residence", value="Lisbon"),
    said=datetime(2026, 3, 1, tzinfo=UTC),
)
EARLIER = datetime(2025, 6, 1, tzinfo=UTC)
ROUTER = RuleRouter()


def route(**changes):
    (proposal,) = ROUTER.route([replace(BASE, **changes)])
    assert proposal.item_ref == changes.get("ref", "i0")
    return proposal


def test_identity() -> None:
    assert (ROUTER.router_id, ROUTER.router_version) == ("rules", "2")


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


def test_a_later_value_of_the_same_attribute_is_proposed_as_an_ending() -> None:
    seattle = Neighbour("n3", "User lives in Seattle", "long_term", slot=Slot(attribute="residence", value="Seattle"),
                        said=EARLIER)
    proposal = route(neighbours=(seattle, Neighbour("n4", "User likes jazz", "long_term")))
    assert (proposal.route, proposal.supersedes, proposal.duplicate_of) == ("promote", ("n3",), None)


def test_no_ending_without_both_slots_a_later_statement_or_the_same_subject() -> None:
    no_slot = Neighbour("n3", "User lives in Seattle", "long_term", said=EARLIER)
    assert route(neighbours=(no_slot,)).supersedes == ()
    later = Neighbour("n3", "User lives in Seattle", "long_term", slot=Slot(attribute="residence", value="Seattle"),
                      said=datetime(2026, 9, 1, tzinfo=UTC))
    assert route(neighbours=(later,)).supersedes == ()
    tom = replace(BASE, content="Tom moved to Lisbon", subject="third_party", subject_label="Tom")
    users = Neighbour("n1", "User lives in Seattle", "long_term", slot=Slot(attribute="residence", value="Seattle"),
                      said=EARLIER)
    (p,) = ROUTER.route([replace(tom, neighbours=(users,))])
    assert p.supersedes == ()
    toms = replace(users, content="Tom lives in Seattle", subject="third_party", subject_label="tom")
    (p,) = ROUTER.route([replace(tom, neighbours=(toms,))])
    assert p.supersedes == ("n1",)


def test_durable_kinds_promote_and_the_rest_is_reviewed_or_archived_at_its_deadline() -> None:
    assert route(kind="plan", independent_sources=2).route == "promote"
    assert route(kind="plan", manually_added=True).route == "promote"
    assert route(kind="fact").route == "promote"
    assert route(kind="relationship", subject="third_party", subject_label="Tom").route == "promote"
    assert route(kind="plan", content="User is buying a used car next month").route == "review"
    assert route(kind="plan", content="User is buying a used car next month", expired=True).route == "archive"
    assert route(kind="fact", subject="unknown").route == "review"


def test_similarity() -> None:
    assert similarity("User moved to Lisbon in March", "user moved to lisbon in march!") == 1.0
    assert similarity("", "x") == 0.0


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


def test_two_values_said_the_same_day_go_to_review_naming_the_fact() -> None:
    same_day = Neighbour("n3", "User lives in Seattle", "long_term", slot=Slot(attribute="residence", value="Seattle"),
                         said=BASE.said)
    proposal = route(neighbours=(same_day,))
    assert (proposal.route, proposal.supersedes) == ("review", ("n3",))


def test_a_taste_turned_around_is_asked_never_ended() -> None:
    loved = Neighbour("n1", "User loves olives", "long_term")
    proposal = route(content="User hates olives", kind="preference", slot=None, neighbours=(loved,))
    assert (proposal.route, proposal.supersedes) == ("review", ("n1",))
    other = route(content="User hates anchovies", kind="preference", slot=None, neighbours=(loved,))
    assert (other.route, other.supersedes) == ("promote", ())

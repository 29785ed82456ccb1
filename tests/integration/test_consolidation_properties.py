"""Consolidation against the Firestore emulator: whatever the router says, the ledger stays sound.

Items are created through the real apply path (explicit intake), then ``consolidation.run_pass``
runs with a router that answers with generated output: complete and valid proposals, missing
items, two routes for one item, unknown item or neighbour refs, invalid route names, junk entries,
non-lists, or an exception. After every pass:

* each item that was pending either settled through exactly one terminal route or is untouched
  (same revision, still pending); a routed item is never routed again;
* every stored item is a legal state combination with its derived fields in step;
* every active Long-term item has a receipt that validates against its current revision and a
  matching ``memory_graph_assertions`` document (and no assertion exists for anything else);
* the per-user ledger is gapless; an item that failed three times settles as ``review``.

These tests use their own Firestore project on the stack's emulator so that the stack's scheduled
fan-out (which consolidates every user of the default project with the rule router) cannot route
their items between the passes they make; projection nudges go to a recording publisher.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from core import config
from core.bootstrap import Context
from core.domain.admission import receipt_problems
from core.domain.records import MemoryItem
from core.domain.routing import RouteCandidate, RouteProposal
from core.errors import AdmissionRefused, ProviderUnavailable
from core.ports import Publisher
from core.services import consolidation, intake
from core.services.intake import ExplicitMemory
from tests.support import spec_model

pytestmark = pytest.mark.integration

ISOLATED_PROJECT = "demo-strata-consolidation-tests"
ROUTES = consolidation.ROUTES
HYPOTHESIS = settings(max_examples=30, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


class RecordingPublisher(Publisher):
    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        self.messages.append((topic, data))


def isolated_context(**overrides: Any) -> Context:
    settings_ = config.load(project_id=ISOLATED_PROJECT)
    overrides.setdefault("publisher", RecordingPublisher())
    return Context(settings_, **overrides)


def new_uid(prefix: str = "cp") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# ---------------------------------------------------------------------------------------- helpers
def create(ctx: Context, uid: str, contents: list[str]) -> list[MemoryItem]:
    items = intake.create_explicit(ctx, uid, [ExplicitMemory(content=c, category="system") for c in contents])
    assert [i.content for i in items] == contents
    assert all(i.pending_route for i in items)
    return items


def all_items(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    return {s.id: MemoryItem.from_store(s.to_dict()) for s in ctx.paths.col(uid, "memory_items").stream()}


def docs(ctx: Context, uid: str, collection: str) -> dict[str, dict[str, Any]]:
    return {s.id: s.to_dict() for s in ctx.paths.col(uid, collection).stream()}


def attempts(ctx: Context, uid: str) -> dict[str, int]:
    return {k: int(v.get("attempts", 0)) for k, v in docs(ctx, uid, "consolidation_attempts").items()}


def control(ctx: Context, uid: str) -> dict[str, Any]:
    snap = ctx.paths.doc(uid, "memory_state", "apply_control").get()
    return snap.to_dict() if snap.exists else {}


def assert_ledger_gapless(ctx: Context, uid: str) -> list[dict[str, Any]]:
    commits = sorted(docs(ctx, uid, "memory_commits").values(), key=lambda c: c["sequence"])
    assert [c["sequence"] for c in commits] == list(range(1, len(commits) + 1))
    parent = None
    for commit in commits:
        assert commit["parent_commit_id"] == parent
        parent = commit["commit_id"]
    head = control(ctx, uid)
    assert head.get("sequence", 0) == len(commits)
    assert head.get("head_commit_id") == parent
    return commits


def assert_store_sound(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    """Legal states, derived fields in step, every active Long-term item validly admitted."""
    items = all_items(ctx, uid)
    assertions = docs(ctx, uid, "memory_graph_assertions")
    active_long_term = set()
    for item in items.values():
        stored = item.to_store()
        assert spec_model.item_legal(stored), item
        # The denormalised read bucket agrees with the spec's default-visibility rule.
        assert (item.read_class == "default") == spec_model.default_visible(stored), item
        settled = item.model_copy(deep=True).settle()
        assert (settled.pending_route, settled.content_hash) == (item.pending_route, item.content_hash)
        assert item.route in (None, *ROUTES)
        if item.status == "hidden":
            assert item.layer == "short_term", "a rejected item never reaches Long-term"
        if item.layer == "long_term" and item.record_status == "active":
            active_long_term.add(item.id)
            assertion = assertions.get(item.id)
            assert receipt_problems(item, assertion) == [], item.id
            assert assertion is not None and assertion["memory_id"] == item.id
            assert assertion["assertion_id"] == item.graph_assertion_id
            assert assertion["revision"] == item.revision
            receipt = item.promotion["admission_receipt"]
            assert receipt["revision"] == item.revision and receipt["memory_id"] == item.id
            assert item.ledger_commit_id and item.ledger_sequence is not None
    assert set(assertions) == active_long_term, "graph assertions exist exactly for active Long-term items"
    reviews = docs(ctx, uid, "memory_review_queue")
    for item in items.values():
        if item.route == "review" and item.layer == "short_term" and item.record_status == "active":
            entry = next(r for r in reviews.values() if r["review_id"] == item.review_id)
            assert entry["memory_id"] == item.id and entry["status"] == "open"
            assert entry["revision"] == item.revision and entry["commit_id"] == item.ledger_commit_id
    assert_ledger_gapless(ctx, uid)
    return items


class PromoteAll:
    router_id, router_version = "promote-all", "1"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        return [RouteProposal(c.ref, "promote", "setup") for c in candidates]


# ------------------------------------------------------------------------------ the fuzzing router
BEHAVIOURS = ("valid", "valid", "missing", "duplicate", "unknown_item", "unknown_neighbour",
              "bad_route", "junk", "not_a_list", "raises", "raises_provider")
INVALID = set(BEHAVIOURS) - {"valid"}


class FuzzRouter:
    """Draws its behaviour and its proposals from hypothesis each time it is asked."""

    router_id, router_version = "fuzz", "1"

    def __init__(self, data: st.DataObject, behaviour: str | None = None) -> None:
        self.data, self.behaviour = data, behaviour
        self.calls: list[tuple[str, list[RouteCandidate], Any]] = []

    def _valid(self, c: RouteCandidate) -> RouteProposal:
        draw = self.data.draw
        route = draw(st.sampled_from(ROUTES), label=f"route {c.ref}")
        shown = [n.ref for n in c.neighbours]
        duplicate_of = draw(st.one_of(st.none(), st.sampled_from(shown)) if shown else st.none(),
                            label=f"duplicate_of {c.ref}")
        rest = [r for r in shown if r != duplicate_of]
        supersedes = tuple(draw(st.lists(st.sampled_from(rest), unique=True, max_size=2), label=f"supersedes {c.ref}")
                           ) if rest else ()
        return RouteProposal(c.ref, route, f"fuzz {route}", duplicate_of=duplicate_of, supersedes=supersedes)

    def route(self, candidates: list[RouteCandidate]) -> Any:
        draw = self.data.draw
        behaviour = self.behaviour or draw(st.sampled_from(BEHAVIOURS), label="behaviour")
        proposals: Any = [self._valid(c) for c in candidates]
        pick = draw(st.integers(0, len(candidates) - 1), label="victim")
        if behaviour == "missing":
            del proposals[pick]
        elif behaviour == "duplicate":
            proposals.append(dataclasses.replace(proposals[pick], route=draw(st.sampled_from(ROUTES))))
        elif behaviour == "unknown_item":
            proposals.append(RouteProposal(f"i{len(candidates) + draw(st.integers(0, 3))}", "promote", "ghost"))
        elif behaviour == "unknown_neighbour":
            ref = draw(st.sampled_from(["n99", "i0", "zz"]))
            proposals[pick] = dataclasses.replace(proposals[pick], supersedes=(ref,), duplicate_of=None)
        elif behaviour == "bad_route":
            name = draw(st.sampled_from(["keep", "Promote", "long_term", ""]))
            proposals[pick] = dataclasses.replace(proposals[pick], route=name)
        elif behaviour == "junk":
            proposals.insert(pick, draw(st.sampled_from([None, "i0 promote", {"item_ref": "i0"}, 7])))
        elif behaviour == "not_a_list":
            proposals = draw(st.sampled_from([None, {"proposals": []}, tuple(proposals), "promote"]))
        elif behaviour == "raises":
            self.calls.append((behaviour, list(candidates), None))
            raise RuntimeError("router crashed")
        elif behaviour == "raises_provider":
            self.calls.append((behaviour, list(candidates), None))
            raise ProviderUnavailable("router provider is down")
        self.calls.append((behaviour, list(candidates), proposals))
        return proposals


VOCAB = ("hiking", "tea", "jazz", "chess", "kayaks", "ramen")


def contents(prefix: str, count: int, data: st.DataObject) -> list[str]:
    out = []
    for k in range(count):
        a, b = data.draw(st.lists(st.sampled_from(VOCAB), min_size=2, max_size=2, unique=True), label="words")
        out.append(f"enjoys {a} and {b} {prefix}{k}")  # shared words make Long-term items neighbours
    return out


@HYPOTHESIS
@given(data=st.data())
def test_any_router_output_leaves_exactly_one_route_or_nothing(stack: dict[str, Any], data: st.DataObject) -> None:
    ctx = isolated_context()
    uid = new_uid()
    n_long = data.draw(st.integers(0, 3), label="long-term neighbours")
    n_short = data.draw(st.integers(1, 4), label="pending items")
    if n_long:
        create(ctx, uid, contents("old", n_long, data))
        summary = consolidation.run_pass(ctx, uid, router=PromoteAll())
        assert summary["routes"] == {"promote": n_long}
    pending = create(ctx, uid, contents("new", n_short, data))
    assert_store_sound(ctx, uid)

    routed_count: Counter[str] = Counter()
    for _ in range(data.draw(st.integers(1, 4), label="passes")):
        before = all_items(ctx, uid)
        tries = attempts(ctx, uid)
        was_pending = {mid for mid, item in before.items() if item.pending_route}
        forced = {mid for mid in was_pending if tries.get(mid, 0) >= consolidation.MAX_ATTEMPTS}
        asked = was_pending - forced
        router = FuzzRouter(data)

        summary = consolidation.run_pass(ctx, uid, router=router)

        after = assert_store_sound(ctx, uid)
        assert summary["skipped"] is None and summary["selected"] == len(was_pending)
        assert len(router.calls) == (1 if asked else 0), "one batch, asked once; forced items are not asked"
        behaviour, candidates, proposals = router.calls[0] if router.calls else ("none", [], None)
        event(f"router behaviour: {behaviour}")
        if forced:
            event("items forced to review after three failures")
        if behaviour == "valid" and any(p.duplicate_of or p.supersedes for p in proposals):
            event("valid output linking Long-term neighbours")
        by_content = {before[mid].content: mid for mid in asked}
        assert sorted(by_content[c.content] for c in candidates) == sorted(asked)
        for mid, item in after.items():
            old = before[mid]
            if mid not in was_pending:
                assert item.route == old.route, "a settled item is never routed again"
                assert not item.pending_route
                continue
            if item.pending_route:
                assert item.revision == old.revision and item.route is None, "untouched means untouched"
            else:
                routed_count[mid] += 1
                assert item.route in ROUTES and item.revision > old.revision
                assert item.promotion and item.promotion["route"] == item.route
        assert all(n == 1 for n in routed_count.values()), routed_count

        # What the router said decides what happened.
        for mid in forced:
            assert after[mid].route == "review", "three failed attempts settle as review"
            assert after[mid].promotion["reason"] == "router failed three times"
        if behaviour == "valid":
            # Issue 44: an ending the server's rule cannot confirm (these facts state no declared
            # attribute) ends nothing; the owner is asked instead, naming the fact.
            chosen = {by_content[c.content]: "review" if p.route == "promote" and p.supersedes else p.route
                      for c, p in zip(candidates, proposals, strict=True)}
            assert {mid: after[mid].route for mid in asked} == chosen
            assert summary["retries"] == 0
        elif behaviour in INVALID:
            for mid in asked:
                assert after[mid].pending_route and after[mid].revision == before[mid].revision
                assert attempts(ctx, uid)[mid] == tries.get(mid, 0) + 1, "a failed attempt is recorded"
            assert summary["retries"] == len(asked)
        assert sum(summary["routes"].values()) == len(was_pending) - (len(asked) if behaviour in INVALID else 0)

    # Every item of the pending set is now either settled once or still pending untouched.
    final = all_items(ctx, uid)
    for item in pending:
        current = final[item.id]
        assert (current.pending_route and current.route is None) or routed_count[item.id] == 1


@pytest.mark.parametrize("behaviour", sorted(set(BEHAVIOURS)))
@settings(max_examples=2, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_each_router_behaviour_against_long_term_neighbours(stack: dict[str, Any], behaviour: str,
                                                             data: st.DataObject) -> None:
    """Every behaviour at least once, with neighbours shown: valid output settles every item as
    proposed; anything else mutates nothing and records one attempt per item."""
    ctx = isolated_context()
    uid = new_uid()
    create(ctx, uid, ["enjoys tea and jazz old0", "enjoys chess and jazz old1"])
    consolidation.run_pass(ctx, uid, router=PromoteAll())
    pending = create(ctx, uid, ["enjoys tea and jazz new0", "enjoys jazz and chess new1", "enjoys tea new2"])
    before = all_items(ctx, uid)
    router = FuzzRouter(data, behaviour)
    summary = consolidation.run_pass(ctx, uid, router=router)
    after = assert_store_sound(ctx, uid)
    (call,) = router.calls
    assert call[0] == behaviour and all(c.neighbours for c in call[1])
    if behaviour == "valid":
        chosen = {c.content: "review" if p.route == "promote" and p.supersedes else p.route  # (issue 44, above)
                  for c, p in zip(call[1], call[2], strict=True)}
        assert {i.content: after[i.id].route for i in pending} == chosen
        assert sum(summary["routes"].values()) == 3 and summary["retries"] == 0
    else:
        assert summary["routes"] == {} and summary["retries"] == 3
        assert after == before, "invalid router output mutates nothing"
        assert attempts(ctx, uid) == {i.id: 1 for i in pending}


def test_three_failed_attempts_settle_as_review(stack: dict[str, Any]) -> None:
    ctx = isolated_context()
    uid = new_uid()
    items = create(ctx, uid, ["enjoys tea at dawn", "enjoys jazz on fridays"])
    asked: list[int] = []

    class Broken:
        router_id, router_version = "broken", "1"

        def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
            asked.append(len(candidates))
            return [RouteProposal(candidates[0].ref, "promote", "only one")]  # always incomplete

    for expected in (1, 2, 3):
        summary = consolidation.run_pass(ctx, uid, router=Broken())
        assert summary["routes"] == {} and summary["retries"] == 2
        assert attempts(ctx, uid) == {i.id: expected for i in items}
        assert all(i.pending_route for i in all_items(ctx, uid).values())
    summary = consolidation.run_pass(ctx, uid, router=Broken())
    assert asked == [2, 2, 2], "the router is not asked again after three failures"
    assert summary["routes"] == {"review": 2}
    after = assert_store_sound(ctx, uid)
    assert {i.route for i in after.values()} == {"review"}
    queue = docs(ctx, uid, "memory_review_queue")
    assert sorted(r["memory_id"] for r in queue.values()) == sorted(i.id for i in items)


# ------------------------------------------------------------------------------------ concurrency
class SlowRouter:
    """Deterministic routes; optionally holds until ``gate`` opens, so that another pass provably
    overlaps it (an event, not a sleep: no timing assumption)."""

    router_id, router_version = "slow", "1"

    def __init__(self, gate: threading.Event | None = None, started: threading.Event | None = None,
                 reason: str = "slow") -> None:
        self.gate, self.started, self.reason, self.asked = gate, started, reason, 0

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        self.asked += len(candidates)
        if self.started is not None:
            self.started.set()
        if self.gate is not None:
            assert self.gate.wait(120), "the test never opened the gate"
        return [RouteProposal(c.ref, ROUTES[int(c.content.rsplit(" ", 1)[-1]) % 3], self.reason) for c in candidates]


def route_changes(ctx: Context, uid: str) -> Counter[str]:
    seen: Counter[str] = Counter()
    for commit in docs(ctx, uid, "memory_commits").values():
        if commit["kind"] == "consolidation.route":
            seen.update(change["memory_id"] for change in commit["changes"])
    return seen


def test_two_concurrent_passes_route_every_item_once(stack: dict[str, Any]) -> None:
    """Pass A holds its lease inside the router; pass B starts while A provably holds it (A's router
    signalled), so B must skip; then A finishes and routes every item exactly once."""
    ctx = isolated_context()
    uid = new_uid()
    items = create(ctx, uid, [f"enjoys chess problem {k}" for k in range(24)])  # two batches of 20 + 4
    started, gate = threading.Event(), threading.Event()
    results: dict[str, dict[str, Any]] = {}
    first = threading.Thread(target=lambda: results.setdefault(
        "a", consolidation.run_pass(isolated_context(), uid, router=SlowRouter(gate=gate, started=started))))
    first.start()
    try:
        assert started.wait(60), "pass A never reached its router"
        results["b"] = consolidation.run_pass(isolated_context(), uid, router=SlowRouter())
    finally:
        gate.set()
        first.join(timeout=120)
    assert results["b"]["skipped"] == "lease_held"
    assert results["a"]["skipped"] is None
    assert route_changes(ctx, uid) == Counter({i.id: 1 for i in items})
    after = assert_store_sound(ctx, uid)
    assert all(not i.pending_route for i in after.values())


@pytest.mark.parametrize("same_decisions", [False, True], ids=["other-decisions", "same-decisions"])
def test_a_pass_that_lost_its_lease_never_routes_twice(stack: dict[str, Any], same_decisions: bool) -> None:
    """Pass A stalls in its router past its lease; pass B (whose clock is past A's lease) takes
    over and routes everything. A's late apply must find the revisions moved (or, with identical
    decisions, the identical operation already journaled) and change nothing."""
    from datetime import UTC, datetime, timedelta

    ctx = isolated_context()
    uid = new_uid()
    items = create(ctx, uid, [f"enjoys ramen shop {k}" for k in range(6)])
    started, gate = threading.Event(), threading.Event()
    slow = SlowRouter(gate=gate, started=started)
    results: dict[str, dict[str, Any]] = {}
    first = threading.Thread(target=lambda: results.setdefault("a", consolidation.run_pass(ctx, uid, router=slow)))
    first.start()
    try:
        assert started.wait(60), "pass A never reached its router"
        later = datetime.now(UTC) + timedelta(seconds=consolidation.LEASE_SECONDS + 60)
        ctx_b = isolated_context(clock=lambda: later)
        results["b"] = consolidation.run_pass(ctx_b, uid,
                                              router=SlowRouter(reason="slow" if same_decisions else "b"))
    finally:
        gate.set()  # A resumes only after B has finished: its apply is late by construction
        first.join(timeout=120)

    assert results["b"]["skipped"] is None and sum(results["b"]["routes"].values()) == 6
    assert results["a"]["skipped"] is None
    assert results["a"]["routes"] == {} and results["a"]["untouched"] == 6
    assert route_changes(ctx, uid) == Counter({i.id: 1 for i in items})
    assert_store_sound(ctx, uid)


# ---------------------------------------------------------------------------------- bad receipts
TAMPERINGS = ("receipt_revision", "receipt_content_hash", "receipt_evidence", "receipt_supersedes",
              "receipt_id", "content_changed", "plan_hash", "no_receipt", "no_assertion", "assertion_revision",
              "assertion_other_memory", "assertion_inactive", "supersedes_itself")


@pytest.fixture(scope="module")
def admitted(stack: dict[str, Any]) -> tuple[str, str]:
    ctx = isolated_context()
    uid = new_uid("rc")
    (item,) = create(ctx, uid, ["enjoys kayaks on the lake"])
    consolidation.run_pass(ctx, uid, router=PromoteAll())
    return uid, item.id


@pytest.mark.parametrize("tampering", TAMPERINGS)
@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(nonce=st.uuids())
def test_a_long_term_write_with_a_bad_receipt_is_refused(admitted: tuple[str, str], tampering: str,
                                                         nonce: uuid.UUID) -> None:
    """Every tampering runs every time (parametrized); hypothesis varies the operation within each."""
    from core.domain.admission import admit
    from core.domain.plan import ApplyView, Plan

    ctx = isolated_context()
    uid, memory_id = admitted
    head = control(ctx, uid)
    before = all_items(ctx, uid)[memory_id]
    path = f"memory_graph_assertions/{memory_id}"

    def plan(view: ApplyView) -> Plan:
        item = view.items[memory_id].model_copy(deep=True)
        item.evidence[0].captured_at = view.now  # an ordinary-looking rewrite of the same item
        assertion = admit(item, revision=view.next_revision(memory_id), commit_id=view.commit_id, now=view.now,
                          planner="tamper")
        receipt = item.promotion["admission_receipt"]
        forged = {"receipt_revision": ("revision", item.revision - 1),
                  "receipt_content_hash": ("content_hash", "0" * 16),
                  "receipt_evidence": ("evidence_ids", ["forged"]), "receipt_supersedes": ("supersedes", ["other"]),
                  "receipt_id": ("receipt_id", "forged")}
        if tampering in forged:
            key, value = forged[tampering]
            receipt[key] = value
        elif tampering == "content_changed":
            item.content = item.content + " and forged"
        elif tampering == "plan_hash":
            item.promotion["graph_plan"] = {**item.promotion["graph_plan"], "subject": "someone else"}
        elif tampering == "no_receipt":
            item.promotion = {"route": "promote"}
        elif tampering == "no_assertion":
            assertion = None
        elif tampering == "assertion_revision":
            assertion["revision"] -= 1
        elif tampering == "assertion_other_memory":
            assertion["memory_id"] = "someone-else"
        elif tampering == "assertion_inactive":
            assertion["status"] = "retracted"
        elif tampering == "supersedes_itself":
            item.supersedes = [memory_id]
        out = Plan(items=[item])
        if assertion is not None:
            out.docs[path] = assertion
        return out

    with pytest.raises(AdmissionRefused):
        ctx.store.apply(uid, "test.tamper", {"tampering": tampering, "nonce": str(nonce)}, plan,
                         item_ids=[memory_id], doc_paths=[path])
    assert control(ctx, uid) == head
    assert all_items(ctx, uid)[memory_id] == before
    assert_store_sound(ctx, uid)

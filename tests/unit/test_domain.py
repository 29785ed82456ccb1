"""Pure domain rules: the legal-states table, read classes, lineage collapse, TTL reporting, ids,
categories and Long-term admission receipts. No servers."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from core.domain import ids
from core.domain.admission import admit, receipt_problems
from core.domain.records import (
    PRIMARY_CATEGORIES,
    Evidence,
    MemoryItem,
    QuoteRef,
    expired,
    primary_category,
    to_public,
)
from core.domain.states import (
    IllegalState,
    assert_legal_state,
    default_visible,
    is_legal_state_combination,
    physical_status_to_record_status,
    read_class,
)
from core.domain.visibility import collapse_lineage, is_default_visible
from tests.support import spec_model

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)

# The legal-states table (docs/data-model.md) lives in the tests' reference model (tests/support/spec_model.py),
# written out independently of core.domain.states.LEGAL.
LAYERS = ("short_term", "long_term", "archive", "context_only", "working", "", "SHORT_TERM")
STATUSES = ("active", "superseded", "tombstoned", "hidden", "deleted", "", "ACTIVE")
STATES = ("pending", "processed", "blocked", "working", "", "PROCESSED")


def _spec_legal(layer: str, status: str, state: str) -> bool:
    return spec_model.legal(layer, status, state)


# ----------------------------------------------------------------------------------- the legal-states table matrix
@pytest.mark.parametrize(("layer", "status", "state"), list(itertools.product(LAYERS, STATUSES, STATES)))
def test_legality_matrix_is_exactly_the_spec_table(layer: str, status: str, state: str) -> None:
    expected = _spec_legal(layer, status, state)
    assert is_legal_state_combination(layer, status, state) is expected
    if expected:
        assert_legal_state(layer, status, state)
    else:
        with pytest.raises(IllegalState):
            assert_legal_state(layer, status, state)


def test_matrix_has_exactly_fourteen_legal_record_combinations() -> None:
    legal = {c for c in itertools.product(LAYERS, ("active", "superseded", "tombstoned"), STATES)
             if is_legal_state_combination(*c)}
    assert len(legal) == 14  # short 3x3, long 3x1, archive 2x1
    assert ("long_term", "active", "pending") not in legal
    assert ("long_term", "active", "blocked") not in legal
    assert ("archive", "superseded", "processed") not in legal


@pytest.mark.parametrize("status", ["active", "superseded", "tombstoned", "hidden"])
@pytest.mark.parametrize("state", ["pending", "processed", "blocked"])
def test_context_only_is_never_a_layer(status: str, state: str) -> None:
    assert not is_legal_state_combination("context_only", status, state)
    assert not is_legal_state_combination(status, "context_only", state)
    assert not is_legal_state_combination("short_term", status, "context_only")


@pytest.mark.parametrize("layer", ["short_term", "long_term", "archive"])
def test_hidden_maps_to_tombstoned(layer: str) -> None:
    assert physical_status_to_record_status("hidden") == "tombstoned"
    assert physical_status_to_record_status("active") == "active"
    for state in ("pending", "processed", "blocked"):
        assert is_legal_state_combination(layer, "hidden", state) == is_legal_state_combination(
            layer, "tombstoned", state)
        assert not default_visible(layer, "hidden", state)
        assert read_class(layer, "hidden", state) == "hidden"


# ---------------------------------------------------------------------- read class / default reads
@pytest.mark.parametrize(("layer", "status", "state"),
                         [c for c in itertools.product(("short_term", "long_term", "archive"),
                                                       ("active", "superseded", "tombstoned", "hidden"),
                                                       ("pending", "processed", "blocked"))
                          if spec_model.legal(*c)])
def test_read_class_and_default_visibility(layer: str, status: str, state: str) -> None:
    visible = spec_model.default_visible({"layer": layer, "status": status, "processing_state": state})
    assert default_visible(layer, status, state) is visible
    expected = "default" if visible else ("archive" if layer == "archive" and status == "active" else "hidden")
    assert read_class(layer, status, state) == expected
    item = MemoryItem(id="m", uid="u", content="x", layer=layer, status=status, processing_state=state).settle()
    assert item.read_class == expected
    assert is_default_visible(item) is visible


def test_settle_refuses_illegal_items_and_derives_fields() -> None:
    with pytest.raises(IllegalState):
        MemoryItem(id="m", uid="u", content="x", layer="long_term", processing_state="pending").settle()
    with pytest.raises(IllegalState):
        MemoryItem(id="m", uid="u", content="x", layer="context_only", processing_state="processed").settle()
    item = MemoryItem(
        id="m", uid="u", content="  Likes   tea ", processing_state="processed", conversation_id="c2",
        sensitivity_labels=["health"],
        evidence=[_evidence("c1", device="ios_00000001"), _evidence("c3", device="macos_00000002", active=False)],
    ).settle()
    assert item.source_ids == ["c1", "c2", "c3"]
    assert item.restricted is True
    assert item.content_hash == ids.content_hash("Likes tea")
    assert item.capture_device_ids == ["ios_00000001"]  # only active evidence counts
    assert item.primary_capture_device == "ios_00000001"
    assert item.pending_route is True


def _evidence(source: str, *, device: str | None = None, active: bool = True) -> Evidence:
    return Evidence(evidence_id=f"ev_{source}", source_id=source, client_device_id=device,
                    quote_refs=[QuoteRef(segment_id="s0", quote="q")], status="active" if active else "tombstoned")


def _item(memory_id: str, *, canonical: str | None = None, updated: int = 0, **kw: object) -> MemoryItem:
    return MemoryItem(id=memory_id, uid="u", content=f"fact {memory_id}", processing_state="processed",
                      canonical_memory_id=canonical, updated_at=NOW + timedelta(minutes=updated), **kw)


# ------------------------------------------------------------------------------- lineage collapse
def test_lineage_collapse_keeps_one_row_per_lineage_preferring_the_survivor() -> None:
    rows = [_item("alias1", canonical="root", updated=5), _item("root", updated=1),
            _item("alias2", canonical="root", updated=9), _item("solo", updated=3)]
    out = collapse_lineage(rows)
    assert [i.id for i in out] == ["root", "solo"]


def test_lineage_collapse_without_survivor_keeps_most_recent_member() -> None:
    rows = [_item("a", canonical="gone", updated=1), _item("b", canonical="gone", updated=7),
            _item("c", canonical="gone", updated=3)]
    assert [i.id for i in collapse_lineage(rows)] == ["b"]
    assert collapse_lineage([]) == []


def test_lineage_collapse_is_idempotent_and_order_stable() -> None:
    rows = [_item(f"m{n}", canonical=("m0" if n % 3 == 0 else None), updated=n) for n in range(10)]
    once = collapse_lineage(rows)
    assert collapse_lineage(once) == once
    assert len({i.canonical_memory_id or i.id for i in once}) == len(once)


# ------------------------------------------------------------------------------------ TTL reporting
def test_expired_unrouted_short_term_stays_visible_and_says_expired() -> None:
    item = _item("m", expires_at=NOW - timedelta(seconds=1)).settle()
    assert item.read_class == "default"
    assert is_default_visible(item)
    assert expired(item, NOW) is True
    public = to_public(item, NOW)
    assert public["expired"] is True
    assert public["expires_at"] == item.expires_at.isoformat()


def test_not_expired_cases() -> None:
    assert expired(_item("m", expires_at=NOW + timedelta(days=1)).settle(), NOW) is False
    assert expired(_item("m", expires_at=None).settle(), NOW) is False
    routed = _item("m", expires_at=NOW - timedelta(days=1), route="review").settle()
    assert expired(routed, NOW) is False
    long_term = _item("m", layer="long_term", expires_at=NOW - timedelta(days=1)).settle()
    assert long_term.expires_at is None  # settle clears the deadline outside Short-term
    assert expired(long_term, NOW) is False
    assert to_public(long_term, NOW)["expired"] is False


def test_to_public_hides_internal_axes() -> None:
    item = _item("m", category="hobbies", sensitivity_labels=["health"]).settle()
    public = to_public(item, NOW)
    for internal in ("processing_state", "status", "ledger_commit_id", "ledger_sequence", "promotion",
                     "read_class", "uid", "sensitivity_labels"):
        assert internal not in public
    assert public["category"] == "system"
    assert public["restricted"] is True


# ---------------------------------------------------------------------------------- deterministic ids
def test_ids_are_deterministic_and_prefixed() -> None:
    assert ids.extracted_memory_id("u", "c", "Likes tea") == ids.extracted_memory_id("u", "c", " Likes  tea ")
    assert ids.extracted_memory_id("u", "c", "Likes tea").startswith("mem_")
    assert ids.extracted_memory_id("u", "c", "Likes tea") != ids.extracted_memory_id("u2", "c", "Likes tea")
    assert ids.extracted_memory_id("u", "c", "x", "Tom") != ids.extracted_memory_id("u", "c", "x")
    assert ids.explicit_memory_id("u", "A b") == ids.explicit_memory_id("u", "a  B")
    assert ids.operation_id("u", "k", {"a": 1, "b": 2}) == ids.operation_id("u", "k", {"b": 2, "a": 1})
    assert ids.operation_id("u", "k", 1).startswith("op_")
    assert ids.commit_id("u", 1, "op") != ids.commit_id("u", 2, "op")
    assert ids.contract_hash("n", {"x": 1}) != ids.contract_hash("m", {"x": 1})


def test_device_id_is_never_an_evidence_id_input() -> None:
    import inspect

    params = inspect.signature(ids.evidence_id).parameters
    assert not any("device" in name for name in params)
    args = ("c1", "conversation", "transcription", "rules", "1", [["s1", "quote"]])
    assert ids.evidence_id(*args) == ids.evidence_id(*args)
    # The same quote captured from two devices yields the same evidence id in capture.
    from core.adapters.rules import sensitivity
    from core.domain.extraction import Candidate, ExtractionResult, GroundedCandidate
    from core.domain.records import QuoteRef as XRef
    from core.services.capture import _candidate_item

    candidate = Candidate("User likes tea", "preference", "lifestyle", "user", None, ("I like tea",))
    grounded = GroundedCandidate(candidate, (XRef(segment_id="s1", quote="I like tea"),), "user")
    result = ExtractionResult((candidate,), (), (), "rules", "1")
    one = _candidate_item("u", "c1", grounded, result, "transcription", "ios_00000001", NOW, 30, sensitivity=sensitivity)
    two = _candidate_item("u", "c1", grounded, result, "transcription", "android_00000002", NOW, 30, sensitivity=sensitivity)
    none = _candidate_item("u", "c1", grounded, result, "transcription", None, NOW, 30, sensitivity=sensitivity)
    assert one.evidence[0].evidence_id == two.evidence[0].evidence_id == none.evidence[0].evidence_id
    assert one.id == two.id == none.id
    assert one.evidence[0].client_device_id == "ios_00000001"


def test_provider_ids_are_user_scoped_and_opaque() -> None:
    a, b = ids.provider_id("alice", "mem_1"), ids.provider_id("bob", "mem_1")
    assert a.startswith("memproj:") and b.startswith("memproj:")
    assert a != b
    assert a != "mem_1" and a != "memproj:mem_1"
    assert a != "alice-mem_1" and "alice" not in a and "mem_1" not in a
    assert a.removeprefix("memproj:") != "alice-mem_1"
    assert ids.provider_id("alice", "mem_1") == a
    assert ids.provider_id("alice", "mem_2") != a
    # No collision by concatenation ambiguity.
    assert ids.provider_id("a-b", "c") != ids.provider_id("a", "b-c")


# ------------------------------------------------------------------------------------- categories
@pytest.mark.parametrize(("raw", "primary"), [
    # Expected values from docs/data-model.md (the tests' reference model), not the code's own map.
    *[(c, c) for c in spec_model.PRIMARY_CATEGORIES], *spec_model.LEGACY_TO_PRIMARY.items(),
    ("Hobbies", "system"), (" work ", "system"), ("learnings", "interesting"), ("", "interesting"),
    (None, "interesting"), ("something-new", "interesting"),
])
def test_primary_category_mapping(raw: str | None, primary: str) -> None:
    assert primary_category(raw) == primary == spec_model.primary_category(raw)
    assert set(PRIMARY_CATEGORIES) == set(spec_model.PRIMARY_CATEGORIES)  # regression pin


# ----------------------------------------------------------------------------- admission receipts
def _admitted(**kw: object) -> tuple[MemoryItem, dict]:
    item = MemoryItem(id="mem_a", uid="u", content="User likes tea", processing_state="processed",
                      evidence=[_evidence("c1")], **kw)
    assertion = admit(item, revision=3, commit_id="mc_1", now=NOW, planner="test")
    item.ledger_commit_id, item.ledger_sequence = "mc_1", 3
    item.settle()
    return item, assertion


def test_receipt_is_valid_right_after_admit() -> None:
    item, assertion = _admitted()
    assert item.layer == "long_term" and item.status == "active" and item.revision == 3
    assert receipt_problems(item, assertion) == []


@pytest.mark.parametrize("change", ["content", "evidence", "revision", "supersedes", "plan", "receipt_id"])
def test_receipt_goes_stale_when_what_it_binds_changes(change: str) -> None:
    item, assertion = _admitted()
    if change == "content":
        item.content = "User likes coffee"
    elif change == "evidence":
        item.evidence.append(_evidence("c2"))
    elif change == "revision":
        item.revision += 1
    elif change == "supersedes":
        item.supersedes = ["mem_old"]
    elif change == "plan":
        item.promotion["graph_plan"] = dict(item.promotion["graph_plan"], predicate="hates")
    else:
        item.promotion["admission_receipt"]["receipt_id"] = "padm_forged"
    assert receipt_problems(item, assertion) != []


def test_receipt_needs_assertion_and_ledger_fields() -> None:
    item, assertion = _admitted()
    assert "missing graph assertion" in receipt_problems(item, None)
    assert receipt_problems(item, dict(assertion, revision=99))
    assert receipt_problems(item, dict(assertion, status="retracted"))
    item.ledger_commit_id = None
    assert "missing ledger commit" in receipt_problems(item, assertion)
    bare = MemoryItem(id="m", uid="u", content="x", layer="long_term", processing_state="processed")
    assert receipt_problems(bare, None) == ["missing admission receipt or graph plan"]


def test_receipt_checks_do_not_apply_outside_active_long_term() -> None:
    short = MemoryItem(id="m", uid="u", content="x", processing_state="processed")
    assert receipt_problems(short, None) == []
    gone = MemoryItem(id="m", uid="u", content="", layer="long_term", status="tombstoned",
                      processing_state="processed")
    assert receipt_problems(gone, None) == []
    legacy = MemoryItem(id="m", uid="u", content="x", layer="long_term", processing_state="processed",
                        grandfathered_long_term=True)
    assert receipt_problems(legacy, None) == []


def test_admission_refuses_self_supersede_and_unprocessed() -> None:
    item = MemoryItem(id="mem_a", uid="u", content="x", processing_state="processed", supersedes=["mem_a"])
    with pytest.raises(ValueError, match="supersede itself"):
        admit(item, revision=1, commit_id="mc", now=NOW, planner="test")
    pending = MemoryItem(id="mem_b", uid="u", content="x", processing_state="pending")
    with pytest.raises(ValueError):
        admit(pending, revision=1, commit_id="mc", now=NOW, planner="test")
    item, assertion = _admitted()
    item.supersedes = [item.id]
    assert "item supersedes itself" in receipt_problems(item, assertion)


def test_third_party_plan_keeps_its_subject() -> None:
    item = MemoryItem(id="mem_t", uid="u", content="Tom is allergic to peanuts", processing_state="processed",
                      subject_attribution="third_party", subject_label="Tom", evidence=[_evidence("c1")])
    assertion = admit(item, revision=1, commit_id="mc", now=NOW, planner="test")
    assert assertion["subject"] == "Tom"
    assert assertion["subject_entity_id"] != "user"

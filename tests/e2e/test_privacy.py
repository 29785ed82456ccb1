"""Issue 27's privacy points on the whole local stack: settled review rows keep no text, restricted
historical rows stay out of the indexes, and the knowledge-graph page is checked against canonical
state before it is served.

The expectations are the spec's: resolution "redacts the queue row" (delete / privacy matrix);
"restricted items are delete-only: their content never reaches keyword, compatibility, embedding, or
vector providers" (boundary rules, whatever the item's origin); graph assertions are the
derived-state authority, the shared nodes and edges only a projection of them. After each sequence
that ends in a delete the words are byte-scanned for in every document of the user (review rows
included), both indexes, the graph page the API serves and the export.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from core.bootstrap import Context
from core.domain import fence, ids
from core.domain.extraction import Candidate, ExtractionResult
from core.errors import GenerationChanged
from core.services import capture, consolidation, conversations, doctor, edits, rebuild
from tests.e2e.test_lifecycle_deletes import (
    MARATHON,
    USER_LINES,
    User,
    assert_words_gone,
    conversation,
    new_user,
    user_with_a_fact_in_review,
)
from tests.support import trace
from tests.support.firestore_checks import all_docs, assert_ledger_gapless, user_documents

pytestmark = pytest.mark.e2e

CORRECTION = "User is training for the Porto half marathon in November"


def _rows(user: User) -> dict[str, dict[str, Any]]:
    return all_docs(user.ctx, user.uid, "memory_review_queue")


# ------------------------------------------------------- 1. settled review rows keep no text
def test_a_corrected_review_keeps_no_original_text_after_its_conversation_is_deleted(stack: dict[str, Any]) -> None:
    user, entry = user_with_a_fact_in_review(stack)
    resolved = user.call("POST", f"/v3/memories/review-queue/{entry['review_id']}/resolve",
                         json={"decision": "correct", "correction": CORRECTION})
    assert resolved.status_code == 200, resolved.text
    # The resolution redacts the queue row: the decision stays, the text goes.
    row = next(r for r in _rows(user).values() if r["review_id"] == entry["review_id"])
    assert (row["status"], row["decision"], row["content"], row["conflicting"]) == ("resolved", "correct", "", [])

    response = user.call("DELETE", "/v1/conversations/cc")
    assert response.status_code == 200, response.text
    # The correction is the user's own statement: the memory stands with the corrected words only.
    listed = user.call("GET", "/v1/memories", params={"limit": 100}).json()["memories"]
    assert [m["content"] for m in listed if m["id"] == entry["memory_id"]] == [CORRECTION]
    assert_ledger_gapless(user.ctx, user.uid)
    assert_words_gone(user, "Lisbon half marathon")
    assert_words_gone(user, "Porto in May")  # the other fact of the deleted conversation


def test_a_cascade_clears_text_a_settled_review_row_still_holds(stack: dict[str, Any]) -> None:
    """A row settled before settling cleared its text (stored data of an earlier build) loses it
    when the conversation it came from is deleted, whatever became of its memory."""
    user, entry = user_with_a_fact_in_review(stack)
    resolved = user.call("POST", f"/v3/memories/review-queue/{entry['review_id']}/resolve",
                         json={"decision": "correct", "correction": CORRECTION})
    assert resolved.status_code == 200, resolved.text
    doc_id, row = next((k, r) for k, r in _rows(user).items() if r["review_id"] == entry["review_id"])
    user.ctx.paths.doc(user.uid, "memory_review_queue", doc_id).update({"content": MARATHON})  # the old shape
    response = user.call("DELETE", "/v1/conversations/cc")
    assert response.status_code == 200, response.text
    assert _rows(user)[doc_id]["decision"] == "correct"
    assert_words_gone(user, "Lisbon half marathon")


def test_an_expired_review_keeps_the_decision_not_the_text(stack: dict[str, Any]) -> None:
    user, entry = user_with_a_fact_in_review(stack)
    later = datetime.now(UTC) + timedelta(hours=73)  # past the 72 h a review waits for an answer
    assert consolidation.expire_reviews(Context(clock=lambda: later), user.uid) == 1
    row = next(r for r in _rows(user).values() if r["review_id"] == entry["review_id"])
    assert (row["status"], row["content"], row["conflicting"]) == ("expired", "", [])
    assert user.items()[entry["memory_id"]].layer == "archive"
    response = user.call("DELETE", "/v1/conversations/cc")
    assert response.status_code == 200, response.text
    assert_words_gone(user, "Lisbon half marathon")


# ----------------------------------------- 2. restricted historical rows never reach an index
HEALTH = "My doctor put me on insulin for diabetes last spring"
FINANCE = "I still owe 4,000 euros on the car loan from my bank"


def _legacy_row(user: User, memory_id: str, content: str, **extra: Any) -> None:
    now = datetime.now(UTC)
    user.ctx.paths.doc(user.uid, "memories", memory_id).set(
        {"id": memory_id, "uid": user.uid, "content": content, "category": "core", "visibility": "public",
         "created_at": now - timedelta(days=400), "updated_at": now - timedelta(days=400), **extra})


@pytest.mark.parametrize("edit", ["visibility", "category", "review"])
def test_editing_a_restricted_historical_row_projects_nothing(stack: dict[str, Any], edit: str) -> None:
    user = new_user(stack)
    _legacy_row(user, "legacy-health", HEALTH)
    _legacy_row(user, "legacy-money", FINANCE)
    _legacy_row(user, "legacy-plain", "I grew up near the sea in Galway")
    for memory_id in ("legacy-health", "legacy-money", "legacy-plain"):
        if edit == "visibility":
            response = user.call("PATCH", f"/v3/memories/{memory_id}/visibility", params={"value": "private"})
            assert response.status_code == 200, response.text
        elif edit == "review":
            response = user.call("POST", f"/v3/memories/{memory_id}/review", params={"value": "true"})
            assert response.status_code == 200, response.text
        else:
            edits.set_category(user.ctx, user.uid, memory_id, "lifestyle")
    items = user.items()
    assert set(items) == {"legacy-health", "legacy-money", "legacy-plain"}  # each materialised by its edit
    trace.converge(user.ctx, user.uid)
    keyword, vector = trace.provider_sets(user.ctx, user.uid)
    plain = ids.provider_id(user.uid, "legacy-plain")
    # The unrestricted row is projected like any Long-term memory; the restricted ones are delete-only.
    assert keyword == vector == {plain}, (keyword, vector)
    for words in ("insulin", "diabetes", "car loan", "4,000 euros"):
        assert not [d for d in trace.typesense_docs(user.ctx, user.uid) if words in str(d).casefold()]
    for memory_id in ("legacy-health", "legacy-money"):
        shown = user.call("GET", f"/v1/memories/{memory_id}")
        assert shown.status_code == 200 and shown.json()["restricted"] is True, shown.text
    # Reading them (list, export) before any edit labels them too, and writes nothing.
    fresh = new_user(stack)
    _legacy_row(fresh, "legacy-health", HEALTH)
    listed = fresh.call("GET", "/v1/memories", params={"limit": 10}).json()["memories"]
    assert [(m["id"], m["restricted"]) for m in listed] == [("legacy-health", True)]
    assert not fresh.items()


# ------------------------------------------------- 3. the graph page is canonical, not the projection
def _graph_docs(user: User) -> dict[str, dict[str, dict[str, Any]]]:
    return {name: all_docs(user.ctx, user.uid, name) for name in ("knowledge_nodes", "knowledge_edges")}


def test_the_graph_page_never_serves_a_deleted_fact_the_projection_still_holds(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    trace.capture_now(user.ctx, user.uid, "ca", conversation("ca", USER_LINES))
    assert consolidation.run_pass(user.ctx, user.uid)["routes"].get("promote") == 4
    trace.converge(user.ctx, user.uid)
    before = user.call("GET", "/v1/knowledge-graph", params={"limit": 2000}).json()
    assert "lisbon" in str(before).casefold() and before["truncated"] is False
    stale = _graph_docs(user)
    lisbon = user.one("User moved to Lisbon in March", "long_term")
    response = user.call("DELETE", f"/v3/memories/{lisbon}")
    assert response.status_code == 200, response.text
    trace.converge(user.ctx, user.uid)
    # The projection lags the delete (its event still waits, or was dead-lettered): put the rows the
    # graph held before the delete back, as a delete event that never ran leaves them.
    for name, docs in stale.items():
        for doc_id, data in docs.items():
            user.ctx.paths.doc(user.uid, name, doc_id).set(data)
    page = user.call("GET", "/v1/knowledge-graph", params={"limit": 2000}).json()
    assert "lisbon" not in str(page).casefold(), page
    assert all(lisbon not in edge["memory_ids"] for edge in page["edges"])
    # The facts that stand are served as before, and the page is still referentially closed.
    kept = [e for e in before["edges"] if lisbon not in e["memory_ids"]]
    assert sorted(e["id"] for e in page["edges"]) == sorted(e["id"] for e in kept)
    present = {n["id"] for n in page["nodes"]}
    assert all(e["source"] in present and e["target"] in present for e in page["edges"])
    assert {n["id"] for n in page["nodes"]} == {end for e in kept for end in (e["source"], e["target"])}
    assert_words_gone(user, "Lisbon in March", allowed=("conversations", "knowledge_nodes", "knowledge_edges"))


# ------------------------------------------------------------- 16. secrets are grounded, then dropped
SECRET_LINE = "My wifi password is hunter22abc."
LISBON = "User moved to Lisbon in March"


class ScriptedExtractor:
    """The extractor port answering fixed candidates (what a model-backed extractor may return)."""

    extractor_id, extractor_version = "scripted", "1"

    def __init__(self, *candidates: Candidate) -> None:
        self.candidates = candidates

    def extract(self, source: Any) -> ExtractionResult:
        return ExtractionResult(memories=self.candidates, action_items=(), goals=(),
                                extractor_id=self.extractor_id, extractor_version=self.extractor_version)


def _secret(quote: str) -> Candidate:
    return Candidate(content="User's wifi password is hunter22abc", kind="fact", category="core", subject="user",
                     subject_label=None, quotes=(quote,))


def _recapture(user: User, doc: dict[str, Any], token: str, *candidates: Candidate) -> Any:
    scripted = Context(extractor=ScriptedExtractor(*candidates))
    return capture.capture_conversation(scripted, user.uid, "c1", {**doc, "reprocess_token": token})


@pytest.mark.parametrize("quote", [SECRET_LINE, "My wifi password is hunter22abc, the new one."])
def test_an_extraction_of_nothing_but_secrets_retracts_nothing(stack: dict[str, Any], quote: str) -> None:
    """Grounded or not, a secret-only extraction is not the genuinely empty result that retracts a
    source (spec: extraction failure preserves prior source state; an ungrounded candidate fails the
    replacement): the conversation's memories stay and the secret is stored nowhere."""
    user = new_user(stack)
    doc = {k: v for k, v in conversation("c1", [USER_LINES[0], SECRET_LINE]).items() if k != "id"}
    trace.capture_now(user.ctx, user.uid, "c1", doc)
    lisbon = user.one(LISBON)
    result = _recapture(user, doc, "t1", _secret(quote))
    assert result.retracted == 0 and result.created == 0, result
    item = user.items()[lisbon]
    assert (item.status, item.content) == ("active", LISBON)
    assert_words_gone(user, "hunter22abc", allowed=("conversations",))
    # A genuinely empty extraction of the same transcript is authoritative (Q7): a full retract.
    empty = _recapture(user, doc, "t2")
    assert empty.retracted == 1, empty
    assert user.items()[lisbon].status == "tombstoned"


def test_secret_candidates_beside_clean_ones_are_dropped_and_the_rest_replaces(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    doc = {k: v for k, v in conversation("c1", [USER_LINES[0], SECRET_LINE, USER_LINES[1]]).items() if k != "id"}
    trace.capture_now(user.ctx, user.uid, "c1", doc)
    prior = {m.id for m in user.items().values() if m.status == "active"}
    meat = Candidate(content="User stopped eating meat", kind="fact", category="habits", subject="user",
                     subject_label=None, quotes=("I stopped eating meat about two years ago.",))
    result = _recapture(user, doc, "t1", _secret(SECRET_LINE), meat)
    # The replacement is the clean candidate: every earlier fact of the source is retracted.
    assert (result.created, result.retracted) == (1, len(prior)), result
    assert all(user.items()[mid].status == "tombstoned" for mid in prior)
    assert [m.content for m in user.items().values() if m.status == "active"] == ["User stopped eating meat"]
    assert_words_gone(user, "hunter22abc", allowed=("conversations",))


# ------------------------------------------------- 16. writes outside the apply obey the account fence
def _wipe_happened(user: User) -> None:
    """What an account wipe leaves on the record the fence reads: the generation moved on."""
    user.ctx.paths.account_deletion(user.uid).set({"generation": 1, "state": "completed"})


def _documents(user: User) -> set[str]:
    return set(user_documents(user.ctx, user.uid))


def test_conversation_create_and_a_cascade_false_delete_are_fenced(stack: dict[str, Any]) -> None:
    """A request that began before a wipe writes nothing after it (the api wraps every write in the
    generation it read first, as this test does)."""
    user = new_user(stack)
    conversations.create(user.ctx, user.uid, {"id": "kept", **conversation("kept", [USER_LINES[0]])}, None, None)
    with fence.expect(user.uid, 0):
        _wipe_happened(user)
        with pytest.raises(GenerationChanged):
            conversations.create(user.ctx, user.uid, {"id": "late", **conversation("late", [USER_LINES[1]])},
                                 None, None)
        with pytest.raises(GenerationChanged):
            conversations.delete(user.ctx, user.uid, "kept", cascade=False)
    left = user_documents(user.ctx, user.uid)
    assert "conversations/late" not in left, sorted(left)
    # No cascade=false marker (the trigger's capture of "kept" may have written its own marker).
    assert (left.get("capture_runs/kept") or {}).get("cascade") is not False, left.get("capture_runs/kept")
    assert "conversations/kept" in left  # refused whole: the document is not deleted either


def test_rebuild_and_doctor_repairs_stop_when_the_account_generation_moves(
        stack: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    user = new_user(stack)
    trace.capture_now(user.ctx, user.uid, "ca", conversation("ca", USER_LINES))
    trace.converge(user.ctx, user.uid)
    rebuilt = rebuild.RebuildReport("typesense")
    outbox_before = {p for p in _documents(user) if p.startswith("memory_outbox/")}

    pages: list[int] = []

    def wipe_after_first_page(count: int) -> None:
        pages.append(count)
        _wipe_happened(user)

    rebuild.rebuild_user(user.ctx, user.uid, "typesense", "run-27", rebuilt, page=1, after_page=wipe_after_first_page)
    assert rebuilt.skipped_users == 1 and len(pages) == 1, (rebuilt, pages)
    events = {p for p in _documents(user) if p.startswith("memory_outbox/")} - outbox_before
    assert len(events) == 1 + pages[0], sorted(events)  # the purge and the first page's; nothing after the wipe
    state = user.ctx.paths.doc(user.uid, "memory_state", "rebuild_typesense").get().to_dict() or {}
    assert not state.get("done"), state

    fresh = new_user(stack)
    finding = doctor.Drift("typesense", "missing", fresh.uid, "mem_x", "memproj:x", "test")
    real = doctor._enqueue_repairs

    def wiped_first(*args: Any, **kwargs: Any) -> None:
        _wipe_happened(fresh)
        real(*args, **kwargs)

    monkeypatch.setattr(doctor, "_enqueue_repairs", wiped_first)
    report = doctor.repair(fresh.ctx, doctor.DoctorReport(findings=[finding]))
    assert report.skipped_repairs == [fresh.uid] and report.repairs == 0, report
    assert not _documents(fresh)


# ------------------------------------------------------------- 16. the frozen plugins_results mirror
def test_a_conversation_created_through_the_api_carries_the_plugins_results_mirror(stack: dict[str, Any]) -> None:
    """Spec, frozen legacy names: ``plugins_results`` is mirrored from ``apps_results`` for old clients."""
    user = new_user(stack)
    body = {"id": "apps", **conversation("apps", [USER_LINES[0]]),
            "apps_results": [{"app_id": "summariser", "content": "A move to Lisbon."}]}
    response = user.call("POST", "/v1/conversations", json=body)
    assert response.status_code == 201, response.text
    stored = user.ctx.paths.doc(user.uid, "conversations", "apps").get().to_dict() or {}
    assert stored["apps_results"] == [{"app_id": "summariser", "content": "A move to Lisbon."}]
    assert stored["plugins_results"] == [{"plugin_id": "summariser", "content": "A move to Lisbon."}]
    old = {"id": "old", **conversation("old", [USER_LINES[1]]),
           "plugins_results": [{"plugin_id": "notes", "content": "No meat."}]}
    response = user.call("POST", "/v1/conversations", json=old)
    assert response.status_code == 201, response.text
    stored = user.ctx.paths.doc(user.uid, "conversations", "old").get().to_dict() or {}
    assert stored["apps_results"] == [{"app_id": "notes", "content": "No meat."}]
    assert stored["plugins_results"] == [{"plugin_id": "notes", "content": "No meat."}]


# ------------------------------------------- 16. the original's {uid}-{id} vectors, in its own namespace
def _legacy_vectors(user: User, records: dict[str, dict[str, Any]]) -> None:
    host = user.ctx.settings.pinecone_host.rstrip("/")
    values = user.ctx.embedder.embed(["an old vector"])[0]
    response = httpx.post(f"{host}/vectors/upsert", headers={"Api-Key": "local"}, timeout=30, json={
        "namespace": LEGACY_NAMESPACE,
        "vectors": [{"id": vid, "values": values, **({"metadata": meta} if meta else {})}
                    for vid, meta in records.items()]})
    assert response.status_code == 200, response.text


def _legacy_ids(user: User, vector_ids: list[str]) -> set[str]:
    host = user.ctx.settings.pinecone_host.rstrip("/")
    response = httpx.get(f"{host}/vectors/fetch", headers={"Api-Key": "local"}, timeout=30,
                         params=[("namespace", LEGACY_NAMESPACE)] + [("ids", v) for v in vector_ids])
    response.raise_for_status()
    return set(response.json().get("vectors") or {})


LEGACY_NAMESPACE = "ns2"  # the original's namespace (the delete / privacy matrix's "Pinecone ns2")


def test_deletes_and_the_wipe_clear_the_original_vectors_in_its_namespace(stack: dict[str, Any]) -> None:
    """The matrix: a legacy row's ``{uid}-{id}`` vector is deleted with the row and purged with the
    account, whatever namespace this deployment writes to (here the stack's own, not ``ns2``)."""
    assert Context().settings.pinecone_namespace != LEGACY_NAMESPACE
    user, other = new_user(stack), new_user(stack)
    for owner in (user, other):
        _legacy_row(owner, "leg-bees", "I keep bees on the roof")
        _legacy_row(owner, "leg-kayak", "I paddle a sea kayak on Sundays")
    mine = {f"{user.uid}-leg-bees": {"uid": user.uid, "memory_id": "leg-bees"},
            f"{user.uid}-leg-kayak": None,  # an old vector without metadata: found by its id
            f"{user.uid}-leg-other": {"uid": user.uid, "memory_id": "leg-other"}}
    theirs = {f"{other.uid}-leg-bees": {"uid": other.uid, "memory_id": "leg-bees"}}
    _legacy_vectors(user, {**mine, **theirs})
    for memory_id in ("leg-bees", "leg-kayak"):
        response = user.call("DELETE", f"/v3/memories/{memory_id}")
        assert response.status_code == 200, response.text
    trace.converge(user.ctx, user.uid)
    assert _legacy_ids(user, [*mine, *theirs]) == {f"{user.uid}-leg-other", *theirs}
    # A rebuild's purge is this deployment's projection only: the original's reader keeps its vectors
    # of rows that still exist (the rollback floor).
    user.ctx.vector_index.purge_user(user.uid)
    assert _legacy_ids(user, [*mine, *theirs]) == {f"{user.uid}-leg-other", *theirs}
    # The account wipe purges what is left of the user's there; the other user's stays.
    for _ in range(20):
        wiped = user.call("DELETE", "/v1/users/delete-account")
        if wiped.status_code == 200 and wiped.json().get("state") == "completed":
            break
        assert wiped.status_code == 503, wiped.text  # a drain still holds a lease: call again
        time.sleep(0.5)
    else:
        raise AssertionError("the account wipe never completed")
    assert _legacy_ids(user, [*mine, *theirs]) == set(theirs)

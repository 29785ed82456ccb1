"""Issue 20 (items 1, 2, 4 and 6) on the whole local stack: deletes hold across sequences of user
actions, every status is scrubbed, and a conversation with any number of derived items can be
reprocessed and deleted.

After each sequence that ends in a delete, the deleted words are searched for as bytes in every
document under ``users/{uid}`` (recursively), the user's Typesense documents and Pinecone vectors
(read straight from the servers), the knowledge graph page and ``GET /v1/memories/export``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.domain.documents import conversation_revision
from core.domain.plan import ApplyView, Plan
from core.domain.records import Evidence, MemoryItem, QuoteRef
from core.domain.states import Layer, ProcessingState, Status
from core.errors import RetryableError
from core.services import capture, consolidation, conversations, deletion
from tests.support import scale, trace
from tests.support.firestore_checks import assert_ledger_gapless, canonical_snapshot, user_documents, wait_for

pytestmark = pytest.mark.e2e

LISBON = "User moved to Lisbon in March"
COFFEE = "User is cutting down on coffee"
MARATHON = "User is training for the Lisbon half marathon in October"
USER_LINES = ["By the way I moved to Lisbon in March.", "I stopped eating meat about two years ago.",
              "The doctor said my blood pressure is a bit high, so I'm cutting down on coffee."]
OTHER_LINE = "Sounds good, see you at the weekend then."
LATER_LINES = ["Actually I moved to Porto in May.", "Also I'm training for the Lisbon half marathon in October."]


@dataclass
class User:
    uid: str
    ctx: Context
    stack: dict[str, Any]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {emulator_token(self.uid, 'demo-strata')}"}

    def call(self, method: str, path: str, *, headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.stack["api_url"] + path, headers={**self.headers, **(headers or {})},
                             timeout=120, **kwargs)

    def items(self) -> dict[str, MemoryItem]:
        return trace.items(self.ctx, self.uid)

    def one(self, content: str, layer: str | None = None) -> str:
        found = [m for m in self.items().values() if m.content == content and (layer is None or m.layer == layer)]
        assert len(found) == 1, (content, layer, found)
        return found[0].id


def new_user(stack: dict[str, Any]) -> User:
    return User(f"u-life-{uuid.uuid4().hex[:10]}", Context(), stack)


def conversation(conversation_id: str, user_lines: list[str], other: str | None = None) -> dict[str, Any]:
    doc = trace.conversation_doc(conversation_id, user_lines)
    if other is not None:
        n = len(doc["transcript_segments"])
        doc["transcript_segments"].append({"id": f"{conversation_id}-s{n}", "text": other, "speaker": "SPEAKER_01",
                                           "speaker_id": 1, "is_user": False, "start": n * 5.0, "end": n * 5.0 + 4})
    return doc


# ------------------------------------------------------------------------------ the byte scan
# The export's line kinds (docs/data-model.md: JSON lines of everything the user owns) and the collections they
# come from, for the upstream collections a test may allow to keep the words.
EXPORT_KIND_COLLECTION = {"conversation": "conversations", "goal": "goals", "action_item": "action_items"}


def assert_words_gone(user: User, words: str, *, allowed: tuple[str, ...] = ()) -> None:
    """``words`` (case-insensitive) occur in no document of the user (except the first-segment
    collections in ``allowed``, e.g. the upstream ``conversations``; review rows included), no
    Typesense document, no Pinecone vector record, the knowledge-graph page or the review queue the
    API serves, and no export line."""
    trace.converge(user.ctx, user.uid)
    needle = words.casefold()
    hits: list[str] = []
    for path, data in user_documents(user.ctx, user.uid).items():
        if path.split("/", 1)[0] in allowed:
            continue
        if needle in json.dumps(data, default=str, ensure_ascii=False).casefold():
            hits.append(f"firestore {path}")
    for doc in trace.typesense_docs(user.ctx, user.uid):
        if needle in json.dumps(doc, ensure_ascii=False).casefold():
            hits.append(f"typesense {doc.get('id')}")
    for vid, record in trace.pinecone_vectors(user.ctx, user.uid).items():
        if needle in json.dumps(record, ensure_ascii=False).casefold():
            hits.append(f"pinecone {vid}")
    graph = user.call("GET", "/v1/knowledge-graph", params={"limit": 2000})
    assert graph.status_code == 200, graph.text
    if needle in graph.text.casefold():
        hits.append("knowledge graph page")
    queue = user.call("GET", "/v3/memories/review-queue", params={"limit": 500})
    assert queue.status_code == 200, queue.text
    if needle in queue.text.casefold():
        hits.append("review queue page")
    export = user.call("GET", "/v1/memories/export")
    assert export.status_code == 200, export.text
    for line in export.text.splitlines():
        if needle in line.casefold():
            row = json.loads(line)
            if EXPORT_KIND_COLLECTION.get(row["kind"], row["kind"]) not in allowed:
                hits.append(f"export {row['kind']}/{row.get('id')}")
    assert not hits, f"{words!r} survives the delete in: {hits}"


def _trigger_captured(user: User, conversation_id: str, doc: dict[str, Any]) -> bool:
    snap = user.ctx.paths.doc(user.uid, "capture_runs", conversation_id).get()
    return snap.exists and (snap.to_dict() or {}).get("revision") == conversation_revision(doc)


# ------------------------------------------------------------------ 1. a user's delete holds
def test_deleted_fact_stays_deleted_through_edit_reprocess_and_redelivery(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    original = conversation("c1", USER_LINES, OTHER_LINE)
    trace.capture_now(user.ctx, user.uid, "c1", original)
    coffee = user.one(COFFEE)
    response = user.call("DELETE", f"/v3/memories/{coffee}")
    assert response.status_code == 200, response.text
    assert response.json()["deleted"] == [coffee]

    # Another speaker's line is edited (the owner's facts are unchanged): the trigger recaptures.
    edited = conversation("c1", USER_LINES, "Sounds great, see you on Sunday then.")
    user.ctx.paths.doc(user.uid, "conversations", "c1").set(edited)
    wait_for(lambda: _trigger_captured(user, "c1", edited), timeout=60, what="the trigger to capture the edit")
    item = user.items()[coffee]
    assert item.record_status == Status.TOMBSTONED and not item.content, item

    # A plain reprocess: nothing new, the deleted fact stays deleted.
    response = user.call("POST", "/v1/conversations/c1/reprocess")
    assert response.status_code == 200, response.text
    assert response.json()["created"] == 0, response.json()
    # A late redelivery of the original event (its payload comes with the event).
    capture.capture_conversation(user.ctx, user.uid, "c1", {k: v for k, v in original.items() if k != "id"})
    items = user.items()
    assert items[coffee].record_status == Status.TOMBSTONED and not items[coffee].content
    assert not [m for m in items.values() if m.content == COFFEE], "the deleted fact came back under another id"

    # A second delete of the deleted memory: 404, nothing written.
    trace.converge(user.ctx, user.uid)
    before = canonical_snapshot(user.ctx, user.uid)
    again = user.call("DELETE", f"/v3/memories/{coffee}")
    assert again.status_code == 404, again.text
    assert canonical_snapshot(user.ctx, user.uid) == before
    assert_ledger_gapless(user.ctx, user.uid)
    assert_words_gone(user, "cutting down on coffee", allowed=("conversations",))

    # A genuinely new statement (another conversation) makes a new memory.
    trace.capture_now(user.ctx, user.uid, "c2", conversation("c2", [USER_LINES[2]]))
    fresh = [m for m in user.items().values() if m.content == COFFEE and m.status == Status.ACTIVE]
    assert len(fresh) == 1 and fresh[0].id != coffee


def test_reverting_a_transcript_edit_captures_again_instead_of_replaying(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    a, b = conversation("c1", USER_LINES), conversation("c1", USER_LINES[1:])
    # In-process captures without writing the document: no trigger capture interleaves.
    trace.capture_now(user.ctx, user.uid, "c1", a, write_doc=False)
    lisbon = user.one(LISBON)
    assert trace.capture_now(user.ctx, user.uid, "c1", b, write_doc=False).retracted == 1
    assert user.items()[lisbon].record_status == Status.TOMBSTONED
    back = trace.capture_now(user.ctx, user.uid, "c1", a, write_doc=False)
    assert back.created == 1, back
    item = user.items()[lisbon]
    assert item.status == Status.ACTIVE and item.content == LISBON
    # And the edit once more (A → B → A → B): a new capture of B, not a replay of the first one.
    trace.capture_now(user.ctx, user.uid, "c1", b, write_doc=False)
    item = user.items()[lisbon]
    assert item.record_status == Status.TOMBSTONED and not item.content
    assert_ledger_gapless(user.ctx, user.uid)


def test_delete_all_twice_and_with_idempotency_key(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    trace.capture_now(user.ctx, user.uid, "c1", conversation("c1", USER_LINES))
    first = user.call("DELETE", "/v3/memories")
    assert first.status_code == 200, first.text
    assert first.json()["deleted"] == 4
    # The same facts come back through a reprocess? No: they were deleted by the user.
    assert user.call("POST", "/v1/conversations/c1/reprocess").json()["created"] == 0
    # A new fact, then delete-all again: a new intent, not a replay of the first.
    made = user.call("POST", "/v3/memories", json={"content": "I keep bees on the roof"})
    assert made.status_code == 201, made.text
    second = user.call("DELETE", "/v3/memories", headers={"Idempotency-Key": "k-1"})
    assert second.status_code == 200, second.text
    assert second.json()["deleted"] == 1
    assert all(m.record_status == Status.TOMBSTONED and not m.content for m in user.items().values())
    # The retried request (same key) replays: same answer, no new commit.
    head = assert_ledger_gapless(user.ctx, user.uid)
    retried = user.call("DELETE", "/v3/memories", headers={"Idempotency-Key": "k-1"})
    assert retried.status_code == 200, retried.text
    assert retried.json()["deleted"] == 1
    assert len(assert_ledger_gapless(user.ctx, user.uid)) == len(head)
    assert_words_gone(user, "keep bees")


# -------------------------------------------------- 2. deletion scrubs every status (hidden too)
def user_with_a_fact_in_review(stack: dict[str, Any]) -> tuple[User, dict[str, Any]]:
    """A user whose half-marathon fact (conversation ``cc``) waits in the review queue: four facts
    of ``ca`` promoted, then ``cc``'s marathon fact conflicts with one of them."""
    user = new_user(stack)
    trace.capture_now(user.ctx, user.uid, "ca", conversation("ca", USER_LINES))
    assert consolidation.run_pass(user.ctx, user.uid)["routes"].get("promote") == 4
    trace.capture_now(user.ctx, user.uid, "cc", conversation("cc", LATER_LINES))
    routes = consolidation.run_pass(user.ctx, user.uid)["routes"]
    assert routes.get("review") == 1, routes
    queue = user.call("GET", "/v3/memories/review-queue").json()["reviews"]
    assert len(queue) == 1 and queue[0]["content"] == MARATHON
    return user, queue[0]


def _rejected_user(stack: dict[str, Any]) -> tuple[User, str]:
    """A user whose half-marathon fact was sent to review and rejected (status ``hidden``)."""
    user, review = user_with_a_fact_in_review(stack)
    resolved = user.call("POST", f"/v3/memories/review-queue/{review['review_id']}/resolve",
                         json={"decision": "reject"})
    assert resolved.status_code == 200, resolved.text
    marathon = review["memory_id"]
    assert user.items()[marathon].status == "hidden"
    trace.converge(user.ctx, user.uid)
    return user, marathon


@pytest.mark.parametrize("how", ["conversation_delete", "memory_delete", "delete_all", "empty_reprocess"])
def test_a_rejected_fact_is_scrubbed_by_every_delete(stack: dict[str, Any], how: str) -> None:
    user, marathon = _rejected_user(stack)
    if how == "conversation_delete":
        response = user.call("DELETE", "/v1/conversations/cc")
    elif how == "memory_delete":
        response = user.call("DELETE", f"/v3/memories/{marathon}")
    elif how == "delete_all":
        response = user.call("DELETE", "/v3/memories")
    else:
        user.ctx.paths.doc(user.uid, "conversations", "cc").update({"transcript_segments": []})
        response = user.call("POST", "/v1/conversations/cc/reprocess")
    assert response.status_code == 200, response.text
    item = user.items()[marathon]
    assert item.record_status == Status.TOMBSTONED and not item.content, item
    assert not any(q.quote for e in item.evidence for q in e.quote_refs)
    assert_ledger_gapless(user.ctx, user.uid)
    # A memory delete leaves the conversation and its workflow rows (a goal is not a memory); a
    # conversation delete leaves nothing.
    allowed = ("conversations", "goals", "action_items") if how != "conversation_delete" else ()
    assert_words_gone(user, "half marathon", allowed=allowed)


# ---------------------------------------------------- 4. deleted text survives nowhere (export)
def test_deleted_long_term_memory_leaves_no_text_in_item_promotion_or_export(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    trace.capture_now(user.ctx, user.uid, "ca", conversation("ca", USER_LINES))
    assert consolidation.run_pass(user.ctx, user.uid)["routes"].get("promote") == 4
    lisbon = user.one(LISBON, "long_term")
    assert user.items()[lisbon].promotion
    response = user.call("DELETE", f"/v3/memories/{lisbon}")
    assert response.status_code == 200, response.text
    item = user.items()[lisbon]
    assert item.record_status == Status.TOMBSTONED and not item.content
    assert_words_gone(user, "Lisbon", allowed=("conversations",))


# ------------------------------------ 6. cohorts in bounded pages (600 items under `make scale`)
SEEDED = scale.CONVERSATION_ITEMS


def _seed(user: User, conversation_id: str, n: int = SEEDED) -> list[str]:
    """``n`` Short-term items derived from ``conversation_id``, written through the apply path."""
    made: list[str] = []
    for start in range(0, n, 150):
        batch = []
        for i in range(start, min(n, start + 150)):
            content = f"User keeps a seeded zebrafish tank number {i}"
            mid = ids.extracted_memory_id(user.uid, conversation_id, content)
            batch.append(MemoryItem(
                id=mid, uid=user.uid, content=content, layer=Layer.SHORT_TERM, status=Status.ACTIVE,
                processing_state=ProcessingState.PROCESSED, conversation_id=conversation_id,
                evidence=[Evidence(evidence_id=f"ev_seed_{i}", source_id=conversation_id,
                                   quote_refs=[QuoteRef(segment_id=f"{conversation_id}-s0", quote=f"zebrafish {i}")])]))

        def plan(view: ApplyView, batch: list[MemoryItem] = batch) -> Plan:
            return Plan(items=[m.model_copy(deep=True) for m in batch], summary={"seeded": len(batch)})

        user.ctx.store.apply(user.uid, "test.seed", {"start": start, "source": conversation_id}, plan,
                              item_ids=[m.id for m in batch])
        made += [m.id for m in batch]
    return made


def _peak_rss_mb(stack: dict[str, Any], function: str) -> float | None:
    """Peak resident memory (VmHWM) of one function's process tree (``fn:<name>`` in the stack's
    state file), in MB (None if unknown)."""
    state = json.loads((Path(stack["state_dir"]) / "stack.json").read_text())
    pids = [p["pid"] for p in state["processes"] if p.get("name") == f"fn:{function}"]
    peak = 0
    for pid in pids:
        for status in [Path(f"/proc/{pid}/status"), *Path(f"/proc/{pid}/task").glob("*/children")]:
            if status.name == "children":
                kids = status.read_text().split()
                paths = [Path(f"/proc/{k}/status") for k in kids]
            else:
                paths = [status]
            for path in paths:
                try:
                    for line in path.read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]))
                except OSError:
                    continue
    return peak / 1024 if peak else None


def test_a_conversation_of_hundreds_of_items_reprocesses_and_deletes_completely(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    doc = conversation("big", ["I feed the fish every morning."])
    trace.capture_now(user.ctx, user.uid, "big", doc)
    seeded = _seed(user, "big")
    response = user.call("POST", "/v1/conversations/big/reprocess")
    assert response.status_code == 200, response.text
    assert response.json()["retracted"] == SEEDED, response.json()
    items = user.items()
    assert all(items[m].record_status == Status.TOMBSTONED and not items[m].content for m in seeded)

    seeded = _seed(user, "big")  # the same ids: not user-deleted, so they may be stated again
    response = user.call("DELETE", "/v1/conversations/big")
    assert response.status_code == 200, response.text
    assert not user.ctx.paths.doc(user.uid, "conversations", "big").get().exists
    items = user.items()
    assert all(m.record_status == Status.TOMBSTONED and not m.content for m in items.values())
    assert_ledger_gapless(user.ctx, user.uid)
    assert_words_gone(user, "zebrafish")
    # The delete trigger's cascade (or a redelivery of it) finds the cascade done: it writes nothing.
    before = canonical_snapshot(user.ctx, user.uid)
    conversations.cascade_from_trigger(user.ctx, user.uid, "big")
    assert canonical_snapshot(user.ctx, user.uid) == before
    peak = _peak_rss_mb(stack, "api")
    print(f"api function peak RSS after a {SEEDED}-item reprocess + cascade: {peak} MB")
    assert peak is not None and peak < 256


def test_app_deleting_a_conversation_of_hundreds_of_items_cascades_in_pages(stack: dict[str, Any]) -> None:
    user = new_user(stack)
    doc = conversation("big", ["I feed the fish every morning."])
    trace.capture_now(user.ctx, user.uid, "big", doc)
    seeded = _seed(user, "big")
    user.ctx.paths.doc(user.uid, "conversations", "big").delete()  # the app deletes the document itself
    wait_for(lambda: all(m.record_status == Status.TOMBSTONED for m in user.items().values()), timeout=120,
             interval=0.5, what=f"the delete trigger to retract all {SEEDED + 1} items")
    assert len(seeded) == SEEDED
    assert_ledger_gapless(user.ctx, user.uid)
    assert_words_gone(user, "zebrafish")
    peak = _peak_rss_mb(stack, "delete_cascade")
    print(f"delete_cascade function peak RSS after a {SEEDED + 1}-item cascade: {peak} MB")
    assert peak is not None and peak < 256


def test_a_cascade_that_fails_part_way_keeps_the_document_fences_captures_and_resumes(
        stack: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    user = new_user(stack)
    doc = conversation("big", ["I feed the fish every morning."])
    trace.capture_now(user.ctx, user.uid, "big", doc)
    seeded = _seed(user, "big", 250)
    real_page = deletion._cascade_page
    calls = {"n": 0}

    def failing_second_page(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RetryableError("injected: the function instance died after the first page")
        return real_page(*args, **kwargs)

    monkeypatch.setattr(deletion, "_cascade_page", failing_second_page)
    with pytest.raises(RetryableError):
        conversations.delete(user.ctx, user.uid, "big")
    items = user.items()
    assert set(seeded) <= set(items)
    done = [m for m in items.values() if m.record_status == Status.TOMBSTONED]
    assert len(done) == deletion.CASCADE_PAGE, len(done)
    # The document stays while derived items remain, and no capture of it may write meanwhile.
    assert user.ctx.paths.doc(user.uid, "conversations", "big").get().exists
    head = assert_ledger_gapless(user.ctx, user.uid)
    again = capture.capture_conversation(user.ctx, user.uid, "big", conversation("big", ["I feed the cat."]))
    assert again.skipped == "conversation_deleted"
    refused = user.call("POST", "/v1/conversations/big/reprocess")
    assert refused.status_code == 409, refused.text
    assert len(assert_ledger_gapless(user.ctx, user.uid)) == len(head)

    monkeypatch.setattr(deletion, "_cascade_page", real_page)
    response = user.call("DELETE", "/v1/conversations/big")  # the user retries: it resumes
    assert response.status_code == 200, response.text
    assert response.json()["cascade"]["retracted"] == len(items)  # both runs' pages, from the progress record
    assert not user.ctx.paths.doc(user.uid, "conversations", "big").get().exists
    assert all(m.record_status == Status.TOMBSTONED and not m.content for m in user.items().values())
    assert_ledger_gapless(user.ctx, user.uid)
    assert_words_gone(user, "zebrafish")

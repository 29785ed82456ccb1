"""Conversation capture on the running stack: Firestore write → emulator trigger → relay →
``on_conversation_complete`` → grounded Short-term memories, plus redelivery, extractor failure,
reprocess/replacement, workflow fan-out, secrets, restricted content and device provenance."""

from __future__ import annotations

import ast
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core import config
from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.extraction import normalize_text, source_from_conversation
from core.domain.records import MemoryItem
from core.services import capture
from tests.support.cloudevents import conversation_written
from tests.support.firestore_checks import (
    CONVERSATION_ONLY_FIELDS,
    MEMORY_COLLECTIONS,
    all_docs,
    all_items,
    assert_all_items_legal,
    assert_ledger_gapless,
    assert_no_text_anywhere,
    canonical_snapshot,
    ledger_head,
    relay_deliveries,
    sample_conversations,
    wait_for,
    write_conversation,
)
from tests.support.openai_server import OpenAIProtocolServer, chat_reply

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
PASSWORD = "Tulip-2291"
REPO = Path(__file__).resolve().parents[2]


def _uid() -> str:
    return f"cap-{uuid.uuid4().hex[:12]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


# Regression pin: the facts the default (rule) extractor grounds in each sample conversation,
# written down once from its output (the extractor is a black box to these tests; nothing here
# re-runs it). A deliberate extractor change updates this table; an accidental one fails here.
# What the spec requires of every captured fact (one grounding segment, provenance, no secrets,
# restricted labels, third-party attribution) is checked separately, from the spec.
SAMPLE_FACTS: dict[str, frozenset[str]] = {
    # Relative dates are resolved against each sample's own date (its started_at), in the tense
    # the speaker used: the spec's rule, so these pins follow from the samples' dates.
    "c-bank-call": frozenset({
        "User wants to raise their card limit because they're buying a used car next month "
        "(next month: December 2026)"}),
    "c-dinner-plans": frozenset({
        "Tom is allergic to peanuts", "Tom is the user's brother", "Tom works as a nurse at Saint Mary's",
        "User is vegetarian and stopped eating meat about two years ago (two years ago: 2024)"}),
    "c-doctor": frozenset({
        "User is cutting down on coffee",
        "User is training for the Lisbon half marathon in October (in October: October 2027)",
        "User's blood pressure is a bit high, according to their doctor"}),
    "c-empty-chatter": frozenset(),
    "c-morning-standup": frozenset({
        "User climbs three times a week back home", "User finished the billing migration (yesterday: 15 November 2026)",
        "User is on Western European time", "User is starting on the search rewrite (today: 16 November 2026)",
        "User moved to Lisbon in March (in March: March 2026)", "User still hasn't found a decent climbing gym"}),
}


def _of(visible: dict[str, dict[str, Any]], conversation_id: str) -> dict[str, dict[str, Any]]:
    return {mid: m for mid, m in visible.items() if m["conversation_id"] == conversation_id}


def _contents(memories: dict[str, dict[str, Any]]) -> set[str]:
    return {m["content"] for m in memories.values()}


def _visible(http: httpx.Client, uid: str) -> dict[str, dict[str, Any]]:
    response = http.get("/v1/memories", params={"limit": "500"}, headers=_auth(uid))
    assert response.status_code == 200, response.text
    return {m["id"]: m for m in response.json()["memories"]}


def _captured(ctx: Context, uid: str, conversation_id: str) -> dict[str, Any] | None:
    snap = ctx.paths.doc(uid, "capture_runs", conversation_id).get()
    data = snap.to_dict() if snap.exists else None
    return data if data and data.get("jobs", {}).get("memories") is True else None


def _all_jobs_done(ctx: Context, uid: str, conversation_id: str) -> bool:
    snap = ctx.paths.doc(uid, "capture_runs", conversation_id).get()
    jobs = (snap.to_dict() or {}).get("jobs", {}) if snap.exists else {}
    return all(jobs.get(job) is True for job in ("memories", "action_items", "goals"))


def _run_revision(ctx: Context, uid: str, conversation_id: str) -> str | None:
    snap = ctx.paths.doc(uid, "capture_runs", conversation_id).get()
    return (snap.to_dict() or {}).get("revision") if snap.exists else None


def _capture_and_wait(ctx: Context, http: httpx.Client, uid: str, doc: dict[str, Any],
                      timeout: float = 60.0) -> dict[str, dict[str, Any]]:
    """Write ``doc`` as an app would, wait for the observable end of its capture (the capture run
    records the memories job, then the workflow jobs), and return the memories of that conversation
    visible over HTTP, which must be exactly the pinned facts. The timeout is a deadline on that
    event, not a latency claim (capture latency is a ``strata bench`` figure)."""
    conversation_id = doc["id"]
    write_conversation(ctx, uid, conversation_id, doc)
    wait_for(lambda: _captured(ctx, uid, conversation_id), timeout=timeout, what=f"capture of {conversation_id}")
    wait_for(lambda: _all_jobs_done(ctx, uid, conversation_id), timeout=timeout, what="workflow jobs")
    mine = _of(_visible(http, uid), conversation_id)
    assert _contents(mine) == SAMPLE_FACTS[conversation_id]
    assert len(mine) == len(SAMPLE_FACTS[conversation_id]), "one memory per fact"
    return mine


# ------------------------------------------------------------------------------ the sample set
def test_every_sample_conversation_yields_grounded_memories(ctx: Context, http: httpx.Client) -> None:
    samples = sample_conversations()
    assert {"c-bank-call", "c-dinner-plans", "c-doctor", "c-empty-chatter", "c-morning-standup"} <= set(samples)
    uid = _uid()
    by_conversation: dict[str, dict[str, dict[str, Any]]] = {}
    for conversation_id, doc in samples.items():
        by_conversation[conversation_id] = _capture_and_wait(ctx, http, uid, doc)

    assert by_conversation["c-empty-chatter"] == {}
    for conversation_id, memories in by_conversation.items():
        segments = samples[conversation_id]["transcript_segments"]
        for memory in memories.values():
            assert memory["layer"] == "short_term"
            assert memory["source_ids"] == [conversation_id]
            quotes = [q for e in memory["evidence"] for q in e["quote_refs"]]
            assert quotes, memory
            for quote in quotes:
                hits = [s["id"] for s in segments
                        if f" {normalize_text(quote['quote'])} " in f" {normalize_text(s['text'])} "]
                assert hits == [quote["segment_id"]], (memory["content"], quote, hits)
            # Device provenance: conversation → evidence → capture_device_ids.
            assert {e["client_device_id"] for e in memory["evidence"]} == {"ios_3f9a1c2b"}
            assert memory["capture_device_ids"] == ["ios_3f9a1c2b"]

    everything = [m for ms in by_conversation.values() for m in ms.values()]
    assert len(everything) >= 8
    # Secrets: never in a memory, an export line of memory data, or any non-conversation document.
    assert all(PASSWORD not in json.dumps(m) for m in everything)
    assert by_conversation["c-bank-call"], "the card-limit plan is still captured"
    export = http.get("/v1/memories/export", headers=_auth(uid))
    assert export.status_code == 200
    lines = [json.loads(line) for line in export.text.splitlines() if line.strip()]
    assert any(line["kind"] == "memory" for line in lines)
    assert all(PASSWORD not in json.dumps(line) for line in lines if line["kind"] != "conversation")
    for item in all_items(ctx, uid).values():
        assert PASSWORD not in json.dumps(item, default=str)
    assert_no_text_anywhere(ctx, uid, PASSWORD, allowed_collections=("conversations",))

    # Health facts are stored, visible to the owner and restricted.
    health = [m for m in everything if "blood pressure" in m["content"].lower() or "allergic" in m["content"].lower()]
    assert len(health) == 2 and all(m["restricted"] for m in health)
    stored = all_items(ctx, uid)
    assert all("health" in stored[m["id"]]["sensitivity_labels"] for m in health)
    # Tom's allergy is about Tom: third party, never rewritten as the user.
    allergy = [m for m in everything if "peanut" in m["content"].lower()]
    assert len(allergy) == 1
    assert allergy[0]["subject_attribution"] == "third_party"
    assert "Tom" in allergy[0]["content"] and not allergy[0]["content"].lower().startswith("user")
    assert stored[allergy[0]["id"]]["subject_label"] == "Tom"
    assert all(m["subject_attribution"] != "user" for m in everything if m["content"].startswith("Tom"))

    # Workflow fan-out: action items and goals in their collections, never memories.
    actions, goals = all_docs(ctx, uid, "action_items"), all_docs(ctx, uid, "goals")
    assert {a["conversation_id"] for a in actions.values()} == {"c-morning-standup"}
    assert any("Marco" in a["description"] for a in actions.values())
    assert {g["conversation_id"] for g in goals.values()} == {"c-doctor"}
    workflow_texts = {normalize_text(r["description"]) for r in [*actions.values(), *goals.values()]}
    assert not workflow_texts & {normalize_text(i["content"]) for i in stored.values()}
    assert not (set(actions) | set(goals)) & set(stored)

    # No conversation document in any memory collection.
    _assert_no_conversation_in_memory_collections(ctx, uid, set(samples))
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


def _assert_no_conversation_in_memory_collections(ctx: Context, uid: str, conversation_ids: set[str]) -> None:
    allowed_fields = set(MemoryItem.model_fields)
    for collection in MEMORY_COLLECTIONS:
        for doc_id, data in all_docs(ctx, uid, collection).items():
            assert doc_id not in conversation_ids, f"{collection}/{doc_id} is keyed by a conversation id"
            assert not set(CONVERSATION_ONLY_FIELDS) & set(data), f"{collection}/{doc_id} holds conversation fields"
    for memory_id, data in all_items(ctx, uid).items():
        assert set(data) <= allowed_fields, set(data) - allowed_fields
        assert memory_id.startswith("mem_")


# ----------------------------------------------------------------------------- redelivery
def test_redelivering_the_same_cloudevent_three_times_changes_nothing(ctx: Context, http: httpx.Client,
                                                                      stack: dict[str, Any]) -> None:
    uid = _uid()
    doc = sample_conversations()["c-dinner-plans"]
    memories = _capture_and_wait(ctx, http, uid, doc)
    assert memories
    stored = ctx.paths.doc(uid, "conversations", doc["id"]).get().to_dict()
    body, headers = conversation_written(uid, doc["id"], stored, None)
    head, before = ledger_head(ctx, uid), canonical_snapshot(ctx, uid)
    url = stack["function_urls"]["on_conversation_complete"]
    for _ in range(3):
        response = httpx.post(url, content=body, headers=headers, timeout=30.0)
        assert response.status_code < 300, response.text
    assert ledger_head(ctx, uid) == head
    assert canonical_snapshot(ctx, uid) == before
    # An unrelated edit (title) fires the trigger again and also changes nothing. Wait until the
    # relay reports that the function answered that event, then check nothing changed.
    document = f"users/{uid}/conversations/{doc['id']}"
    delivered = relay_deliveries(stack, document)
    ctx.paths.doc(uid, "conversations", doc["id"]).update({"structured.title": "Renamed"})
    wait_for(lambda: relay_deliveries(stack, document) > delivered, timeout=60, interval=0.1,
             what="the trigger to process the title edit")
    assert ledger_head(ctx, uid) == head
    assert canonical_snapshot(ctx, uid) == before


def test_a_posted_cloudevent_is_decoded_captured_once_and_redelivery_is_a_noop(ctx: Context, http: httpx.Client,
                                                                             stack: dict[str, Any]) -> None:
    """The protobuf event alone (no Firestore write) captures the conversation; the same bytes
    delivered three more times leave the ledger exactly where the first delivery put it."""
    uid = _uid()
    doc = sample_conversations()["c-morning-standup"]
    data = {k: v for k, v in doc.items() if k != "id"}
    body, headers = conversation_written(uid, doc["id"], data, None)
    url = stack["function_urls"]["on_conversation_complete"]
    assert httpx.post(url, content=body, headers=headers, timeout=30.0).status_code < 300
    assert _contents(_of(_visible(http, uid), doc["id"])) == SAMPLE_FACTS[doc["id"]]
    head, before = ledger_head(ctx, uid), canonical_snapshot(ctx, uid)
    assert head["sequence"] == 1
    for _ in range(3):
        assert httpx.post(url, content=body, headers=headers, timeout=30.0).status_code < 300
    assert ledger_head(ctx, uid) == head
    assert canonical_snapshot(ctx, uid) == before


# --------------------------------------------------------------------- extractor / grounding failure
def test_extractor_failure_leaves_previous_memories_untouched(ctx: Context, http: httpx.Client) -> None:
    from core.adapters.llm import ChatClient, LLMExtractor

    uid = _uid()
    doc = sample_conversations()["c-doctor"]
    memories = _capture_and_wait(ctx, http, uid, doc)
    assert memories
    stored = ctx.paths.doc(uid, "conversations", doc["id"]).get().to_dict()
    head, before = ledger_head(ctx, uid), canonical_snapshot(ctx, uid)
    with OpenAIProtocolServer() as server:
        client = ChatClient(server.base_url, "test-model", timeout_s=5)
        # ``fail``: a model whose reply cannot be used records the revision failed instead of
        # falling back to the rule extractor (the fallback has its own tests), so nothing changes.
        llm_ctx = Context(config.load(llm_on_failure="fail"), extractor=LLMExtractor(client))
        garbage = [chat_reply("this is not json {"), chat_reply({"memories": "nope"}),
                   chat_reply({"memories": [], "action_items": []}), chat_reply("{}", finish_reason="length")]
        for reply in garbage:
            server.script_chat(reply)
            # A transient extractor failure is reported for retry (the trigger raises, so the event
            # is redelivered) and writes nothing.
            failed = capture.capture_conversation(llm_ctx, uid, doc["id"], dict(stored, reprocess_token=uuid.uuid4().hex))
            assert "memories" in failed.retry and failed.commit_id is None, failed
        # A well-formed reply whose quote is not in the transcript fails grounding: nothing applied
        # (the model's turn ends at once: a permanent failure).
        server.script_chat(chat_reply({"memories": [{
            "content": "User drinks tea", "kind": "fact", "category": "lifestyle", "subject": "user",
            "subject_label": None, "quotes": ["I only drink tea"], "sensitivity": []}],
            "action_items": [], "goals": []}))
        result = capture.capture_conversation(llm_ctx, uid, doc["id"], dict(stored, reprocess_token="grounding"))
        assert "memories" in result.errors and result.commit_id is None
        client.close()
    assert ledger_head(ctx, uid) == head
    assert canonical_snapshot(ctx, uid) == before
    assert set(_visible(http, uid)) == set(memories)


# ---------------------------------------------------------------------------- replacement
def test_edited_transcript_keeps_unchanged_ids_and_tombstones_removed_facts(ctx: Context,
                                                                            http: httpx.Client) -> None:
    uid = _uid()
    doc = sample_conversations()["c-doctor"]
    memories = _capture_and_wait(ctx, http, uid, doc)
    removed = {mid for mid, m in memories.items() if "marathon" in m["content"].lower()}
    assert len(removed) == 1
    kept = set(memories) - removed
    ref = ctx.paths.doc(uid, "conversations", doc["id"])
    edited_segments = [s for s in doc["transcript_segments"] if "marathon" not in s["text"]]
    revision_before = _run_revision(ctx, uid, doc["id"])
    ref.update({"transcript_segments": edited_segments})
    wait_for(lambda: _captured(ctx, uid, doc["id"]) and _run_revision(ctx, uid, doc["id"]) != revision_before,
             timeout=60, what="capture of the edited transcript")
    visible = _visible(http, uid)
    assert set(visible) == kept
    items = all_items(ctx, uid)
    for mid in removed:
        gone = items[mid]
        assert gone["status"] in ("tombstoned", "hidden") and gone["content"] == ""
        assert all(e["status"] == "tombstoned" and e["quote_refs"] == [] for e in gone["evidence"])
        assert http.get(f"/v1/memories/{mid}", headers=_auth(uid)).status_code == 404

    # Reprocess over HTTP: same transcript, new revision: every fact keeps its id, nothing changes.
    head = ledger_head(ctx, uid)
    response = http.post(f"/v1/conversations/{doc['id']}/reprocess", headers=_auth(uid))
    assert response.status_code == 200, response.text
    assert response.json()["kept"] == len(kept) and response.json()["created"] == 0
    assert set(_visible(http, uid)) == kept
    assert ledger_head(ctx, uid)["sequence"] == head["sequence"]

    # An empty successful extraction retracts everything the conversation contributed.
    ref.update({"transcript_segments": sample_conversations()["c-empty-chatter"]["transcript_segments"]})
    wait_for(lambda: not set(_visible(http, uid)) & kept, timeout=60, what="retraction of the conversation")
    items = all_items(ctx, uid)
    assert all(items[mid]["status"] in ("tombstoned", "hidden") and items[mid]["content"] == ""
               for mid in memories)
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)


# --------------------------------------------------------------------------- API conversations
def test_post_conversation_creates_the_document_and_yields_memories(ctx: Context, http: httpx.Client) -> None:
    uid = _uid()
    doc = sample_conversations()["c-morning-standup"]
    response = http.post("/v1/conversations", json=doc, headers=_auth(uid))
    assert response.status_code == 201, response.text
    assert response.json() == {"id": doc["id"], "status": "completed"}
    wait_for(lambda: _captured(ctx, uid, doc["id"]), timeout=60, what="capture of the API-created conversation")
    visible = _visible(http, uid)
    assert _contents(visible) == SAMPLE_FACTS[doc["id"]]
    stored = ctx.paths.doc(uid, "conversations", doc["id"]).get().to_dict()
    assert stored["status"] == "completed"
    assert stored["transcript_segments"] == doc["transcript_segments"]
    assert stored["client_device_id"] == "ios_3f9a1c2b"
    assert {m["capture_device_ids"][0] for m in visible.values()} == {"ios_3f9a1c2b"}
    wait_for(lambda: _all_jobs_done(ctx, uid, doc["id"]), timeout=60, what="workflow jobs")
    assert set(all_docs(ctx, uid, "action_items"))
    _assert_no_conversation_in_memory_collections(ctx, uid, {doc["id"]})


def test_device_provenance_from_headers_without_a_device_in_the_body(ctx: Context, http: httpx.Client) -> None:
    uid = _uid()
    doc = {k: v for k, v in sample_conversations()["c-doctor"].items() if k not in ("client_device_id",)}
    headers = {**_auth(uid), "X-Device-Id-Hash": "abcdef12", "X-App-Platform": "macos", "X-App-Version": "1.0"}
    assert http.post("/v1/conversations", json=doc, headers=headers).status_code == 201
    wait_for(lambda: _captured(ctx, uid, doc["id"]), timeout=60, what="capture with header device provenance")
    visible = _visible(http, uid)
    assert _contents(visible) == SAMPLE_FACTS[doc["id"]]
    for memory in visible.values():
        assert memory["capture_device_ids"] == ["macos_abcdef12"]
        assert {e["client_device_id"] for e in memory["evidence"]} == {"macos_abcdef12"}
    assert "macos_abcdef12" in all_docs(ctx, uid, "client_devices")
    items = all_items(ctx, uid)
    assert all(items[mid]["primary_capture_device"] == "macos_abcdef12" for mid in visible)


# -------------------------------------------------------------- static: no conversation → memory path
WRITE_METHODS = {"set", "update", "create", "add"}
WRITE_FUNCTIONS = {"set_document"}  # core/adapters/firestore/wire.py: set() through our own encoder
# What builds the extra documents a plan writes: graph assertions (admit), review rows (the open
# entry, a closed one; core/domain/review_queue.py).
# ``to_store``: a typed document of core/domain/documents.py (named, typed fields; no conversation field).
# ``receipt``: a memory delete's receipt, written in the delete's own commit
# (core/domain/deletion_planners.py with_receipt; core/services/receipts.py document builds it from
# the tombstoned ids and the apply's moment: no conversation field).
SERVER_BUILT = {"admit", "open_row", "_closed", "to_store", "receipt"}


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node


def test_no_code_path_writes_a_conversation_document_into_a_memory_collection() -> None:
    """Statically: (1) a function that writes a memory collection directly never touches
    conversation documents; (2) every extra document a plan writes is a graph assertion or a review
    row built by the server (admit / redaction / a dict literal), never a conversation; (3) items
    reach memory_items only as ``MemoryItem.to_store()``, a model with no conversation fields that
    drops unknown keys."""
    direct_writes: list[str] = []
    for path in sorted((REPO / "core").rglob("*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        for func in _functions(tree):
            text = ast.get_source_segment(source, func) or ""
            touches_conversations = any(s in text for s in ('"conversations"', "transcript_segments",
                                                           "source_from_conversation", "external_data"))
            for node in ast.walk(func):
                if not (isinstance(node, ast.Call) and (
                        (isinstance(node.func, ast.Attribute) and node.func.attr in WRITE_METHODS)
                        or (isinstance(node.func, ast.Name) and node.func.id in WRITE_FUNCTIONS))):
                    continue
                call = ast.get_source_segment(source, node) or ""
                targets = [c for c in MEMORY_COLLECTIONS if f'"{c}"' in call]
                if targets:
                    direct_writes.append(f"{path.relative_to(REPO)}:{func.name}")
                    assert not touches_conversations, (
                        f"{path.relative_to(REPO)}:{func.name} writes {targets} and handles conversation data")
            for node in ast.walk(func):
                if (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Subscript)
                        and isinstance(node.targets[0].value, ast.Attribute)
                        and node.targets[0].value.attr == "docs"):
                    key = ast.get_source_segment(source, node.targets[0].slice) or ""
                    value = node.value
                    builder = value.func if isinstance(value, ast.Call) else None
                    built_by = (builder.id if isinstance(builder, ast.Name)
                                else builder.attr if isinstance(builder, ast.Attribute) else None)
                    ok_value = (isinstance(value, ast.Constant) and value.value is None) or isinstance(
                        value, ast.Dict) or built_by in SERVER_BUILT
                    assert ok_value, f"{path.relative_to(REPO)}:{func.name} writes plan doc {key} from " \
                                     f"{ast.get_source_segment(source, value)}"
                    # Deleting the conversation document with the last page of its cascade (value None)
                    # writes nothing into a memory collection.
                    deletes = isinstance(value, ast.Constant) and value.value is None
                    assert deletes or "conversation" not in key.lower() or key.startswith("f\"memory_")
    # Items reach the store through the one apply algorithm, the unit of work, as to_store() rows.
    apply_source = (REPO / "core/domain/unit_of_work.py").read_text()
    assert 'Write("set", m.item_path(item.id), item.to_store())' in apply_source
    assert MemoryItem.model_config.get("extra") == "ignore"
    assert not set(CONVERSATION_ONLY_FIELDS) & set(MemoryItem.model_fields)
    # The extraction input holds segments only, never the conversation document.
    source = source_from_conversation("u", "c", {"transcript_segments": [{"id": "s", "text": "t", "is_user": True}],
                                                 "structured": {"title": "secret title"}, "apps_results": [1]})
    assert "secret title" not in repr(source) and "apps_results" not in repr(source)
    item = MemoryItem.from_store({"id": "mem_x", "uid": "u", "content": "c", "transcript_segments": [1],
                                  "structured": {}, "external_data": {}})
    assert not set(CONVERSATION_ONLY_FIELDS) & set(item.to_store())

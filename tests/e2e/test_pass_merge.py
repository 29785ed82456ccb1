"""One logical memory per fact (issue 20, item 5) on the whole local stack.

The same facts are captured from two conversations through the real trigger path *before* any
consolidation pass; one pass (the consolidate function, as Cloud Tasks calls it) must then settle
each fact as exactly one Long-term memory citing both conversations, the other copy becoming an
alias in its lineage — the same outcome as when the second copy arrives after the first was
already Long-term. ``GET /v1/memories`` lists each fact once.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.admission import receipt_problems
from core.domain.records import MemoryItem
from core.domain.states import Layer, Status
from tests.support import trace
from tests.support.firestore_checks import (
    all_docs,
    assert_all_items_legal,
    assert_ledger_gapless,
    wait_for,
    write_conversation,
)

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"

SHORT = ["By the way I moved to Lisbon in March.", "I stopped eating meat about two years ago."]
# Eighteen facts a conversation: two conversations make 36 pending items, more than one routing
# batch (20), so copies of one fact are settled both in one batch and in different batches.
LONG = SHORT + [
    "I love playing chess on Sundays.", "My sister Ana is a nurse.", "I work as a software engineer at Acme.",
    "I'm allergic to peanuts.", "My favourite band is Radiohead.", "I have a dog called Biscuit.",
    "I play the guitar every evening.", "My brother Tom lives in Berlin.", "I hate cold weather.",
    "I'm learning Japanese.", "I prefer tea over coffee.", "My birthday is on the 4th of July.",
    "I drive a blue Volvo.", "I go running every morning.",
]


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _items(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    return {mid: MemoryItem.from_store(d) for mid, d in all_docs(ctx, uid, "memory_items").items()}


def _capture_both(ctx: Context, uid: str, lines_a: list[str], lines_b: list[str]) -> dict[str, MemoryItem]:
    """Write two conversations the way an app does and wait for the trigger to capture both."""
    for conversation_id, lines in (("conv-a", lines_a), ("conv-b", lines_b)):
        write_conversation(ctx, uid, conversation_id, trace.conversation_doc(conversation_id, lines))
    wait_for(lambda: all(ctx.paths.doc(uid, "capture_runs", c).get().exists for c in ("conv-a", "conv-b")),
             timeout=90, interval=0.2, what="both conversations to be captured")
    pending = _items(ctx, uid)
    assert pending and all(i.layer == Layer.SHORT_TERM for i in pending.values())
    return pending


def _run_pass(stack: dict[str, Any], uid: str) -> dict[str, Any]:
    response = httpx.post(stack["function_urls"]["consolidate"], json={"uid": uid}, timeout=120)
    assert response.status_code == 200, response.text
    summary = response.json()
    assert summary["skipped"] is None, summary
    return summary


def _check_one_memory_per_fact(stack: dict[str, Any], ctx: Context, uid: str,
                               pending: dict[str, MemoryItem]) -> dict[str, MemoryItem]:
    """The invariants of the spec's "one logical memory per fact", from the stored state and the API."""
    items = _items(ctx, uid)
    by_fact: dict[str, list[MemoryItem]] = defaultdict(list)
    for memory_id in pending:
        item = items[memory_id]
        assert not item.pending_route and item.route in ("promote", "archive", "review", "reject"), item
        by_fact[pending[memory_id].content.casefold()].append(item)
    survivors: dict[str, MemoryItem] = {}
    for fact, copies in by_fact.items():
        long_term = [i for i in items.values() if i.content.casefold() == fact
                     and i.layer == Layer.LONG_TERM and i.record_status == Status.ACTIVE]
        assert len(long_term) <= 1, (fact, [i.id for i in long_term])
        if not long_term:
            continue
        survivor = long_term[0]
        survivors[fact] = survivor
        sources = {e.source_id for e in survivor.evidence if e.status == "active"}
        assert sources == {"conv-a", "conv-b"}, (fact, sources)
        assertion = ctx.paths.doc(uid, "memory_graph_assertions", survivor.id).get()
        assert assertion.exists and assertion.to_dict()["assertion_id"] == survivor.graph_assertion_id
        assert not receipt_problems(survivor, assertion.to_dict()), (fact, receipt_problems(survivor, assertion.to_dict()))
        for copy in copies:
            if copy.id != survivor.id:  # the other copy is an alias of the survivor, never visible
                assert copy.canonical_memory_id == survivor.id, (fact, copy)
                assert copy.record_status == Status.SUPERSEDED or copy.layer == Layer.ARCHIVE, copy
    listed = httpx.get(stack["api_url"] + "/v1/memories", params={"limit": "500"}, headers=_auth(uid), timeout=60)
    assert listed.status_code == 200, listed.text
    memories = listed.json()["memories"]
    counts = Counter(m["content"].casefold() for m in memories if m["layer"] == "long_term")
    assert counts and max(counts.values()) == 1, [c for c, n in counts.items() if n > 1]
    for memory in memories:
        survivor = survivors.get(memory["content"].casefold())
        if survivor is not None and memory["layer"] == "long_term":
            assert memory["id"] == survivor.id
            assert sorted(memory["source_ids"]) == ["conv-a", "conv-b"], memory
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
    return survivors


def test_the_same_conversation_under_two_ids_becomes_one_memory_per_fact(stack: dict[str, Any]) -> None:
    ctx = Context()
    uid = f"u-merge-{uuid.uuid4().hex[:10]}"
    pending = _capture_both(ctx, uid, SHORT, SHORT)
    summary = _run_pass(stack, uid)
    assert summary["selected"] == len(pending)
    survivors = _check_one_memory_per_fact(stack, ctx, uid, pending)
    assert len(survivors) == len(SHORT), survivors  # both facts reached Long-term, once each
    # A second pass finds nothing to do and changes nothing.
    head = ctx.paths.control(uid).get().to_dict()["sequence"]
    assert _run_pass(stack, uid)["selected"] == 0
    assert ctx.paths.control(uid).get().to_dict()["sequence"] == head


def test_shared_facts_across_routing_batches_merge_into_one_memory(stack: dict[str, Any]) -> None:
    """36 pending items (18 facts twice) span two routing batches; the vector and keyword indexes
    end with one entry per logical memory."""
    ctx = Context()
    uid = f"u-merge-{uuid.uuid4().hex[:10]}"
    pending = _capture_both(ctx, uid, LONG, LONG[::-1])
    summary = _run_pass(stack, uid)
    assert summary["selected"] == len(pending) > 20
    survivors = _check_one_memory_per_fact(stack, ctx, uid, pending)
    assert len(survivors) >= len(SHORT)
    trace.converge(ctx, uid)
    trace.assert_converged(ctx, uid)


class PromoteEverything:
    """A router that recognises no duplicate (as a model router may miss one): every item promote."""

    router_id = "promote-all"
    router_version = "1"

    def route(self, candidates: list[Any]) -> list[Any]:
        from core.domain.routing import RouteProposal

        return [RouteProposal(c.ref, "promote", "always promote") for c in candidates]


def test_a_copy_of_a_long_term_fact_merges_even_when_the_router_promotes_it(stack: dict[str, Any]) -> None:
    """The second conversation arrives after the first one's facts are Long-term, and the router
    proposes ``promote`` without naming the duplicate: the server still keeps one memory per fact."""
    from core.services import consolidation

    ctx = Context()
    uid = f"u-merge-{uuid.uuid4().hex[:10]}"
    write_conversation(ctx, uid, "conv-a", trace.conversation_doc("conv-a", SHORT))
    wait_for(lambda: ctx.paths.doc(uid, "capture_runs", "conv-a").get().exists, timeout=90, interval=0.2,
             what="conv-a to be captured")
    first = consolidation.run_pass(ctx, uid, router=PromoteEverything())
    assert first["routes"] == {"promote": len(SHORT)}, first
    write_conversation(ctx, uid, "conv-b", trace.conversation_doc("conv-b", SHORT))
    wait_for(lambda: ctx.paths.doc(uid, "capture_runs", "conv-b").get().exists, timeout=90, interval=0.2,
             what="conv-b to be captured")
    pending = {mid: item for mid, item in _items(ctx, uid).items()}
    second = consolidation.run_pass(ctx, uid, router=PromoteEverything())
    assert second["routes"] == {"promote": len(SHORT)}, second
    survivors = _check_one_memory_per_fact(stack, ctx, uid, pending)
    assert len(survivors) == len(SHORT)
    for survivor in survivors.values():
        assert survivor.conversation_id == "conv-a"  # the memory that was Long-term first survives

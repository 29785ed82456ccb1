"""The trace check: after a delete, is the deleted content really gone everywhere?

``assert_forgotten(ctx, uid, memory_ids, contents)`` looks at canonical Firestore state *and* at the
providers themselves (the real Typesense server and the local Pinecone endpoint over HTTP, never
through the adapters under test) and fails with a list of every place the content survived:

* ``memory_items``: every named memory is missing or tombstoned with its content cleared, and no
  other item of the user that is not tombstoned carries one of the contents;
* no tombstoned item still holds content;
* Typesense: no document for the user whose ``memory_id`` is one of the ids or whose content is one
  of the contents;
* Pinecone: no vector for the user whose ``memory_id`` is one of the ids, none under the ids'
  ``memproj:`` provider ids, and no stored vector equal to the embedding of one of the contents;
* the knowledge graph: no edge cites one of the ids, no node is labelled with one of the contents,
  and no graph assertion of one of the ids is still active;
* the review queue: no entry of one of the ids still shows content, and no entry shows one of the
  contents.

``converge(ctx, uid)`` drives projection delivery to quiescence (skipping retry backoff) so that a
check sees the providers' settled state. ``typesense_docs`` / ``pinecone_vectors`` read a user's
provider records directly.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import httpx

from core.bootstrap import Context
from core.domain import ids
from core.domain.records import MemoryItem
from core.domain.states import Status
from strata_dev.samples import load_sample, samples_dir

CONVERGE_TIMEOUT_S = 90.0


# ------------------------------------------------------------------------------ scenario input
def conversations_dir() -> Path:
    """The repository's sample conversations (``strata_dev.samples``)."""
    return samples_dir()


def sample_conversation(name: str) -> dict[str, Any]:
    return load_sample(name)


def conversation_doc(conversation_id: str, lines: Sequence[str]) -> dict[str, Any]:
    """A completed conversation whose user says ``lines``, one segment each."""
    segments = [{"id": f"{conversation_id}-s{i}", "text": text, "speaker": "SPEAKER_00", "speaker_id": 0,
                 "is_user": True, "start": i * 5.0, "end": i * 5.0 + 4.0} for i, text in enumerate(lines)]
    return {"status": "completed", "discarded": False, "source": "omi", "language": "en",
            "structured": {"title": conversation_id, "overview": ""}, "transcript_segments": segments}


def capture_now(ctx: Context, uid: str, conversation_id: str, doc: dict[str, Any], *, write_doc: bool = True) -> Any:
    """Capture the conversation in this process (the test does not wait for the trigger), then
    write its document: the trigger that fires finds this revision already captured. (Writing first
    would make the trigger's capture and this one contend for the same apply transaction.)"""
    from core.services import capture

    doc = {k: v for k, v in doc.items() if k != "id"}
    result = capture.capture_conversation(ctx, uid, conversation_id, doc)
    assert not result.errors, result.errors
    if write_doc:
        ctx.paths.doc(uid, "conversations", conversation_id).set(doc)
    return result


class QuietPublisher:
    """A Publisher that records nudges instead of sending them (no function drains behind the test)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def publish(self, topic: str, payload: dict[str, Any]) -> None:
        self.messages.append((topic, dict(payload)))


# ------------------------------------------------------------------------------- provider reads
def _ts(ctx: Context) -> tuple[str, dict[str, str], str]:
    s = ctx.settings
    return s.typesense_url.rstrip("/"), {"X-TYPESENSE-API-KEY": s.typesense_api_key}, s.typesense_collection


def _backtick(value: str) -> str:
    return f"`{value}`"


def typesense_docs(ctx: Context, uid: str) -> list[dict[str, Any]]:
    """Every Typesense document whose ``uid`` is ``uid`` (export endpoint, straight from the server)."""
    url, headers, collection = _ts(ctx)
    response = httpx.get(f"{url}/collections/{collection}/documents/export", headers=headers,
                         params={"filter_by": f"uid:={_backtick(uid)}"}, timeout=30)
    if response.status_code == 404:
        return []
    response.raise_for_status()
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def typesense_search(ctx: Context, uid: str, filter_by: str, q: str = "*") -> list[dict[str, Any]]:
    url, headers, collection = _ts(ctx)
    response = httpx.get(f"{url}/collections/{collection}/documents/search", headers=headers, timeout=30,
                         params={"q": q, "query_by": "content", "per_page": 250,
                                 "filter_by": f"uid:={_backtick(uid)} && {filter_by}" if filter_by
                                 else f"uid:={_backtick(uid)}"})
    if response.status_code == 404:
        return []
    response.raise_for_status()
    return [hit["document"] for hit in response.json().get("hits", [])]


def _pc(ctx: Context) -> tuple[str, dict[str, str], str]:
    s = ctx.settings
    return s.pinecone_host.rstrip("/"), {"Api-Key": s.pinecone_api_key or "local"}, s.pinecone_namespace


def pinecone_vectors(ctx: Context, uid: str) -> dict[str, dict[str, Any]]:
    """Every vector (id → record with values and metadata) whose metadata ``uid`` is ``uid``."""
    host, headers, namespace = _pc(ctx)
    out: dict[str, dict[str, Any]] = {}
    token = None
    while True:
        body: dict[str, Any] = {"namespace": namespace, "filter": {"uid": {"$eq": uid}}, "limit": 1000}
        if token:
            body["paginationToken"] = token
        response = httpx.post(f"{host}/vectors/fetch_by_metadata", headers=headers, json=body, timeout=30)
        response.raise_for_status()
        page = response.json()
        out.update(page.get("vectors") or {})
        token = (page.get("pagination") or {}).get("next")
        if not token:
            return out


def pinecone_fetch(ctx: Context, vector_ids: Sequence[str]) -> dict[str, Any]:
    host, headers, namespace = _pc(ctx)
    if not vector_ids:
        return {}
    response = httpx.get(f"{host}/vectors/fetch", headers=headers, timeout=30,
                         params=[("namespace", namespace)] + [("ids", v) for v in vector_ids])
    response.raise_for_status()
    return dict(response.json().get("vectors") or {})


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def vector_text(item: MemoryItem) -> str:
    """What docs/data-model.md says the vector index embeds for a projected memory: the content,
    then the whole text of each segment its active evidence quotes, once each, in order (a ref kept
    without its segment's text adds nothing); the content alone once the user edited it."""
    segments: list[str] = []
    if not item.edited:
        for evidence in item.evidence:
            for ref in evidence.quote_refs if evidence.status == "active" else ():
                if ref.segment and ref.segment not in segments:
                    segments.append(ref.segment)
    return " ".join([item.content, *segments])


def same_vector(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and cosine(a, b) > 0.9999


# ------------------------------------------------------------------------------ canonical reads
def items(ctx: Context, uid: str) -> dict[str, MemoryItem]:
    return {s.id: MemoryItem.from_store(s.to_dict()) for s in ctx.paths.col(uid, "memory_items").stream()}


def expected_provider_ids(ctx: Context, uid: str) -> set[str]:
    """``memproj:`` ids of the user's default-visible, unrestricted memories (what providers must
    hold), decided by the spec's reference model on the stored documents, not by the code's own
    projectability rule."""
    from tests.support import spec_model

    stored = {s.id: s.to_dict() for s in ctx.paths.col(uid, "memory_items").stream()}
    return {ids.provider_id(uid, mid) for mid, item in stored.items() if spec_model.projectable(item)}


def provider_sets(ctx: Context, uid: str) -> tuple[set[str], set[str]]:
    return {d["id"] for d in typesense_docs(ctx, uid)}, set(pinecone_vectors(ctx, uid))


# ----------------------------------------------------------------------------------- convergence
def outbox(ctx: Context, uid: str) -> list[tuple[Any, dict[str, Any]]]:
    return [(s, s.to_dict()) for s in ctx.paths.col(uid, "memory_outbox").stream()]


def converge(ctx: Context, uid: str, timeout_s: float = CONVERGE_TIMEOUT_S) -> None:
    """Drain ``uid``'s outbox until it is empty. Pending events still backing off are made due now
    (the backoff wait is not what is under test here); a drain another worker holds is waited for.
    Dead-lettered events fail the check: they would never converge."""
    from core.services import projection

    deadline = time.monotonic() + timeout_s
    last: Any = None
    while True:
        events = outbox(ctx, uid)
        dead = [e for _, e in events if e.get("state") == "dead"]
        assert not dead, f"dead-lettered projection events for {uid}: {dead}"
        if not events:
            return
        now = ctx.now()
        for snap, event in events:
            if event.get("state") == "pending" and event.get("due_at") and event["due_at"] > now:
                snap.reference.update({"due_at": now})
        last = projection.drain_user(ctx, uid)
        if time.monotonic() > deadline:
            raise AssertionError(f"outbox of {uid} did not drain in {timeout_s}s: "
                                 f"{projection.pending_counts(ctx, uid)}; last drain {last.as_dict()}")
        if last.skipped or last.leased == 0 or last.retried:
            time.sleep(0.3)


def assert_converged(ctx: Context, uid: str) -> set[str]:
    """Both providers hold exactly the user's projectable memories (0 missing, 0 extra)."""
    expected = expected_provider_ids(ctx, uid)
    keyword, vector = provider_sets(ctx, uid)
    assert keyword == expected, (f"typesense: missing {sorted(expected - keyword)}, "
                                 f"extra {sorted(keyword - expected)}")
    assert vector == expected, f"pinecone: missing {sorted(expected - vector)}, extra {sorted(vector - expected)}"
    return expected


# ---------------------------------------------------------------------------------- trace check
def _mentions(text: Any, contents: Iterable[str]) -> list[str]:
    folded = str(text or "").casefold()
    return [c for c in contents if c and c.casefold() in folded]


def assert_forgotten(ctx: Context, uid: str, memory_ids: Iterable[str], contents: Iterable[str]) -> None:
    memory_ids = sorted(set(memory_ids))
    contents = sorted({c for c in contents if c})
    problems: list[str] = []

    # canonical memories
    for memory_id, item in items(ctx, uid).items():
        tombstoned = item.record_status == Status.TOMBSTONED
        if memory_id in memory_ids and not tombstoned:
            problems.append(f"item {memory_id} is {item.status}, not tombstoned")
        if tombstoned and item.content:
            problems.append(f"tombstoned item {memory_id} still holds content {item.content!r}")
        if not tombstoned and _mentions(item.content, contents):
            problems.append(f"live item {memory_id} ({item.status}) still says {item.content!r}")
        if tombstoned and any(ref.quote or ref.segment for e in item.evidence for ref in e.quote_refs):
            problems.append(f"tombstoned item {memory_id} keeps evidence quotes")

    # Typesense, straight from the server
    for doc in typesense_docs(ctx, uid):
        if doc.get("memory_id") in memory_ids:
            problems.append(f"typesense still has {doc['id']} for {doc['memory_id']}")
        elif _mentions(doc.get("content"), contents):
            problems.append(f"typesense document {doc['id']} still says {doc.get('content')!r}")
    if memory_ids:
        flt = "memory_id:=[" + ",".join(_backtick(m) for m in memory_ids) + "]"
        for doc in typesense_search(ctx, uid, flt):
            problems.append(f"typesense filter search finds {doc['id']} ({doc.get('memory_id')})")

    # Pinecone, straight from the endpoint
    stored = pinecone_vectors(ctx, uid)
    embeddings = ctx.embedder.embed(contents) if contents else []
    for vid, record in stored.items():
        meta = record.get("metadata") or {}
        if meta.get("memory_id") in memory_ids:
            problems.append(f"pinecone still has {vid} for {meta.get('memory_id')}")
        for content, embedding in zip(contents, embeddings, strict=True):
            if same_vector(record.get("values") or [], embedding):
                problems.append(f"pinecone vector {vid} is the embedding of {content!r}")
    for vid in pinecone_fetch(ctx, [ids.provider_id(uid, m) for m in memory_ids]):
        problems.append(f"pinecone fetch by provider id still returns {vid}")

    # knowledge graph and graph assertions
    for snap in ctx.paths.col(uid, "knowledge_edges").stream():
        edge = snap.to_dict()
        cited = set(edge.get("memory_ids") or []) & set(memory_ids)
        if cited:
            problems.append(f"knowledge edge {snap.id} still cites {sorted(cited)}")
    for snap in ctx.paths.col(uid, "knowledge_nodes").stream():
        node = snap.to_dict()
        if node.get("kind") == "fact" and _mentions(node.get("label"), contents):
            problems.append(f"knowledge node {snap.id} is still labelled {node.get('label')!r}")
    for memory_id in memory_ids:
        snap = ctx.paths.doc(uid, "memory_graph_assertions", memory_id).get()
        if snap.exists and (snap.to_dict() or {}).get("status") == "active":
            problems.append(f"graph assertion of {memory_id} is still active")

    # review queue
    for snap in ctx.paths.col(uid, "memory_review_queue").stream():
        row = snap.to_dict()
        if row.get("memory_id") in memory_ids and (row.get("content") or row.get("status") == "open"):
            problems.append(f"review entry {snap.id} still shows {row.get('content')!r} ({row.get('status')})")
        elif _mentions(row.get("content"), contents):
            problems.append(f"review entry {snap.id} still shows {row.get('content')!r}")

    assert not problems, f"deleted content of {uid} survives:\n  " + "\n  ".join(problems)


__all__ = [
    "QuietPublisher", "assert_converged", "capture_now", "conversation_doc", "conversations_dir",
    "sample_conversation", "assert_forgotten", "converge", "cosine", "expected_provider_ids", "items", "outbox",
    "pinecone_fetch", "pinecone_vectors", "provider_sets", "same_vector", "typesense_docs", "typesense_search",
]

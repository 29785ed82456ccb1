"""Reusable Firestore assertions and probes for integration and e2e tests.

Every helper takes a :class:`core.bootstrap.Context` (build it inside the test, after the ``stack``
fixture exported the emulator environment) and a uid, and reads the emulator directly with the
admin client, so the checks see exactly what is stored — never an API's view of it.

    ctx = Context()
    assert_all_items_legal(ctx, uid)
    assert_ledger_gapless(ctx, uid)
    before = snapshot_user(ctx, uid)
    ...
    assert snapshot_user(ctx, uid) == before

Nothing here writes, except :func:`write_conversation` (the way an app writes a conversation).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from strata_dev.samples import load_samples, samples_dir
from tests.support.spec_model import legal

T = TypeVar("T")

MEMORY_COLLECTIONS = (
    "memory_items", "memory_commits", "memory_operations", "memory_state", "memory_graph_assertions",
    "memory_outbox", "memory_review_queue", "knowledge_nodes", "knowledge_edges",
)
CONVERSATION_ONLY_FIELDS = ("transcript_segments", "structured", "external_data", "apps_results",
                            "plugins_results", "processing_memory_id", "finished_at", "started_at")


# ----------------------------------------------------------------------------------------- reading
def all_items(ctx: Any, uid: str) -> dict[str, dict[str, Any]]:
    """Every stored ``users/{uid}/memory_items`` document, raw, keyed by document id."""
    return {snap.id: snap.to_dict() for snap in ctx.paths.col(uid, "memory_items").stream()}


def all_docs(ctx: Any, uid: str, collection: str) -> dict[str, dict[str, Any]]:
    """Every document of ``users/{uid}/{collection}``, raw, keyed by document id."""
    return {snap.id: snap.to_dict() for snap in ctx.paths.col(uid, collection).stream()}


def _walk(collection: Any, prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
    # list_documents() also yields "missing" parents that only hold subcollections.
    refs = list(collection.list_documents())
    snaps = {s.reference.path: s for s in collection._client.get_all(refs)} if refs else {}
    for ref in refs:
        path = f"{prefix}/{ref.id}"
        snap = snaps.get(ref.path)
        if snap is not None and snap.exists:
            yield path, snap.to_dict()
        for child in ref.collections():
            yield from _walk(child, f"{path}/{child.id}")


def user_documents(ctx: Any, uid: str) -> dict[str, dict[str, Any]]:
    """Every document under ``users/{uid}`` (recursively), keyed by its path relative to the user,
    e.g. ``memory_items/mem_x``. The user document itself is keyed ``""`` when it exists."""
    user = ctx.paths.user(uid)
    out: dict[str, dict[str, Any]] = {}
    snap = user.get()
    if snap.exists:
        out[""] = snap.to_dict()
    for collection in user.collections():
        for path, data in _walk(collection, collection.id):
            out[path] = data
    return out


# Written by background projection delivery at any time (acknowledged outbox events are deleted).
PROJECTION_BOOKKEEPING = ("memory_outbox", "memory_state/projection_lease", "knowledge_nodes", "knowledge_edges")


def _excluded(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def user_doc_count(ctx: Any, uid: str, *, exclude: tuple[str, ...] = ()) -> int:
    """How many documents exist under ``users/{uid}``, counted recursively; paths equal to or under
    a prefix in ``exclude`` (e.g. :data:`PROJECTION_BOOKKEEPING`) are not counted."""
    return sum(1 for path in user_documents(ctx, uid) if not _excluded(path, exclude))


def assert_nothing_written(ctx: Any, uid: str, before: dict[str, dict[str, Any]]) -> None:
    """Compared with ``before`` (a :func:`user_documents` result): no document was created anywhere
    under the user, and none changed outside :data:`PROJECTION_BOOKKEEPING` (which background
    delivery may still be draining or deleting)."""
    after = user_documents(ctx, uid)
    # Late background delivery of earlier steps may still create its own bookkeeping (the drain
    # lease, graph projection rows); a new outbox event or any data document still fails here.
    background = tuple(p for p in PROJECTION_BOOKKEEPING if p != "memory_outbox")
    created = sorted(p for p in set(after) - set(before) if not _excluded(p, background))
    assert not created, f"documents were written: {created}"
    changed = sorted(p for p in after if not _excluded(p, PROJECTION_BOOKKEEPING) and after[p] != before[p])
    assert not changed, f"documents were changed: {changed}"
    removed = sorted(p for p in set(before) - set(after) if not _excluded(p, PROJECTION_BOOKKEEPING))
    assert not removed, f"documents were removed: {removed}"


def snapshot_user(ctx: Any, uid: str, *, exclude: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """:func:`user_documents` minus the collections named in ``exclude`` (first path segment);
    compare two snapshots with ``==`` to prove an operation changed nothing."""
    return {p: d for p, d in user_documents(ctx, uid).items() if p.split("/", 1)[0] not in exclude}


CANONICAL_COLLECTIONS = ("memory_items", "memory_commits", "memory_operations", "memory_graph_assertions",
                         "memory_review_queue")


def canonical_snapshot(ctx: Any, uid: str) -> dict[str, dict[str, Any]]:
    """The canonical state only: items, commits, operations, graph assertions, review rows and the
    apply control doc. Projection bookkeeping (outbox, drain lease, knowledge graph), which the
    stack's background delivery rewrites at any time, is left out."""
    out: dict[str, dict[str, Any]] = {}
    for name in CANONICAL_COLLECTIONS:
        out.update(_walk(ctx.paths.col(uid, name), name))
    control = ctx.paths.control(uid).get()
    if control.exists:
        out["memory_state/apply_control"] = control.to_dict()
    return out


def ledger_head(ctx: Any, uid: str) -> dict[str, Any]:
    """``memory_state/apply_control`` (``sequence``, ``head_commit_id``); zeros when absent."""
    snap = ctx.paths.control(uid).get()
    return snap.to_dict() if snap.exists else {"sequence": 0, "head_commit_id": None}


# -------------------------------------------------------------------------------------- assertions
def assert_all_items_legal(ctx: Any, uid: str) -> dict[str, dict[str, Any]]:
    """Every stored item's (layer, status, processing_state) is legal per the legal-states table (docs/data-model.md) (the tests' own
    reference model, :mod:`tests.support.spec_model`); returns the items."""
    items = all_items(ctx, uid)
    bad = {mid: (d.get("layer"), d.get("status"), d.get("processing_state")) for mid, d in items.items()
           if not legal(d.get("layer"), d.get("status"), d.get("processing_state"))}
    assert not bad, f"illegal stored state combinations: {bad}"
    return items


def assert_ledger_gapless(ctx: Any, uid: str) -> list[dict[str, Any]]:
    """Commit sequences are exactly 1..N, each commit's parent is the previous commit, the control
    doc's head is the last commit and every item's ledger fields name a real commit. Returns the
    commits oldest first."""
    commits = sorted(all_docs(ctx, uid, "memory_commits").values(), key=lambda c: c["sequence"])
    sequences = [c["sequence"] for c in commits]
    assert sequences == list(range(1, len(commits) + 1)), f"ledger sequences are not 1..N: {sequences}"
    parent = None
    for commit in commits:
        assert commit.get("parent_commit_id") == parent, (
            f"commit {commit['sequence']} has parent {commit.get('parent_commit_id')}, expected {parent}")
        parent = commit["commit_id"]
    head = ledger_head(ctx, uid)
    assert head.get("sequence", 0) == len(commits), f"head sequence {head.get('sequence')} != {len(commits)}"
    assert head.get("head_commit_id") == parent, "head does not point at the last commit"
    by_id = {c["commit_id"]: c for c in commits}
    for mid, item in all_items(ctx, uid).items():
        commit = by_id.get(item.get("ledger_commit_id"))
        assert commit is not None, f"item {mid} names unknown commit {item.get('ledger_commit_id')}"
        assert commit["sequence"] == item.get("ledger_sequence"), f"item {mid} ledger_sequence mismatch"
        assert mid in commit.get("memory_ids", []), f"item {mid} not listed in its commit"
    return commits


def assert_no_text_anywhere(ctx: Any, uid: str, needle: str, *, allowed_collections: tuple[str, ...] = ()) -> None:
    """``needle`` (case-insensitive) appears in no document under ``users/{uid}`` except those whose
    first path segment is in ``allowed_collections`` (e.g. the upstream ``conversations``)."""
    lowered = needle.casefold()
    hits = [path for path, data in user_documents(ctx, uid).items()
            if path.split("/", 1)[0] not in allowed_collections
            and lowered in json.dumps(data, default=str).casefold()]
    assert not hits, f"{needle!r} found in {hits}"


# ----------------------------------------------------------------------------------------- waiting
def wait_for(probe: Callable[[], T], *, timeout: float = 10.0, interval: float = 0.05,
             what: str = "condition") -> T:
    """Poll ``probe`` until it returns something truthy; return it, or fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def relay_deliveries(stack: dict[str, Any], document: str, function: str = "on_conversation_complete") -> int:
    """How many trigger events for ``document`` (e.g. ``users/u/conversations/c``) the local
    Eventarc relay has delivered to ``function`` and seen answered 2xx (read from its log). A
    negative check waits for this count to grow before it asserts that nothing changed: it then
    knows the event it is about has been processed, instead of hoping a sleep was long enough."""
    log = Path(stack["state_dir"]) / "logs" / "relay.log"
    import re

    url = str(stack["function_urls"][function]).rstrip("/")
    if not log.exists():
        return 0
    pattern = re.compile(rf" delivered \S+ {re.escape(document)} id=\S+ to {re.escape(url)}/? ")
    return sum(1 for line in log.read_text(errors="replace").splitlines() if pattern.search(line))


# ------------------------------------------------------------------------------------ sample data
def conversations_dir() -> Path:
    """The repository's sample conversations (``strata_dev.samples``; ``STRATA_SAMPLES_DIR``
    overrides)."""
    return samples_dir()


def sample_conversations() -> dict[str, dict[str, Any]]:
    """The sample conversations keyed by their ``id``."""
    return {doc["id"]: doc for doc in load_samples().values()}


def write_conversation(ctx: Any, uid: str, conversation_id: str, doc: dict[str, Any]) -> None:
    """Write a conversation document the way an app does (admin client, no API)."""
    from datetime import UTC, datetime

    data = {k: v for k, v in doc.items() if k != "id"}
    now = datetime.now(UTC)
    data.setdefault("created_at", now)
    data.setdefault("finished_at", now)
    ctx.paths.doc(uid, "conversations", conversation_id).set(data)


WIPE_RECEIPT_FIELDS = {"kind", "created_at", "expire_at", "stores"}


def assert_wipe_receipt_content_free(ctx: Any, uid: str, receipt_id: str) -> None:
    """The one record an account wipe leaves on purpose besides its fence (``account_deletions``)
    and the scheduling registry: its receipt, at ``deletion_receipts/{sha256(uid:receipt_id)}``,
    with exactly the kind, the times and the per-store confirmations (every store confirmed), no
    uid, no id of anything deleted and no text."""
    import hashlib

    key = hashlib.sha256(f"{uid}:{receipt_id}".encode()).hexdigest()
    snap = ctx.client.collection("deletion_receipts").document(key).get()
    assert snap.exists, f"the wipe's receipt {receipt_id} is missing"
    data = snap.to_dict() or {}
    assert set(data) == WIPE_RECEIPT_FIELDS, f"the wipe's receipt holds more than ids and times: {sorted(data)}"
    assert data["kind"] == "account"
    stores = data["stores"]
    assert set(stores) == {"memory_items", "review_queue", "graph", "keyword_index", "vector_index"}
    assert all(hasattr(value, "isoformat") for value in stores.values()), f"a store is not confirmed: {stores}"
    assert hasattr(data["created_at"], "isoformat") and hasattr(data["expire_at"], "isoformat")

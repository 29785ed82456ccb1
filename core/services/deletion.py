"""Deletes that stick: one memory's lineage, everything, a conversation's contribution.

Every delete is a canonical apply (tombstone, content cleared, evidence scrubbed, graph assertion
removed, review rows redacted); provider cleanup follows through the outbox, so a delete is durable
and reported as done even while Typesense or Pinecone are down — they converge when they return.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from functools import partial
from typing import Any

from core.domain import deletion_planners, fence, ids, legacy_rows, paths, planners
from core.domain.changes import Change
from core.domain.documents import ApplyControl, CaptureRun, CascadeProgress, OperationJournal
from core.domain.plan import MAX_ITEMS_PER_APPLY, Page, Planner
from core.domain.records import MemoryItem
from core.domain.withdrawal import scrubbed
from core.errors import (
    CohortMoved,
    Conflict,
    GenerationChanged,
    LineageMoved,
    Locked,
    NotFound,
    RetryableError,
    WritesBlocked,
)
from core.ports import Ports, Write
from core.services import legacy, receipts
from core.services.withdrawal import live_page, review_rows

TOMBSTONE_BATCH = 100
SCAN_PAGE = 5_000  # delete-all reads the ids to tombstone (keys only) in cursor pages of this many
MAX_RESCANS = 6
MAX_BATCHES = 2_000  # delete-all: at most this many pages of SCAN_PAGE ids a round; every loop here is bounded
CASCADE_PAGE = 100
MAX_PAGES = 2_000
NOT_DELETED = ["active", "superseded", "hidden"]  # every physical status but tombstoned


LEGACY_BATCH = 100


def _item(ctx: Ports, uid: str, memory_id: str) -> MemoryItem | None:
    data = ctx.store.get(paths.memory_item(uid, memory_id))
    return MemoryItem.from_store(data) if data is not None else None


def intent(ctx: Ports, uid: str, request_key: str | None) -> dict[str, Any]:
    """What makes one user intent's operation key unique: the client's ``Idempotency-Key`` when it
    sent one (a retried request replays), else the ledger head read before the operation (a later
    intent reads a later head, so it never replays an earlier one; a retry at the same head does)."""
    if request_key:
        return {"request": request_key}
    return {"head": ctx.store.head_sequence(uid)}


def scan_lineage(ctx: Ports, uid: str, memory_id: str, ties: set[str] | None = None) -> set[str]:
    """Survivor and aliases (transitively), read outside the transaction; ``ties`` collects the
    memories an ending links to the lineage (read by the delete, never deleted with it)."""
    seen: set[str] = set()
    frontier = [memory_id]
    while frontier and len(seen) < 200:
        current = frontier.pop()
        if current in seen:
            continue
        seen.add(current)
        item = _item(ctx, uid, current)
        if item is None:
            continue
        linked = deletion_planners.linked(item)
        if ties is not None:
            ties |= deletion_planners.endings_of(item)
        for row in ctx.store.query("items_by_canonical", {"canonical_memory_id": current}, parent=paths.user(uid),
                                   limit=200, keys_only=True):
            linked.add(row.id)
        frontier.extend(linked - seen)
    return seen


def delete_memory(ctx: Ports, uid: str, memory_id: str, request_key: str | None = None) -> dict[str, Any]:
    """Tombstone the whole lineage of ``memory_id``, whatever the status of its members (a hidden,
    i.e. rejected, item is scrubbed too). A privacy delete re-checks the lineage inside the
    transaction; if it grew since the scan, it rescans the union and tries again. The tombstones are
    marked as the user's delete, so re-extracting the same words from the same source does not bring
    the fact back. Deleting a deleted memory is 404 and writes nothing."""
    if request_key:
        key = {"memory_id": memory_id, **intent(ctx, uid, request_key)}
        journal = paths.operation(uid, ids.operation_id(uid, "delete.memory", key))
        if (stored := ctx.store.get(journal)) is not None:
            done = OperationJournal.from_store(stored)
            return _memory_receipt(ctx, uid, key, {"deleted": done.summary.get("tombstoned", []),
                                                   "commit_id": done.commit_id})
        first = _item(ctx, uid, memory_id)
    else:  # the ledger head (intent's key) and the item in one round trip
        item_path = paths.memory_item(uid, memory_id)
        found = ctx.store.get_all([paths.control(uid), item_path])
        key = {"memory_id": memory_id, "head": ApplyControl.from_store(found[paths.control(uid)]).sequence}
        first = MemoryItem.from_store(data) if (data := found[item_path]) is not None else None
    if first is None:
        if legacy.get(ctx, uid, memory_id) is None:
            raise NotFound("no such memory")
        try:
            return _delete_historical(ctx, uid, memory_id, key)
        except LineageMoved:  # materialised meanwhile: delete the canonical item below
            first = _item(ctx, uid, memory_id)
    if first is None or scrubbed(first):
        raise NotFound("no such memory")
    if first.locked:
        raise Locked("this memory is locked; unlock it to delete it")
    return _delete_lineage(ctx, uid, memory_id, key)


def _delete_lineage(ctx: Ports, uid: str, memory_id: str, key: dict[str, Any]) -> dict[str, Any]:
    """Tombstone the lineage of the canonical ``memory_id`` in one apply, rescanning it while it
    grows under the delete; the answer with its receipt id."""
    ties: set[str] = set()
    lineage = scan_lineage(ctx, uid, memory_id, ties)
    for _ in range(MAX_RESCANS):
        reviews = review_rows(ctx, uid, lineage)
        planner = partial(deletion_planners.delete_lineage, memory_id=memory_id, lineage=frozenset(lineage),
                          reviews=reviews)
        try:
            return _delete_once(ctx, uid, memory_id, key, planner, item_ids=lineage | ties,
                                item_queries={"aliases": ("items_by_canonical", {"canonical_memory_id": memory_id})},
                                doc_paths=[paths.rel(paths.REVIEW_QUEUE, r) for r in reviews])
        except LineageMoved:
            lineage |= set().union(*(scan_lineage(ctx, uid, m, ties) for m in list(lineage)))
    raise Conflict("the memory kept changing while it was being deleted; try again", code="delete_contended")


def _delete_historical(ctx: Ports, uid: str, memory_id: str, key: dict[str, Any]) -> dict[str, Any]:
    """Delete a historical row: its canonical tombstone (same id, marked as the user's delete) is
    built from the rows read in the apply's transaction, and written with the rows' removal and the
    receipt (the tombstone's outbox delete removes any provider row of the id, the old vector
    included)."""
    planner = partial(deletion_planners.delete_historical, memory_id=memory_id, sensitivity=ctx.sensitivity)
    return _delete_once(ctx, uid, memory_id, key, planner, item_ids=[memory_id])


def _delete_once(ctx: Ports, uid: str, memory_id: str, key: dict[str, Any], planner: Planner, *,
                 item_ids: Iterable[str], doc_paths: Iterable[str] = (), **reads: Any) -> dict[str, Any]:
    """Apply one memory's delete in one commit: the tombstones, the receipt (unless there already)
    and the removal of any historical row of the id (a legacy row, or one an earlier
    materialisation left behind when its cleanup failed), all read in the delete's transaction and
    written with it. A replay, or a delete that committed nothing, removes the rows and issues the
    receipt on their own (both idempotent). The answer with its receipt id."""
    rid = receipts.receipt_id(uid, "delete.memory", key)
    receipt_path = paths.rel(paths.DELETION_RECEIPTS, rid)
    rows = legacy_rows.paths(memory_id)
    plan = partial(deletion_planners.with_receipt, planner=planner, path=receipt_path,
                   receipt=partial(receipts.document, rid, "memory"), removing=rows)
    result = ctx.store.apply(uid, "delete.memory", key, plan, item_ids=item_ids,
                             doc_paths=[receipt_path, *rows, *doc_paths], actor="user", **reads)
    answer = {"deleted": result.summary.get("tombstoned", []), "commit_id": result.commit_id}
    if result.notes.get("receipt"):
        return {**answer, "receipt_id": rid}
    legacy.cleanup(ctx, uid, [memory_id])
    return _memory_receipt(ctx, uid, key, answer)


def _memory_receipt(ctx: Ports, uid: str, key: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """The delete's answer with its receipt id (bound to the operation key: a replay answers the same)."""
    rid = receipts.issue(ctx, uid, "memory", receipts.receipt_id(uid, "delete.memory", key), answer["deleted"])
    return {**answer, "receipt_id": rid}


def tombstone_historical(ctx: Ports, uid: str, memory_ids: list[str], kind: str, key: dict[str, Any], *,
                         by_user: bool = True) -> int:
    """Tombstone the historical rows ``memory_ids`` that no canonical item suppresses yet (one apply,
    locked rows included: a bulk or privacy delete is not a paywalled action) and remove the rows in
    the same commit; an apply that commits nothing (every id canonical already, or replayed)
    removes them by itself. Returns how many were tombstoned; a failed removal is a retryable
    error, since the caller pages by the rows that are left. ``by_user``: the tombstones are the
    user's delete (a reprocess's retraction is not)."""
    rows = [p for mid in memory_ids for p in legacy_rows.paths(mid)]
    plan = partial(deletion_planners.with_rows_removed, rows=rows, planner=partial(
        deletion_planners.tombstone_historical, memory_ids=memory_ids, by_user=by_user,
        sensitivity=ctx.sensitivity))
    result = ctx.store.apply(uid, kind, key, plan, item_ids=memory_ids, doc_paths=rows, actor="user")
    if (result.commit_id is None or result.replayed) and not legacy.cleanup(ctx, uid, memory_ids):
        raise RetryableError("historical memories were deleted but their rows could not be removed yet; "
                             "call again", code="legacy_cleanup_pending")
    return int(result.summary.get("tombstoned", 0))


def _delete_all_historical(ctx: Ports, uid: str, request_key: str | None) -> int:
    total = 0
    for batch_no in range(MAX_BATCHES):
        batch = legacy.first_ids(ctx, uid, LEGACY_BATCH)
        if not batch:
            return total
        key = {"legacy_ids": batch, "head": ctx.store.head_sequence(uid), "request": request_key,
               "batch": batch_no}
        total += tombstone_historical(ctx, uid, batch, "delete.all", key)
    raise Conflict("more historical memories than one delete-all walks; call again", code="delete_all_contended")


def _tombstone_batch(ctx: Ports, uid: str, batch_ids: list[str], request_key: str | None, round_no: int,
                     batch_no: int) -> tuple[int, int]:
    """One bounded delete-all transaction: tombstone ``batch_ids`` (those still live when it reads
    them), drop their graph assertions, redact their review rows. Returns (tombstoned, commits)."""
    reviews = review_rows(ctx, uid, batch_ids)
    plan = partial(deletion_planners.tombstone_batch, reviews=reviews)
    key = {"ids": sorted(batch_ids), "head": ctx.store.head_sequence(uid), "request": request_key,
           "round": round_no, "batch": batch_no}
    result = ctx.store.apply(uid, "delete.all", key, plan, item_ids=batch_ids,
                             doc_paths=[paths.rel(paths.REVIEW_QUEUE, r) for r in reviews], actor="user")
    return int(result.summary.get("tombstoned", 0)), 0 if result.replayed or result.commit_id is None else 1


def delete_all(ctx: Ports, uid: str, request_key: str | None = None) -> dict[str, Any]:
    """Bounded tombstone transactions over every item not yet tombstoned (active, superseded,
    hidden, expired), then a control-fenced rescan until a stable empty set. Each batch's key binds
    the ledger head it read, so no batch ever replays an earlier delete; with an ``Idempotency-Key``
    a retried request replays the recorded answer."""
    done_key = {"request": request_key, "step": "done"}
    journal = paths.operation(uid, ids.operation_id(uid, "delete.all", done_key))
    if request_key and (done := ctx.store.get(journal)) is not None:
        return _all_receipt(ctx, uid, request_key, dict(OperationJournal.from_store(done).summary))
    total = _delete_all_historical(ctx, uid, request_key)
    for round_no in range(MAX_RESCANS):
        head_before = ctx.store.head_sequence(uid)
        ours = 0
        batch_no = 0
        # One scan of the undeleted ids in cursor pages of SCAN_PAGE, tombstoned TOMBSTONE_BATCH at a
        # time. Re-querying from the start for every batch cost a query over the whole collection per
        # 100 memories, quadratic in the memories on a store without the index. Items written behind
        # the cursor meanwhile are found by the rescan below.
        after: Any = None
        for _page in range(MAX_BATCHES):
            page = ctx.store.query("items_by_status", {"status": NOT_DELETED}, parent=paths.user(uid),
                                   limit=SCAN_PAGE, start_after=after, keys_only=True)
            for start in range(0, len(page), TOMBSTONE_BATCH):
                batch_ids = [s.id for s in page[start:start + TOMBSTONE_BATCH]]
                tombstoned, committed = _tombstone_batch(ctx, uid, batch_ids, request_key, round_no, batch_no)
                batch_no += 1
                total += tombstoned
                ours += committed
            if len(page) < SCAN_PAGE:
                break
            after = page[-1]
        # The fence: the rescan is empty and no commit but our own tombstones landed this round.
        remaining = ctx.store.query("items_by_status", {"status": NOT_DELETED}, parent=paths.user(uid), limit=1,
                                    keys_only=True)
        head_after = ctx.store.head_sequence(uid)
        if not remaining and head_after == head_before + ours:
            summary = {"deleted": total, "stable_at_sequence": head_after}
            if request_key:  # an empty plan journals the answer without a commit
                ctx.store.apply(uid, "delete.all", done_key, partial(deletion_planners.answer_only, summary=summary),
                                actor="user")
            return _all_receipt(ctx, uid, request_key, summary)
    raise Conflict("memories kept being written during delete-all; nothing was reported deleted that is not, "
                   "but some memories may remain — try again", code="delete_all_contended")


def _all_receipt(ctx: Ports, uid: str, request_key: str | None, summary: dict[str, Any]) -> dict[str, Any]:
    """Delete-all's answer with its receipt id, bound to the request's key and the sequence the
    delete found stable at (a replay answers the same receipt, already written). The receipt
    holds the count and that sequence rather than the ids, which may not fit one document."""
    stable = int(summary.get("stable_at_sequence", 0))
    rid = receipts.receipt_id(uid, "delete.all", request_key, stable)
    rid = receipts.issue(ctx, uid, "all", rid, (), up_to_sequence=stable, count=int(summary.get("deleted", 0)))
    return {**summary, "receipt_id": rid}


# ------------------------------------------------------------------------------ conversation cascade
def _marker_path(conversation_id: str) -> str:
    return paths.rel(paths.CAPTURE_RUNS, conversation_id)


def cascade_conversation(ctx: Ports, uid: str, conversation_id: str, *,
                         remove_document: bool = False, receipt: bool = False) -> dict[str, Any]:
    """Withdraw the conversation from every memory it supports, in cursor pages.

    Each page is one bounded, control-fenced transaction over the conversation's live cohort: the
    conversation's evidence is tombstoned, memories with no surviving evidence are retracted (marked
    as the user's delete, whatever their status), superseded Long-term items with independent
    evidence come back. The capture marker ``capture_runs/{id}`` is the progress record: the first
    page sets ``cascade.state = running`` (from then on no capture of the conversation writes), each
    page counts itself, and the last one (the page that reads the rest of the cohort: the first,
    for a cohort that fits one page, so a small conversation is retracted in one commit) sets
    ``done`` and — with ``remove_document`` (the API) — deletes the conversation document in the
    same transaction, so the document goes only with its last derived item. The conversation's
    action items and goals go after it. A cascade that fails part-way resumes when called again; a
    cascade of a conversation already done (the delete trigger after the API's cascade) writes no
    ledger commit, and removes workflow rows a failure may have left.

    With ``receipt`` (a user's delete through the API) the answer carries the id of its deletion
    receipt, bound to the cascade's intent: calling again answers the same receipt.
    """
    answer = _cascade(ctx, uid, conversation_id, remove_document)
    run_id = answer.pop("intent")
    if receipt:
        rid = receipts.receipt_id(uid, "delete.conversation", conversation_id, run_id)
        answer["receipt_id"] = receipts.issue(ctx, uid, "conversation", rid, _derived_ids(ctx, uid, conversation_id),
                                              conversation_id=conversation_id)
    return answer


def _derived_ids(ctx: Ports, uid: str, conversation_id: str) -> list[str]:
    """Every memory that ever cited the conversation (the cascade withdrew or retracted each)."""
    found: list[str] = []
    after: Any = None
    for _page in range(MAX_PAGES):
        page = ctx.store.query("items_by_source", {"source_ids": conversation_id}, parent=paths.user(uid),
                               limit=SCAN_PAGE, start_after=after, keys_only=True)
        found.extend(row.id for row in page)
        if len(page) < SCAN_PAGE:
            break
        after = page[-1]
    return found


def _cascade(ctx: Ports, uid: str, conversation_id: str, remove_document: bool) -> dict[str, Any]:
    historical = _cascade_historical(ctx, uid, conversation_id)
    stored = ctx.store.get(paths.capture_run(uid, conversation_id))
    state = CaptureRun.from_store(stored).progress
    if state.state == "done":
        summary = dict(state.summary)
        for name in ("withdrawn", "retracted"):  # historical rows are counted as withdrawn and retracted
            summary[name] = state.total(name) + historical
        # Workflow rows a cascade could not remove after its last page (it stopped there) go now.
        return {**summary, "workflow_removed": _remove_workflow(ctx, uid, conversation_id), "commit_id": None,
                "already_done": True, "intent": state.intent}
    run_id = state.intent or uuid.uuid4().hex
    if stored is None and not live_page(ctx, uid, conversation_id, 1, None):
        # Nothing of the conversation was ever captured (or an account wipe removed it all): no
        # apply, so nothing is written back under a user whose subtree may just have been removed.
        # Unless the account was wiped, a cascade record still says the delete is done, so a
        # capture that failed before the delete and is retried after it (or a late duplicate of
        # the create event) refuses the conversation instead of bringing it back.
        # (A capture that landed just before the record is cascaded the ordinary way.)
        raced = _record_early_delete(ctx, uid, conversation_id, run_id) and live_page(ctx, uid, conversation_id, 1, None)
        if not raced:
            if remove_document:
                ctx.store.write(Change("deletion.uncaptured_conversation",
                                       [Write("delete", paths.conversation(uid, conversation_id))]))
            return {"withdrawn": historical, "retracted": historical,
                    "workflow_removed": _remove_workflow(ctx, uid, conversation_id), "commit_id": None,
                    "intent": run_id}
    totals = dict(state.summary or {"withdrawn": 0, "retracted": 0})
    commit_id, workflow_removed = _cascade_pages(ctx, uid, conversation_id, run_id, remove_document, totals)
    for name in ("withdrawn", "retracted"):
        totals[name] = totals.get(name, 0) + historical
    return {**totals, "workflow_removed": workflow_removed, "commit_id": commit_id, "intent": run_id}


def _cascade_pages(ctx: Ports, uid: str, conversation_id: str, run_id: str, remove_document: bool,
                   totals: dict[str, Any]) -> tuple[str | None, int]:
    """The cascade's pages up to its last, each page's counts added to ``totals``, then the
    conversation's workflow rows. Returns (the last commit id, the workflow rows removed)."""
    commit_id = None
    for _page in range(MAX_PAGES):
        page = _cascade_page(ctx, uid, conversation_id, run_id, remove_document)
        for name in ("withdrawn", "retracted"):
            totals[name] = totals.get(name, 0) + int(page.summary.get(name, 0))
        commit_id = page.commit_id or commit_id
        if page.summary.get("last"):
            # Captures are refused from the first page on (their workflow writes too), so the
            # conversation's action items and goals can go after the last page; a delete trigger
            # finding the cascade done removes any a failure here left.
            return commit_id, _remove_workflow(ctx, uid, conversation_id)
    raise Conflict("the conversation has more derived memories than one delete walks; call again",
                   code="cascade_incomplete")


def _record_early_delete(ctx: Ports, uid: str, conversation_id: str, run_id: str) -> bool:
    """Write the cascade record of a conversation deleted before anything of it was captured
    (fenced by the account generation; never in an account being or once wiped, whose subtree
    must stay empty). True when written."""
    account = ctx.store.read_fence(uid)
    if account.deleting or account.wiped:
        return False
    record = CaptureRun(captures=0, updated_at=ctx.now(), cascade=CascadeProgress(
        state="done", intent=run_id, pages=0, summary={"withdrawn": 0, "retracted": 0})).to_store()
    try:
        with fence.expect(uid, account.generation):
            return bool(ctx.store.write(Change("deletion.early_record",
                                               [Write("set", _marker_path_full(uid, conversation_id), record)],
                                               fenced=uid)))
    except (GenerationChanged, WritesBlocked):
        return False


def _marker_path_full(uid: str, conversation_id: str) -> str:
    return paths.capture_run(uid, conversation_id)


def _cascade_historical(ctx: Ports, uid: str, conversation_id: str) -> int:
    return retract_historical(ctx, uid, conversation_id, "delete.conversation", by_user=True)


def retract_historical(ctx: Ports, uid: str, conversation_id: str, kind: str, *, by_user: bool,
                       key: dict[str, Any] | None = None) -> int:
    """Tombstone the historical rows that cite the conversation (a legacy row has one source, so
    withdrawing it retracts the memory), in bounded batches, and remove the rows; the tombstones'
    outbox deletes remove any provider row of their ids, a legacy ``{uid}-{id}`` vector included.
    The conversation delete (``by_user``) and a successful re-extraction (Q7: it replaces the source
    across all stores and vectors) both call it. Returns how many were tombstoned."""
    total = 0
    for batch_no in range(MAX_PAGES):
        batch = legacy.ids_citing(ctx, uid, conversation_id, LEGACY_BATCH)
        if not batch:
            return total
        batch_key = {**(key or {}), "source": conversation_id, "legacy_ids": batch, "batch": batch_no,
                     "head": ctx.store.head_sequence(uid)}
        total += tombstone_historical(ctx, uid, batch, kind, batch_key, by_user=by_user)
    raise Conflict("the conversation has more historical memories than one delete walks; call again",
                   code="cascade_incomplete")


def _cascade_page(ctx: Ports, uid: str, conversation_id: str, run_id: str, remove_document: bool) -> Any:
    marker_path = _marker_path(conversation_id)
    conversation_path = paths.rel(paths.CONVERSATIONS, conversation_id)
    for _attempt in range(6):
        page_ids = live_page(ctx, uid, conversation_id, CASCADE_PAGE, None)
        reviews = review_rows(ctx, uid, page_ids)
        seen = frozenset(page_ids)

        plan = partial(planners.cascade_page, conversation_id=conversation_id, run_id=run_id, seen=seen,
                       reviews=reviews, remove_document=remove_document)
        pages_done = _pages_done(ctx, uid, conversation_id)
        key = {"source": conversation_id, "intent": run_id, "page": pages_done}
        try:
            return ctx.store.apply(
                uid, "delete.conversation", key, plan,
                item_queries={"cohort": ("items_by_active_source", {"active_source_ids": conversation_id},
                                         Page(CASCADE_PAGE))},
                follow_lineage=True, actor="user",
                doc_paths=[marker_path, conversation_path, *(paths.rel(paths.REVIEW_QUEUE, r) for r in reviews)])
        except CohortMoved:
            continue
    raise CohortMoved("the conversation's memories kept changing during the delete; try again")


def _pages_done(ctx: Ports, uid: str, conversation_id: str) -> int:
    return CaptureRun.from_store(ctx.store.get(paths.capture_run(uid, conversation_id))).progress.pages


WORKFLOW = ((paths.ACTION_ITEMS, "action_items_by_conversation"), (paths.GOALS, "goals_by_conversation"))


def _remove_workflow(ctx: Ports, uid: str, conversation_id: str) -> int:
    """Delete the conversation's action items and goals in bounded batches."""
    removed = 0
    for _collection, query in WORKFLOW:
        for _batch in range(MAX_PAGES):
            rows = ctx.store.query(query, {"conversation_id": conversation_id}, parent=paths.user(uid),
                                   limit=MAX_ITEMS_PER_APPLY, keys_only=True)
            if not rows:
                break
            ctx.store.write(Change("deletion.workflow_rows", [Write("delete", row.path) for row in rows]))
            removed += len(rows)
    return removed

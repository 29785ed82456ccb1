"""The apply transaction: the one way canonical memory state changes.

One Firestore transaction per canonical mutation. It reads first — the per-user control doc
(``memory_state/apply_control``: head commit, gapless sequence, account generation,
``writes_blocked``), the global incident switches, the account-deletion fence, the operation doc
(idempotency) and every touched item/document — then hands a read-only :class:`ApplyView` to a
*planner* (pure, may run more than once when the SDK retries on contention) and writes, together:
the commit, the new head, the operation journal, the items (each validated for legality per docs/data-model.md), the
extra documents the plan names and one outbox event per changed item.

Replaying an operation id that is already journaled is a no-op that returns the original result.
Work that declared the account generation it started in (:mod:`core.adapters.firestore.fence`) is
refused when the wipe record shows another one; the control doc mirrors the current generation.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.adapters.firestore import fence
from core.adapters.firestore.client import Paths
from core.adapters.firestore.queries import build
from core.domain import ids
from core.domain.plan import (
    MAX_ITEMS_PER_APPLY,
    ApplyResult,
    ApplyView,
    ItemQuery,
    ItemValidator,
    OutboxAction,
    Page,
    Plan,
    Planner,
    is_projectable,
    outbox_event,
    split_doc_path,
)
from core.domain.records import MemoryItem
from core.errors import Conflict, RetryableError, StrataError, WritesBlocked, WritesDisabled

log = logging.getLogger(__name__)

__all__ = ["MAX_ITEMS_PER_APPLY", "ApplyEngine", "ApplyResult", "ApplyView", "ItemQuery", "ItemValidator",
           "OutboxAction", "Page", "Plan", "Planner", "head_sequence", "is_projectable", "journaled"]

# Applies for one user all read and write its control doc, so concurrent ones in one process (a
# function instance serving several triggers) only deadlock on its lock, wait for the lock timeout
# and back off for seconds; queueing them here instead costs nothing. Shared by every engine of the
# process (so two contexts cannot bypass each other) and striped, so memory stays bounded.
_USER_LOCKS = [threading.Lock() for _ in range(64)]
_split = split_doc_path


@dataclass(frozen=True)
class _Call:
    """One ``apply`` call's arguments, normalised (what every step of its transaction reads)."""

    uid: str
    kind: str
    op_id: str
    item_ids: list[str]
    doc_paths: list[str]
    actor: str
    bypass_account_fence: bool
    now: datetime | None
    item_queries: Mapping[str, ItemQuery]
    follow_lineage: bool


@dataclass
class _Reads:
    """Everything the read step fetched in the transaction, by document path."""

    control_ref: Any
    op_ref: Any
    item_refs: dict[str, Any]  # memory id → ref: named items, queried items and their lineage
    doc_refs: dict[str, Any]  # "collection/id" → ref
    snaps: dict[str, Any]
    queried: dict[str, list[str]]
    more: dict[str, bool]

    def data(self, ref: Any) -> dict[str, Any] | None:
        snap = self.snaps.get(ref.path)
        return snap.to_dict() if snap is not None and snap.exists else None


class ApplyEngine:
    def __init__(self, client: Any, *, on_committed: Callable[[str, int], None] | None = None,
                 validators: Iterable[ItemValidator] = (), max_attempts: int = 15,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.client = client
        self.paths = Paths(client)
        self.on_committed = on_committed
        self.validators = list(validators)
        self.max_attempts = max_attempts
        self.clock = clock or (lambda: datetime.now(UTC))
        self._user_locks = _USER_LOCKS

    def apply(self, uid: str, kind: str, key: Any, planner: Planner, *, item_ids: Iterable[str] = (),
              doc_paths: Iterable[str] = (), actor: str = "system", bypass_account_fence: bool = False,
              now: datetime | None = None, item_queries: Mapping[str, ItemQuery] | None = None,
              follow_lineage: bool = False) -> ApplyResult:
        """Run ``planner`` in one transaction and commit what it returns.

        ``item_queries`` (label → (query name, params)) are run *inside* the transaction, so the
        cohort a planner sees cannot change under it; their items join ``view.items`` and may be
        written. A query given a :class:`Page` reads one cursor page (``view.more`` tells whether
        items follow); an unpaged one refuses a cohort over the apply's item limit. With
        ``follow_lineage`` the items those reference through ``supersedes`` /
        ``canonical_memory_id`` are read too. Graph assertions and other documents are read only when
        named in ``doc_paths``.

        The transaction runs these steps in order: :meth:`_read`, replay of a journaled operation,
        :meth:`_fence`, the planner, then per item :meth:`_stamp` and :meth:`_validate`, then
        :meth:`_outbox` and :meth:`_commit`.
        """
        call = _Call(uid=uid, kind=kind, op_id=ids.operation_id(uid, kind, key), item_ids=sorted(set(item_ids)),
                     doc_paths=sorted(set(doc_paths)), actor=actor, bypass_account_fence=bypass_account_fence,
                     now=now, item_queries=item_queries or {}, follow_lineage=follow_lineage)
        if len(call.item_ids) > MAX_ITEMS_PER_APPLY:
            raise Conflict(f"an apply may touch at most {MAX_ITEMS_PER_APPLY} items", code="too_many_items")
        result = self._transact(call, planner)
        if not result.replayed and result.outbox_events and self.on_committed is not None:
            try:
                self.on_committed(uid, result.sequence or 0)
            except Exception:  # the scheduled sweep recovers a lost nudge
                log.warning("projection nudge for %s failed; the sweep will pick it up", uid, exc_info=True)
        return result

    # ------------------------------------------------------------------ the transaction
    def _transact(self, call: _Call, planner: Planner) -> ApplyResult:
        """Run the steps in one Firestore transaction, one at a time per user in this process."""
        from google.cloud import firestore

        @firestore.transactional
        def run(transaction: Any) -> ApplyResult:
            return self._steps(transaction, call, planner)

        try:
            with self._user_locks[zlib.crc32(call.uid.encode()) % len(self._user_locks)]:
                result: ApplyResult = run(self.client.transaction(max_attempts=self.max_attempts))
        except StrataError:
            raise
        except Exception as exc:
            # Contention the SDK gave up on (Aborted, "Failed to commit transaction in N attempts")
            # or a transient RPC failure: nothing was committed, the caller may retry.
            from google.api_core import exceptions as gexc

            if isinstance(exc, gexc.Aborted | gexc.ServiceUnavailable | gexc.DeadlineExceeded) or (
                    isinstance(exc, ValueError) and "Failed to commit transaction" in str(exc)):
                raise RetryableError(f"the {call.kind} transaction for this user was contended; retry",
                                     code="contended") from exc
            raise
        return result

    def _steps(self, transaction: Any, call: _Call, planner: Planner) -> ApplyResult:
        moment = call.now or self.clock()
        reads = self._read(transaction, call)
        op = reads.data(reads.op_ref)
        if op is not None:  # a replay: the journaled result, nothing written
            return ApplyResult(call.op_id, op.get("commit_id"), op.get("sequence"), True,
                               list(op.get("changed_ids", [])), dict(op.get("summary", {})),
                               int(op.get("outbox_events", 0)))
        control = reads.data(reads.control_ref) or {"sequence": 0, "head_commit_id": None, "account_generation": 0,
                                                    "writes_blocked": False}
        deletion = self._fence(call, reads, control)
        sequence = int(control.get("sequence", 0)) + 1
        view = ApplyView(
            uid=call.uid, now=moment, control=control,
            items={mid: (MemoryItem.from_store(d) if (d := reads.data(ref)) else None)
                   for mid, ref in reads.item_refs.items()},
            docs={p: reads.data(ref) for p, ref in reads.doc_refs.items()},
            sequence=sequence, commit_id=ids.commit_id(call.uid, sequence, call.op_id), operation_id=call.op_id,
            queried=reads.queried, more=reads.more,
        )
        plan = planner(view)
        if plan.empty:
            return self._noop(transaction, call, reads, plan, moment)
        changes = []
        for item in plan.items:
            previous = self._stamp(item, call, reads, view, moment)
            self._validate(item, view, plan)
            changes.append({"memory_id": item.id, "revision": item.revision, "layer": item.layer,
                            "status": item.status, "processing_state": item.processing_state,
                            "content_hash": item.content_hash,
                            "action": "create" if previous is None else "update"})
        outbox = self._outbox(call, plan)
        return self._commit(transaction, call, reads, view, plan, changes, outbox, deletion, moment)

    def _read(self, transaction: Any, call: _Call) -> _Reads:
        """Read step: the item queries (and the lineage they reference), then in one ``get_all`` the
        control doc, the incident switches, the account fence, the operation doc and every named
        item and document."""
        from core.adapters.firestore.wire import get_all

        paths, uid = self.paths, call.uid
        control_ref = paths.control(uid)
        op_ref = paths.doc(uid, "memory_operations", call.op_id)
        fixed = [control_ref, paths.global_controls(), paths.account_deletion(uid), op_ref]
        item_refs = {mid: paths.doc(uid, "memory_items", mid) for mid in call.item_ids}
        doc_refs = {p: paths.doc(uid, *_split(p)) for p in call.doc_paths}
        queried: dict[str, list[str]] = {}
        more: dict[str, bool] = {}
        extra_snaps: list[Any] = []
        for label, spec in call.item_queries.items():
            found = self._query(transaction, uid, spec, label, more)
            queried[label] = [snap.id for snap in found]
            extra_snaps.extend(found)
        for snap in extra_snaps:
            item_refs.setdefault(snap.id, snap.reference)
        if call.follow_lineage:
            linked: set[str] = set()
            for snap in extra_snaps:
                fields = snap.to_dict() or {}
                linked.update(fields.get("supersedes") or [])
                if fields.get("canonical_memory_id"):
                    linked.add(fields["canonical_memory_id"])
            for mid in sorted(linked - set(item_refs)):
                item_refs[mid] = paths.doc(uid, "memory_items", mid)
        snaps = {snap.reference.path: snap for snap in extra_snaps}  # already read by the queries
        refs = [r for r in fixed + list(item_refs.values()) + list(doc_refs.values()) if r.path not in snaps]
        snaps.update({s.reference.path: s for s in get_all(self.client, refs, transaction)})
        return _Reads(control_ref, op_ref, item_refs, doc_refs, snaps, queried, more)

    def _query(self, transaction: Any, uid: str, spec: ItemQuery, label: str, more: dict[str, bool]) -> list[Any]:
        """One item query in the transaction: a cursor page (``more[label]``: items follow), or the
        whole cohort, refused when it exceeds the apply's item limit."""
        query_name, params = spec[0], spec[1]
        page = spec[2] if len(spec) > 2 else None
        items = self.paths.col(uid, "memory_items")
        if page is not None:
            size = max(1, min(page.size, MAX_ITEMS_PER_APPLY))
            cursor = {"__name__": page.after} if page.after else None
            found = list(transaction.get(build(items, query_name, params, limit=size + 1, start_after=cursor)))
            more[label], found = len(found) > size, found[:size]
            return found
        found = list(transaction.get(build(items, query_name, params, limit=MAX_ITEMS_PER_APPLY + 1)))
        if len(found) > MAX_ITEMS_PER_APPLY:
            raise Conflict(f"more than {MAX_ITEMS_PER_APPLY} items match; this operation must be split",
                           code="too_many_items")
        return found

    def _fence(self, call: _Call, reads: _Reads, control: dict[str, Any]) -> dict[str, Any] | None:
        """Fence step: work of an older account generation, the incident switch, an account being
        deleted and a blocked account write nothing. Returns the account-deletion record."""
        deletion = reads.data(self.paths.account_deletion(call.uid))
        fence.check(call.uid, deletion)  # work of an older account generation writes nothing
        if (reads.data(self.paths.global_controls()) or {}).get("writes_disabled"):
            raise WritesDisabled("writes are disabled by an incident switch; try again later")
        if not call.bypass_account_fence:
            if deletion is not None and deletion.get("state") != "completed":
                raise WritesBlocked("this account is being deleted; writes are refused")
            if control.get("writes_blocked"):
                raise WritesBlocked("writes are blocked for this account")
        return deletion

    def _noop(self, transaction: Any, call: _Call, reads: _Reads, plan: Plan, moment: datetime) -> ApplyResult:
        """An empty plan journals a no-op (so a replay repeats nothing), unless nothing was ever
        committed for this account."""
        from core.adapters.firestore.wire import set_document

        if reads.data(reads.control_ref) is not None:
            set_document(transaction, reads.op_ref, {"operation_id": call.op_id, "kind": call.kind, "commit_id": None,
                                           "sequence": None, "changed_ids": [], "summary": plan.summary,
                                           "created_at": moment, "noop": True})
        # Otherwise (a new or wiped account) journaling would create the first document under
        # users/{uid} (e.g. a late delete trigger of a wiped conversation) and there is nothing a
        # replay could repeat.
        return ApplyResult(call.op_id, None, None, False, [], plan.summary)

    def _stamp(self, item: MemoryItem, call: _Call, reads: _Reads, view: ApplyView,
               moment: datetime) -> MemoryItem | None:
        """Stamp step: an item the transaction read, of this user, gets its next revision, its
        times and this commit, then is settled (derived fields, legality per docs/data-model.md). Returns the stored
        version it replaces (None for a new item)."""
        if item.id not in reads.item_refs:  # every written item was read in this transaction
            raise StrataError(f"planner wrote item {item.id} it did not declare as read")
        if item.uid != call.uid:
            raise StrataError("planner wrote an item of another user")
        previous = view.items.get(item.id)
        item.revision = view.next_revision(item.id)
        item.created_at = previous.created_at if previous and previous.created_at else (item.created_at or moment)
        item.updated_at = moment
        item.ledger_commit_id = view.commit_id
        item.ledger_sequence = view.sequence
        item.settle()
        return previous

    def _validate(self, item: MemoryItem, view: ApplyView, plan: Plan) -> None:
        """Validate step: every registered validator (e.g. admission receipts) may refuse the item."""
        for validate in self.validators:
            validate(item, view, plan)

    @staticmethod
    def _outbox(call: _Call, plan: Plan) -> list[OutboxAction]:
        """Outbox step: one upsert (projectable) or delete per written item, then the plan's own."""
        outbox = [OutboxAction(item.id, "upsert" if is_projectable(item) else "delete", call.kind)
                  for item in plan.items]
        outbox.extend(plan.outbox)
        return outbox

    def _commit(self, transaction: Any, call: _Call, reads: _Reads, view: ApplyView, plan: Plan,
                changes: list[dict[str, Any]], outbox: list[OutboxAction], deletion: dict[str, Any] | None,
                moment: datetime) -> ApplyResult:
        """Commit step: the items, the plan's documents, the outbox events, the commit, the new head
        and the operation journal, all in this transaction."""
        from core.adapters.firestore.wire import set_document

        paths, uid, commit, sequence = self.paths, call.uid, view.commit_id, view.sequence
        for item in plan.items:
            set_document(transaction, reads.item_refs[item.id], item.to_store())
        for path, payload in plan.docs.items():
            ref = reads.doc_refs.get(path) or paths.doc(uid, *_split(path))
            if payload is None:
                transaction.delete(ref)
            else:
                set_document(transaction, ref, payload)
        items_by_id = {i.id: i for i in plan.items}
        for action in outbox:
            event_id, event = outbox_event(uid, commit, sequence, action, items_by_id.get(action.memory_id),
                                           call.kind, moment)
            set_document(transaction, paths.doc(uid, "memory_outbox", event_id), event)
        changed_ids = [i.id for i in plan.items]
        set_document(transaction, paths.doc(uid, "memory_commits", commit), {
            "commit_id": commit, "sequence": sequence, "parent_commit_id": view.control.get("head_commit_id"),
            "operation_id": call.op_id, "kind": call.kind, "actor": call.actor, "changes": changes,
            "doc_writes": sorted(plan.docs), "created_at": moment, "memory_ids": changed_ids,
        })
        set_document(transaction, reads.control_ref, {
            "sequence": sequence, "head_commit_id": commit, "updated_at": moment,
            "account_generation": fence.of(deletion).generation,
            "writes_blocked": bool(view.control.get("writes_blocked", False)),
        })
        set_document(transaction, reads.op_ref, {"operation_id": call.op_id, "kind": call.kind, "commit_id": commit,
                                       "sequence": sequence, "changed_ids": changed_ids, "summary": plan.summary,
                                       "created_at": moment, "outbox_events": len(outbox)})
        return ApplyResult(call.op_id, commit, sequence, False, changed_ids, plan.summary, len(outbox))


def head_sequence(client: Any, uid: str) -> int:
    """The user's current ledger sequence, read outside any transaction (0 before the first commit)."""
    snap = Paths(client).control(uid).get()
    return int((snap.to_dict() or {}).get("sequence", 0)) if snap.exists else 0


def journaled(client: Any, uid: str, kind: str, key: Any) -> dict[str, Any] | None:
    """The journal entry of operation (``kind``, ``key``) when it already ran (a retried request
    replays it instead of running again), else None."""
    snap = Paths(client).doc(uid, "memory_operations", ids.operation_id(uid, kind, key)).get()
    return snap.to_dict() if snap.exists else None

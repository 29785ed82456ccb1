"""The apply transaction: the one way canonical memory state changes.

One Firestore transaction per canonical mutation. It reads first — the per-user control doc
(``memory_state/apply_control``: head commit, gapless sequence, account generation,
``writes_blocked``), the global incident switches, the account-deletion fence, the operation doc
(idempotency) and every touched item/document — then hands a read-only :class:`ApplyView` to a
*planner* (pure, may run more than once when the SDK retries on contention) and writes, together:
the commit, the new head, the operation journal, the items (each validated for §1.3 legality), the
extra documents the plan names and one outbox event per changed item.

Replaying an operation id that is already journaled is a no-op that returns the original result.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.adapters.firestore.client import Paths
from core.adapters.firestore.queries import build
from core.domain import ids
from core.domain.records import MemoryItem
from core.domain.visibility import is_default_visible
from core.errors import Conflict, RetryableError, StrataError, WritesBlocked

log = logging.getLogger(__name__)

MAX_ITEMS_PER_APPLY = 200  # 2 writes per item + bookkeeping stays under Firestore's 500-write commit
# Applies for one user all read and write its control doc, so concurrent ones in one process (a
# function instance serving several triggers) only deadlock on its lock, wait for the lock timeout
# and back off for seconds; queueing them here instead costs nothing. Shared by every engine of the
# process (so two contexts cannot bypass each other) and striped, so memory stays bounded.
_USER_LOCKS = [threading.Lock() for _ in range(64)]


@dataclass
class ApplyView:
    """What a planner may look at. Items absent from Firestore map to None."""

    uid: str
    now: datetime
    control: dict[str, Any]
    items: dict[str, MemoryItem | None]
    docs: dict[str, dict[str, Any] | None]
    sequence: int  # the sequence this commit will get
    commit_id: str
    operation_id: str
    queried: dict[str, list[str]] = field(default_factory=dict)  # query label → matching item ids

    def next_revision(self, memory_id: str) -> int:
        current = self.items.get(memory_id)
        return (current.revision if current else 0) + 1


@dataclass
class OutboxAction:
    memory_id: str
    action: str  # upsert | delete | purge_user
    reason: str = ""


@dataclass
class Plan:
    items: list[MemoryItem] = field(default_factory=list)
    docs: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # "collection/id" → data | None
    outbox: list[OutboxAction] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.items or self.docs or self.outbox)


@dataclass
class ApplyResult:
    operation_id: str
    commit_id: str | None
    sequence: int | None
    replayed: bool
    changed_ids: list[str]
    summary: dict[str, Any]
    outbox_events: int = 0


Planner = Callable[[ApplyView], Plan]
ItemValidator = Callable[[MemoryItem, ApplyView, Plan], None]


def is_projectable(item: MemoryItem) -> bool:
    """Visible and unrestricted items are upserted to providers; everything else is delete-only."""
    return is_default_visible(item) and not item.restricted


def _split(path: str) -> tuple[str, str]:
    collection, _, doc_id = path.partition("/")
    if not collection or not doc_id or "/" in doc_id:
        raise ValueError(f"plan document path must be 'collection/id', got {path!r}")
    return collection, doc_id


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
              now: datetime | None = None, item_queries: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None,
              follow_lineage: bool = False) -> ApplyResult:
        """Run ``planner`` in one transaction and commit what it returns.

        ``item_queries`` (label → (query name, params)) are run *inside* the transaction, so the
        cohort a planner sees cannot change under it; their items join ``view.items`` and may be
        written. With ``follow_lineage`` the items those reference through ``supersedes`` /
        ``canonical_memory_id`` are read too. Graph assertions and other documents are read only when
        named in ``doc_paths``.
        """
        from google.cloud import firestore

        op_id = ids.operation_id(uid, kind, key)
        item_ids = sorted(set(item_ids))
        doc_paths = sorted(set(doc_paths))
        if len(item_ids) > MAX_ITEMS_PER_APPLY:  # noqa: SIM102
            raise Conflict(f"an apply may touch at most {MAX_ITEMS_PER_APPLY} items", code="too_many_items")
        paths = self.paths

        @firestore.transactional
        def run(transaction: Any) -> ApplyResult:
            moment = now or self.clock()
            control_ref = paths.control(uid)
            op_ref = paths.doc(uid, "memory_operations", op_id)
            fixed = [control_ref, paths.global_controls(), paths.account_deletion(uid), op_ref]
            item_refs = {mid: paths.doc(uid, "memory_items", mid) for mid in item_ids}
            doc_refs = {p: paths.doc(uid, *_split(p)) for p in doc_paths}
            queried: dict[str, list[str]] = {}
            extra_snaps: list[Any] = []
            for label, (query_name, params) in (item_queries or {}).items():
                query = build(paths.col(uid, "memory_items"), query_name, params, limit=MAX_ITEMS_PER_APPLY + 1)
                found = list(transaction.get(query))
                if len(found) > MAX_ITEMS_PER_APPLY:
                    raise Conflict(f"more than {MAX_ITEMS_PER_APPLY} items match; this operation must be split",
                                   code="too_many_items")
                queried[label] = [snap.id for snap in found]
                extra_snaps.extend(found)
            for snap in extra_snaps:
                item_refs.setdefault(snap.id, snap.reference)
            if follow_lineage:
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
            snaps.update({s.reference.path: s for s in self.client.get_all(refs, transaction=transaction)})

            def data(ref: Any) -> dict[str, Any] | None:
                snap = snaps.get(ref.path)
                return snap.to_dict() if snap is not None and snap.exists else None

            op = data(op_ref)
            if op is not None:
                return ApplyResult(op_id, op.get("commit_id"), op.get("sequence"), True,
                                   list(op.get("changed_ids", [])), dict(op.get("summary", {})),
                                   int(op.get("outbox_events", 0)))
            control = data(control_ref) or {"sequence": 0, "head_commit_id": None, "account_generation": 0,
                                             "writes_blocked": False}
            global_controls = data(paths.global_controls()) or {}
            deletion = data(paths.account_deletion(uid))
            if global_controls.get("writes_disabled"):
                raise WritesBlocked("writes are disabled by an incident switch; try again later")
            if not bypass_account_fence:
                if deletion is not None and deletion.get("state") != "completed":
                    raise WritesBlocked("this account is being deleted; writes are refused")
                if control.get("writes_blocked"):
                    raise WritesBlocked("writes are blocked for this account")
            sequence = int(control.get("sequence", 0)) + 1
            commit = ids.commit_id(uid, sequence, op_id)
            view = ApplyView(
                uid=uid, now=moment, control=control,
                items={mid: (MemoryItem.from_store(d) if (d := data(ref)) else None) for mid, ref in item_refs.items()},
                docs={p: data(ref) for p, ref in doc_refs.items()},
                sequence=sequence, commit_id=commit, operation_id=op_id, queried=queried,
            )
            plan = planner(view)
            if plan.empty:
                transaction.set(op_ref, {"operation_id": op_id, "kind": kind, "commit_id": None, "sequence": None,
                                         "changed_ids": [], "summary": plan.summary, "created_at": moment,
                                         "noop": True})
                return ApplyResult(op_id, None, None, False, [], plan.summary)
            changes = []
            outbox: list[OutboxAction] = []
            for item in plan.items:
                if item.id not in item_refs:  # every written item was read in this transaction
                    raise StrataError(f"planner wrote item {item.id} it did not declare as read")
                if item.uid != uid:
                    raise StrataError("planner wrote an item of another user")
                previous = view.items.get(item.id)
                item.revision = view.next_revision(item.id)
                item.created_at = previous.created_at if previous and previous.created_at else (item.created_at or moment)
                item.updated_at = moment
                item.ledger_commit_id = commit
                item.ledger_sequence = sequence
                item.settle()
                for validate in self.validators:
                    validate(item, view, plan)
                changes.append({"memory_id": item.id, "revision": item.revision, "layer": item.layer,
                                "status": item.status, "processing_state": item.processing_state,
                                "content_hash": item.content_hash,
                                "action": "create" if previous is None else "update"})
                outbox.append(OutboxAction(item.id, "upsert" if is_projectable(item) else "delete", kind))
            outbox.extend(plan.outbox)
            for item in plan.items:
                transaction.set(item_refs[item.id], item.to_store())
            for path, payload in plan.docs.items():
                ref = doc_refs.get(path) or paths.doc(uid, *_split(path))
                if payload is None:
                    transaction.delete(ref)
                else:
                    transaction.set(ref, payload)
            items_by_id = {i.id: i for i in plan.items}
            for action in outbox:
                event_id = ids.outbox_event_id(commit, action.memory_id, action.action)
                written = items_by_id.get(action.memory_id)
                transaction.set(paths.doc(uid, "memory_outbox", event_id), {
                    "event_id": event_id, "uid": uid, "memory_id": action.memory_id, "action": action.action,
                    "revision": written.revision if written else None,
                    "content_hash": written.content_hash if written else None,
                    "reason": action.reason or kind, "commit_id": commit, "sequence": sequence,
                    "state": "pending", "attempts": 0, "due_at": moment, "lease_expires_at": None,
                    "lease_epoch": 0, "created_at": moment, "last_error": None,
                })
            changed_ids = [i.id for i in plan.items]
            transaction.set(paths.doc(uid, "memory_commits", commit), {
                "commit_id": commit, "sequence": sequence, "parent_commit_id": control.get("head_commit_id"),
                "operation_id": op_id, "kind": kind, "actor": actor, "changes": changes,
                "doc_writes": sorted(plan.docs), "created_at": moment, "memory_ids": changed_ids,
            })
            transaction.set(control_ref, {
                "sequence": sequence, "head_commit_id": commit, "updated_at": moment,
                "account_generation": int(control.get("account_generation", 0)),
                "writes_blocked": bool(control.get("writes_blocked", False)),
            })
            transaction.set(op_ref, {"operation_id": op_id, "kind": kind, "commit_id": commit, "sequence": sequence,
                                     "changed_ids": changed_ids, "summary": plan.summary, "created_at": moment,
                                     "outbox_events": len(outbox)})
            return ApplyResult(op_id, commit, sequence, False, changed_ids, plan.summary, len(outbox))

        try:
            with self._user_locks[zlib.crc32(uid.encode()) % len(self._user_locks)]:
                result: ApplyResult = run(self.client.transaction(max_attempts=self.max_attempts))
        except StrataError:
            raise
        except Exception as exc:
            # Contention the SDK gave up on (Aborted, "Failed to commit transaction in N attempts")
            # or a transient RPC failure: nothing was committed, the caller may retry.
            from google.api_core import exceptions as gexc

            if isinstance(exc, gexc.Aborted | gexc.ServiceUnavailable | gexc.DeadlineExceeded) or (
                    isinstance(exc, ValueError) and "Failed to commit transaction" in str(exc)):
                raise RetryableError(f"the {kind} transaction for this user was contended; retry",
                                     code="contended") from exc
            raise
        if not result.replayed and result.outbox_events and self.on_committed is not None:
            try:
                self.on_committed(uid, result.sequence or 0)
            except Exception:  # the scheduled sweep recovers a lost nudge
                log.warning("projection nudge for %s failed; the sweep will pick it up", uid, exc_info=True)
        return result


def head_sequence(client: Any, uid: str) -> int:
    """The user's current ledger sequence, read outside any transaction (0 before the first commit)."""
    snap = Paths(client).control(uid).get()
    return int((snap.to_dict() or {}).get("sequence", 0)) if snap.exists else 0

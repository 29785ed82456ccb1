"""The outbox's rules: work leases with their dirty note, event leases with their epochs, guarded
commits, backoff and dead letters. Plain data in, plain data out: the Firestore adapter applies
these decisions on its transactions and conditional writes, the unit tests' fake on its lock.

A **work lease** (``users/{uid}/memory_state/{projection,consolidation}_lease``) is held until it
expires, so a crashed holder never blocks a user longer than its TTL. A caller that finds it held
may leave the holder a note (``dirty``) that more work arrived; a holder that honours notes goes
round once more instead of releasing, so no request for work is lost between its last look and its
release. Each take counts the lease's ``epoch`` up.

An **event lease**: a drain leases each due event it takes (``state`` leased, ``lease_epoch`` and
``attempts`` counted up, ``lease_expires_at``), while the event is as it read it and while the drain
still holds the user's drain lease. Every later write of that drain to the event (acknowledge,
fail, requeue) requires the event still at that epoch, so a drain that lost its lease (a newer one
re-leased the event) writes nothing over the newer drain's work. A failure backs off
exponentially; after ``MAX_ATTEMPTS`` the event is dead.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from core.domain import fence, ids, paths
from core.domain.documents import Lease, OutboxEvent
from core.domain.plan import OutboxAction, Write
from core.domain.records import MemoryItem

# A drain batch of 100 fills one Pinecone upsert request (its 100-vector batch) and one Typesense
# import, and its lease and acknowledgement writes stay well inside one Firestore commit.
BATCH = 100
SCAN = 100
COMMIT_LIMIT = 500
EVENT_LEASE = timedelta(seconds=300)
DRAIN_LEASE = timedelta(seconds=120)
MAX_ATTEMPTS = 5
BACKOFF_BASE_S = 30
BACKOFF_MAX_S = 1800


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1)))


def nudge(uid: str, sequence: int = 0) -> dict[str, Any]:
    """The message on the projection topic that asks for a drain of ``uid`` (best effort: the
    scheduled sweep drains what a lost one leaves)."""
    return {"uid": uid, "sequence": sequence}


def drain_lease(uid: str) -> str:
    return paths.projection_lease(uid)


def outbox_event(uid: str, commit_id: str, sequence: int, action: OutboxAction, written: MemoryItem | None,
                 reason: str, moment: datetime) -> tuple[str, dict[str, Any]]:
    """(event id, document) of the pending ``memory_outbox`` event an apply writes for ``action``;
    ``written`` is the item this apply wrote under that memory id, if any."""
    event_id = ids.outbox_event_id(commit_id, action.memory_id, action.action)
    return event_id, OutboxEvent(
        event_id=event_id, uid=uid, memory_id=action.memory_id, action=action.action,
        revision=written.revision if written else None, content_hash=written.content_hash if written else None,
        reason=action.reason or reason, commit_id=commit_id, sequence=sequence, state="pending", attempts=0,
        due_at=moment, lease_expires_at=None, lease_epoch=0, created_at=moment, last_error=None,
    ).to_store()


# ----------------------------------------------------------------------------------- work leases
Decision = tuple[bool, dict[str, Any] | None]  # (the answer, the merge to write; None: write nothing)


def take(data: dict[str, Any] | None, holder: str, now: datetime, ttl: timedelta, *,
         mark_dirty: bool = False) -> Decision:
    """Taking the lease as ``data`` shows it: a live lease of another holder is not taken (a note is
    left when ``mark_dirty``, unless one waits already); a free or expired one is ``holder``'s."""
    lease = Lease.from_store(data or {})
    if lease.held(now):
        return False, ({"dirty": True} if mark_dirty and not lease.dirty else None)
    return True, {"holder": holder, "expires_at": now + ttl, "dirty": False,
                  "epoch": int((data or {}).get("epoch", 0)) + 1}


def release(data: dict[str, Any] | None, holder: str, now: datetime, ttl: timedelta, *,
            honour_dirty: bool = False) -> Decision:
    """Releasing ``holder``'s lease: (go round once more, the write). Not ``holder``'s: nothing. With
    ``honour_dirty`` and a note waiting, it is kept (renewed) and the note cleared."""
    lease = Lease.from_store(data or {})
    if lease.holder != holder:
        return False, None
    if honour_dirty and lease.dirty:
        return True, {"dirty": False, "expires_at": now + ttl}
    return False, {"holder": None, "expires_at": None, "dirty": False}


# ------------------------------------------------------------------------------ guarded commits
@dataclass(frozen=True)
class Guard:
    """What a guarded commit requires of one document: the work lease held by ``holder``; or the
    account's wipe record at ``generation`` with no wipe in progress (the account fence); or an
    outbox event in ``state`` at lease epoch ``epoch`` (an absent lease or event fails)."""

    holder: str | None = None
    state: str | None = None
    epoch: int = 0
    generation: int | None = None

    def holds(self, data: dict[str, Any] | None) -> bool:
        if self.generation is not None:
            return fence.of(data).admits(self.generation)
        if data is None:
            return False
        if self.holder is not None:
            return Lease.from_store(data).holder == self.holder
        event = OutboxEvent.from_store(data)
        return event.state == self.state and event.lease_epoch == self.epoch


def leased_at(epoch: int) -> Guard:
    return Guard(state="leased", epoch=epoch)


@dataclass(frozen=True)
class Commit:
    """``writes``, committed only while every guard holds for its document as read in the commit.

    ``expected`` (path → version; every path among the written): the guards held on the documents at
    these versions, so a store that knows versions may first try one write without a transaction —
    ``writes`` and ``renewal``, each expected document preconditioned on its version — and fall back
    to the guarded transaction (``writes`` alone) when one changed.
    """

    guards: dict[str, Guard]
    writes: list[Write]
    expected: dict[str, Any] | None = None
    renewal: tuple[Write, ...] = ()


def dropping(uid: str, holder: str) -> Commit:
    """Delete ``uid``'s drain lease while ``holder`` still holds it: a drain that took it and then
    found the account wiped under it leaves no document in the wiped account."""
    return Commit({drain_lease(uid): Guard(holder)}, [Write("delete", drain_lease(uid))])


@dataclass(frozen=True)
class Drain:
    """A drain of one user's outbox as it opened: the account generation it read first and the
    holder of the user's drain lease. Not opened (``holder`` None): nothing was due, or ``skipped``
    says why (``drain_in_progress``, ``account_generation_changed``)."""

    uid: str
    generation: int
    holder: str | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class Entry:
    """An outbox event as read: its path, the event and the store's version of it (None: unknown)."""

    path: str
    event: OutboxEvent
    version: Any = None


@dataclass(frozen=True)
class Due:
    """What a round reads first: the due events and, for a drain with a holder, its drain lease."""

    entries: list[Entry]
    lease: dict[str, Any] | None = None
    lease_version: Any = None

    def lost(self, holder: str | None) -> bool:
        """The drain lease is no longer ``holder``'s (another drain took over: it drains the rest)."""
        return holder is not None and not Guard(holder).holds(self.lease)


@dataclass(frozen=True)
class Batch:
    """The events one round leased, as leased. Empty: nothing leased — ``lost`` says the drain lease
    moved on, ``more`` that other events may still be due."""

    uid: str
    holder: str | None
    entries: list[Entry]
    more: bool = False
    repaired: int = 0  # expired leases reclaimed: their memories are re-projected from current state
    versions: dict[str, Any] | None = None  # what a one-write leasing commit wrote, by path
    lost: bool = False

    @property
    def events(self) -> list[OutboxEvent]:
        return [entry.event for entry in self.entries]


def choose(due: list[Entry], now: datetime) -> list[Entry]:
    """The first ``BATCH`` due events that are not under someone else's live lease."""
    chosen = []
    for entry in due:
        if entry.event.state == "leased" and entry.event.lease_live(now):
            continue
        chosen.append(entry)
        if len(chosen) == BATCH:
            break
    return chosen


def leasing(uid: str, holder: str | None, due: Due, now: datetime) -> tuple[Batch, Commit]:
    """The batch a round leases and its commit: each chosen event while it is as read, leased at the
    next epoch, with one more attempt; the drain lease (with a holder) held and renewed with it.
    Nothing to commit when ``due`` shows the drain lease no longer ``holder``'s (``lost``)."""
    if due.lost(holder):
        return Batch(uid, holder, [], lost=True), Commit({}, [])
    chosen = choose(due.entries, now)
    # Fewer due events than the scan asked for, all taken: nothing else was due at ``now`` (a later
    # commit's nudge marks the drain lease dirty, which brings the drain round again).
    more = bool(chosen) and (len(due.entries) == SCAN or len(chosen) == BATCH)
    guards = {} if holder is None else {drain_lease(uid): Guard(holder)}
    writes, taken, repaired = [], [], 0
    for entry in chosen:
        guards[entry.path] = Guard(state=entry.event.state, epoch=entry.event.lease_epoch)
        repaired += entry.event.state == "leased"
        event = entry.event.but(lease_epoch=entry.event.lease_epoch + 1, attempts=entry.event.attempts + 1)
        taken.append(replace(entry, event=event))
        writes.append(Write("update", entry.path, {"state": "leased", "lease_expires_at": now + EVENT_LEASE,
                                                   "lease_epoch": event.lease_epoch, "attempts": event.attempts}))
    expected = None
    if holder is not None:
        writes.append(Write("update", drain_lease(uid), {"expires_at": now + DRAIN_LEASE}))  # the renewal
        expected = {drain_lease(uid): due.lease_version, **{entry.path: entry.version for entry in chosen}}
    return Batch(uid, holder, taken, more, repaired), Commit(guards, writes, expected)


def lease_refused(batch: Batch, lease: dict[str, Any] | None) -> Batch:
    """The empty batch of a refused leasing commit, given the drain lease as read after it: ``lost``
    when it is no longer the batch's holder's (another drain took over), else more may be due."""
    return Batch(batch.uid, batch.holder, [], more=True,
                 lost=batch.holder is not None and not Guard(batch.holder).holds(lease))


def acknowledgement(batch: Batch, writes: list[Write], now: datetime) -> list[Commit]:
    """The commits that acknowledge ``batch`` with ``writes`` (what its handlers' effect is), in
    order: one unless over the commit limit, when the handlers' chunks go first, so an event is
    never gone before the write it carried. Each requires the drain lease still the batch's holder's
    and each deleted event still at the epoch the batch leased it with. One commit alone may be one
    write: the lease and every event still as the leasing commit left them imply both guards."""
    epochs = {entry.path: entry.event.lease_epoch for entry in batch.entries}
    ops = [*writes, *(Write("delete", path) for path in epochs)]
    lease = drain_lease(batch.uid)
    commits = []
    for start in range(0, len(ops), COMMIT_LIMIT):
        chunk = ops[start:start + COMMIT_LIMIT]
        guards = {} if batch.holder is None else {lease: Guard(batch.holder)}
        guards.update({w.path: leased_at(epochs[w.path]) for w in chunk if w.op == "delete" and w.path in epochs})
        commits.append(Commit(guards, chunk))
    if len(commits) == 1 and batch.holder is not None and batch.versions is not None:
        versions = batch.versions
        commits[0] = replace(commits[0], expected={path: versions.get(path) for path in (lease, *epochs)},
                             renewal=(Write("update", lease, {"expires_at": now + DRAIN_LEASE}),))
    return commits


def failure(batch: Batch, message: str, confirmed: list[str], now: datetime) -> dict[str, tuple[str, Commit]]:
    """After a handler failed, by event path: ("retried" or "dead", the commit that records it). Each
    goes back to pending after its backoff, or dead once it used ``MAX_ATTEMPTS``, only while still
    at the batch's epoch; ``confirmed`` names the providers that did confirm the attempt (a deletion
    receipt shows those while the event waits for the rest)."""
    outcome = {}
    for entry in batch.entries:
        event = entry.event
        update: dict[str, Any] = {"last_error": message, "lease_expires_at": None,
                                  "confirmed_providers": sorted(confirmed)}
        if event.attempts >= MAX_ATTEMPTS:
            kind, update = "dead", {"state": "dead", **update, "dead_at": now}
        else:
            kind, update = "retried", {"state": "pending", **update, "due_at": now + backoff(event.attempts)}
        outcome[entry.path] = (kind, Commit({entry.path: leased_at(event.lease_epoch)},
                                            [Write("update", entry.path, update)]))
    return outcome


def requeueing(entry: Entry, now: datetime) -> Commit:
    """After a refused acknowledgement: the event back to pending, due now, while still at the
    batch's epoch (the drain lost its lease while it wrote the providers)."""
    return Commit({entry.path: leased_at(entry.event.lease_epoch)}, [Write("update", entry.path, {
        "state": "pending", "lease_expires_at": None, "due_at": now,
        "last_error": "acknowledgement refused: the drain lease was lost"})])


def _repair(batch: Batch, memory_id: str, now: datetime) -> Write:
    event_id, doc = outbox_event(batch.uid, f"repair:{batch.holder or ''}", 0, OutboxAction(memory_id, "repair"),
                                 None, "drain_lease_lost", now)
    return Write("set", paths.outbox_event(batch.uid, event_id), doc)


def _account_at(uid: str, generation: int) -> dict[str, Guard]:
    return {paths.account_deletion(uid): Guard(generation=generation)}


# ------------------------------------------------------------------------------ closing a batch
@dataclass(frozen=True)
class Outcome:
    """What a batch's handlers came to: the writes that carry their effect, or the first failure's
    ``error``; either way the providers that confirmed and the calls made (upserts and deletes: what
    the projection wrote, counted when every handler succeeded)."""

    writes: list[Write] = field(default_factory=list)
    error: str | None = None
    confirmed: list[str] = field(default_factory=list)
    calls: int = 0
    upserts: int = 0
    deletes: int = 0


@dataclass(frozen=True)
class Closing:
    """How a leased batch is closed, decided at once: with an ``error``, each event's failure
    (``failed``, by path; ``together`` records them in one commit); else the ``acknowledgement``
    commits and, should one be refused, each event's ``requeues`` (memory id, commit), then one
    commit of the ``repairs`` (by memory id) of the memories whose event another drain took,
    guarded by ``account`` (still at the drain's generation), then the drain's ``nudge``."""

    failed: dict[str, tuple[str, Commit]] = field(default_factory=dict)
    together: Commit | None = None
    acknowledgement: list[Commit] = field(default_factory=list)
    requeues: list[tuple[str | None, Commit]] = field(default_factory=list)
    repairs: dict[str, Write] = field(default_factory=dict)
    account: dict[str, Guard] = field(default_factory=dict)
    nudge: dict[str, Any] = field(default_factory=dict)


def closing(batch: Batch, outcome: Outcome, generation: int, now: datetime) -> Closing:
    """The whole decision that closes ``batch`` after its handlers came to ``outcome``, for a drain
    that read the account at ``generation``."""
    if outcome.error is not None:
        each = failure(batch, outcome.error, outcome.confirmed, now)
        together = Commit({p: g for _, c in each.values() for p, g in c.guards.items()},
                          [w for _, c in each.values() for w in c.writes])
        return Closing(failed=each, together=together)
    memory_ids = sorted({e.event.memory_id for e in batch.entries if e.event.memory_id})
    return Closing(acknowledgement=acknowledgement(batch, outcome.writes, now),
                   requeues=[(e.event.memory_id, requeueing(e, now)) for e in batch.entries],
                   repairs={m: _repair(batch, m, now) for m in memory_ids},
                   account=_account_at(batch.uid, generation), nudge=nudge(batch.uid))

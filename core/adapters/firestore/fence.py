"""The account-generation fence: work that began before an account wipe never writes after it.

The generation lives on the top-level wipe record ``account_deletions/{uid}`` (field
``generation``), outside ``users/{uid}``, so the recursive wipe cannot erase it; every wipe bumps it
when it raises the fence. Background work (a capture, a consolidation pass, an outbox drain) reads
the generation when it starts — its event carries nothing — and runs inside :func:`expect`; every
apply transaction and every fenced write of that work re-reads the wipe record in its own
transaction and refuses with :class:`GenerationChanged` when the generation moved. Callers
acknowledge that refusal: the work belongs to an account that no longer exists.

The expectation is a context variable rather than a parameter so the services' apply call sites
(capture replacement, consolidation routes, review expiry, ...) need not thread it through.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from core.adapters.firestore.client import Paths
from core.errors import GenerationChanged, WritesBlocked

_EXPECTED: contextvars.ContextVar[tuple[str, int] | None] = contextvars.ContextVar(
    "strata_expected_generation", default=None)


@dataclass(frozen=True)
class AccountFence:
    generation: int  # 0 until the account's first wipe
    deleting: bool  # a wipe is in progress: every write is refused
    wiped: bool  # the account was wiped at least once (a wipe record exists)


def of(record: dict[str, Any] | None) -> AccountFence:
    """The fence a wipe record (``account_deletions/{uid}`` data, None when absent) describes."""
    if record is None:
        return AccountFence(0, False, False)
    return AccountFence(int(record.get("generation", 0)), record.get("state") != "completed", True)


def read(client: Any, uid: str) -> AccountFence:
    snap = Paths(client).account_deletion(uid).get()
    return of(snap.to_dict() if snap.exists else None)


@contextmanager
def expect(uid: str, generation: int) -> Iterator[None]:
    """Within the block, every apply and fenced write for ``uid`` requires ``generation``."""
    token = _EXPECTED.set((uid, generation))
    try:
        yield
    finally:
        _EXPECTED.reset(token)


def expected(uid: str) -> int | None:
    current = _EXPECTED.get()
    return current[1] if current is not None and current[0] == uid else None


def check(uid: str, record: dict[str, Any] | None) -> None:
    """Inside a transaction that read the wipe record: refuse when the generation this work started
    in has moved (a wipe began or completed since)."""
    want = expected(uid)
    if want is not None and of(record).generation != want:
        raise GenerationChanged("the account was deleted after this work started; it is dropped")


def write(client: Any, uid: str, writes: Sequence[tuple[Any, dict[str, Any], bool]], *,
          guard: Any = None, refuse: Callable[[dict[str, Any] | None], bool] | None = None) -> bool:
    """Commit ``(ref, data, merge)`` sets in one transaction that first re-reads the wipe record:
    refused when the generation moved or a wipe is in progress (the fence for writes that do not go
    through the apply transaction, e.g. a capture's workflow rows and its marker). With ``guard`` (a
    document reference) and ``refuse``, the guard is read in the same transaction and nothing is
    written when ``refuse(its data or None)`` is true. True when written."""
    from google.cloud import firestore

    fence_ref = Paths(client).account_deletion(uid)

    @firestore.transactional
    def run(transaction: Any) -> bool:
        refs = [fence_ref, *([guard] if guard is not None else [])]
        snaps = {snap.reference.path: snap for snap in client.get_all(refs, transaction=transaction)}
        wipe = snaps[fence_ref.path]
        record = wipe.to_dict() if wipe.exists else None
        check(uid, record)
        if of(record).deleting:
            raise WritesBlocked("this account is being deleted; writes are refused")
        if guard is not None and refuse is not None:
            guarded = snaps[guard.path]
            if refuse(guarded.to_dict() if guarded.exists else None):
                return False
        for ref, data, merge in writes:
            transaction.set(ref, data, merge=merge)
        return True

    return bool(run(client.transaction()))

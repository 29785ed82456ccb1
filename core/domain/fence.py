"""The account-generation fence: work that began before an account wipe never writes after it.

The generation lives on the top-level wipe record ``account_deletions/{uid}`` (field
``generation``), outside ``users/{uid}``, so the recursive wipe cannot erase it; every wipe bumps it
when it raises the fence. Background work (a capture, a consolidation pass, an outbox drain) reads
the generation when it starts — its event carries nothing — and runs inside :func:`expect`; every
apply transaction and every fenced write of that work re-reads the wipe record in its own
transaction and refuses with :class:`GenerationChanged` when the generation moved. Callers
acknowledge that refusal: the work belongs to an account that no longer exists.

The expectation is a context variable rather than a parameter so the services' apply call sites
(capture replacement, consolidation routes, review expiry, ...) need not thread it through. It may
be given as a future of the generation (an API write request sends its read of the wipe record when
it starts and waits for the answer only when its first apply checks it, so that round trip overlaps
the request's own first reads): the generation is still the one read when the work began.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from core.errors import GenerationChanged, WritesBlocked

_EXPECTED: contextvars.ContextVar[tuple[str, int | Future[int]] | None] = contextvars.ContextVar(
    "strata_expected_generation", default=None)


@dataclass(frozen=True)
class AccountFence:
    generation: int  # 0 until the account's first wipe
    deleting: bool  # a wipe is in progress: every write is refused
    wiped: bool  # the account was wiped at least once (a wipe record exists)

    def admits(self, generation: int) -> bool:
        """Whether work of account ``generation`` may still write: no wipe began or completed since."""
        return self.generation == generation and not self.deleting


def of(record: dict[str, Any] | None) -> AccountFence:
    """The fence a wipe record (``account_deletions/{uid}`` data, None when absent) describes."""
    if record is None:
        return AccountFence(0, False, False)
    return AccountFence(int(record.get("generation", 0)), record.get("state") != "completed", True)


@contextmanager
def expect(uid: str, generation: int | Future[int]) -> Iterator[None]:
    """Within the block, every apply and fenced write for ``uid`` requires ``generation`` (or what
    the future answers: a failed read fails the first write that checks it)."""
    token = _EXPECTED.set((uid, generation))
    try:
        yield
    finally:
        _EXPECTED.reset(token)


def expected(uid: str) -> int | None:
    current = _EXPECTED.get()
    if current is None or current[0] != uid:
        return None
    generation = current[1]
    return generation.result() if isinstance(generation, Future) else generation


def check(uid: str, record: dict[str, Any] | None) -> None:
    """Inside a transaction that read the wipe record: refuse when the generation this work started
    in has moved (a wipe began or completed since)."""
    want = expected(uid)
    if want is not None and of(record).generation != want:
        raise GenerationChanged("the account was deleted after this work started; it is dropped")


def admit(uid: str, record: dict[str, Any] | None) -> None:
    """Inside a transaction that read the wipe record: :func:`check`, and refuse every write while
    a wipe is in progress."""
    check(uid, record)
    if of(record).deleting:
        raise WritesBlocked("this account is being deleted; writes are refused")

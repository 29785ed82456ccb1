"""The account-generation fence in Firestore: reading the wipe record, and the transaction of a
fenced or guarded :class:`core.domain.changes.Change`.

The fence itself (:class:`AccountFence`, the expected generation, the admit rule) is in
:mod:`core.domain.fence`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.adapters.firestore.client import Paths
from core.domain.changes import Change
from core.domain.fence import AccountFence, admit, check, expect, expected, of
from core.domain.plan import Write

__all__ = ["AccountFence", "admit", "check", "expect", "expected", "of", "write"]


def write(client: Any, change: Change, stage: Callable[[Any, Write], None]) -> bool:
    """Commit ``change``'s writes (``stage`` adds one to the transaction) in one transaction that
    first reads the wipe record (``fenced``: refused by :func:`core.domain.fence.admit` when the
    generation moved or a wipe is in progress: the fence for writes that do not go through the
    apply, e.g. a capture's workflow rows and its marker) and the ``guard``: nothing is written
    when ``refuse(its data or None)`` is true. True when written."""
    from core.adapters.firestore import transactions

    fence_path = Paths(client).account_deletion(change.fenced).path if change.fenced is not None else None
    reading = [p for p in (fence_path, change.guard) if p is not None]

    def run(transaction: Any, reads: Any) -> bool:
        found = reads.get_all(reading)
        if change.fenced is not None and fence_path is not None:
            admit(change.fenced, found[fence_path])
        if change.guard is not None and change.refuse is not None and change.refuse(found[change.guard]):
            return False
        for one in change.writes:
            stage(transaction, one)
        return True

    return bool(transactions.run(client, run))

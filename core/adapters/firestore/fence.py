"""The account-generation fence in Firestore: reading the wipe record and the fenced write.

The fence itself (:class:`AccountFence`, the expected generation, the check) is in
:mod:`core.domain.fence`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core.adapters.firestore.client import Paths
from core.domain.fence import AccountFence, admit, check, expect, expected, of

__all__ = ["AccountFence", "admit", "check", "expect", "expected", "of", "read", "write"]


def read(client: Any, uid: str) -> AccountFence:
    snap = Paths(client).account_deletion(uid).get()
    return of(snap.to_dict() if snap.exists else None)


def write(client: Any, uid: str, writes: Sequence[tuple[Any, dict[str, Any], bool]], *,
          guard: Any = None, refuse: Callable[[dict[str, Any] | None], bool] | None = None) -> bool:
    """Commit ``(ref, data, merge)`` sets in one transaction that first re-reads the wipe record:
    refused when the generation moved or a wipe is in progress (the fence for writes that do not go
    through the apply transaction, e.g. a capture's workflow rows and its marker). With ``guard`` (a
    document reference) and ``refuse``, the guard is read in the same transaction and nothing is
    written when ``refuse(its data or None)`` is true. True when written."""
    from core.adapters.firestore import transactions

    fence_ref = Paths(client).account_deletion(uid)

    def run(transaction: Any, reads: Any) -> bool:
        found = reads.get_all([fence_ref.path, *([guard.path] if guard is not None else [])])
        record = found[fence_ref.path]
        admit(uid, record)
        if guard is not None and refuse is not None and refuse(found[guard.path]):
            return False
        for ref, data, merge in writes:
            transaction.set(ref, data, merge=merge)
        return True

    return bool(transactions.run(client, run))

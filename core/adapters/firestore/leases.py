"""Per-user work leases (``users/{uid}/memory_state/<name>``): one worker at a time per user.

A lease is held until it expires, so a crashed holder never blocks work for longer than its TTL.
A caller that finds the lease held may leave the holder a note (``dirty``) that more work arrived;
a holder that honours notes is told to go round once more instead of releasing, so no request for
work is lost between the holder's last look and its release.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any


def take(client: Any, ref: Any, holder: str, clock: Callable[[], datetime], ttl: timedelta, *,
         mark_dirty: bool = False) -> bool:
    """True when ``holder`` now holds the lease; when another live holder has it, False (after
    marking it dirty if asked)."""
    from google.cloud import firestore

    @firestore.transactional
    def run(transaction: Any) -> bool:
        snap = ref.get(transaction=transaction)
        now = clock()
        data = snap.to_dict() if snap.exists else {}
        if data.get("holder") and data.get("expires_at") and data["expires_at"] > now:
            if mark_dirty and not data.get("dirty"):
                transaction.update(ref, {"dirty": True})
            return False
        transaction.set(ref, {"holder": holder, "expires_at": now + ttl, "dirty": False,
                              "epoch": int(data.get("epoch", 0)) + 1})
        return True

    return bool(run(client.transaction()))


def release(client: Any, ref: Any, holder: str, clock: Callable[[], datetime], ttl: timedelta, *,
            honour_dirty: bool = False) -> bool:
    """Release ``holder``'s lease. With ``honour_dirty`` and a note waiting, keep it (renewed), clear
    the note and return True: the holder should work once more before releasing again."""
    from google.cloud import firestore

    @firestore.transactional
    def run(transaction: Any) -> bool:
        snap = ref.get(transaction=transaction)
        data = snap.to_dict() if snap.exists else {}
        if data.get("holder") != holder:
            return False
        if honour_dirty and data.get("dirty"):
            transaction.update(ref, {"dirty": False, "expires_at": clock() + ttl})
            return True
        transaction.update(ref, {"holder": None, "expires_at": None, "dirty": False})
        return False

    return bool(run(client.transaction()))

"""Per-user work leases (``users/{uid}/memory_state/<name>``): one worker at a time per user.

A lease is held until it expires, so a crashed holder never blocks work for longer than its TTL.
A caller that finds the lease held may leave the holder a note (``dirty``) that more work arrived;
a holder that honours notes is told to go round once more instead of releasing, so no request for
work is lost between the holder's last look and its release.

Every change is a read followed by a write that is conditional on the document being exactly as
read (its update time, or its absence). A lost race re-reads and decides again. This keeps leases
out of transactions: they are contended by design (every nudge and every pass asks), and
transactions on one hot document queue behind each other's locks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.ports import StoredDoc

ATTEMPTS = 20


@dataclass(frozen=True)
class Seen:
    """A lease document the caller already read (in a lookup of its own), shaped as the snapshot
    the first attempt would otherwise read: decided on, then written conditionally on it."""

    exists: bool
    update_time: Any = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


def seen(docs: Mapping[str, StoredDoc | None] | None, path: str) -> Seen | None:
    """``path`` as read in ``docs`` (None: not read there, or read without its version)."""
    if docs is None or path not in docs:
        return None
    doc = docs[path]
    if doc is None:
        return Seen(False)
    return None if doc.version is None else Seen(True, doc.version, dict(doc.data))


def _snapshot(ref: Any, first: Seen | None, attempt: int) -> Any:
    return first if attempt == 0 and first is not None else ref.get()


def _conditional(client: Any, ref: Any, snap: Any, data: dict[str, Any]) -> bool:
    """Write ``data`` only if the document is still as ``snap`` saw it; False when it changed."""
    from google.api_core import exceptions as gexc

    try:
        if snap.exists:
            ref.update(data, option=client.write_option(last_update_time=snap.update_time))
        else:
            ref.create(data)
    except (gexc.FailedPrecondition, gexc.AlreadyExists, gexc.NotFound, gexc.Conflict):
        return False
    return True


def take(client: Any, ref: Any, holder: str, clock: Callable[[], datetime], ttl: timedelta, *,
         mark_dirty: bool = False, first: Seen | None = None) -> bool:
    """True when ``holder`` now holds the lease; when another live holder has it, False (after
    marking it dirty if asked). ``first``: the document as the caller already read it."""
    for attempt in range(ATTEMPTS):
        snap = _snapshot(ref, first, attempt)
        now = clock()
        data = snap.to_dict() if snap.exists else {}
        if data.get("holder") and data.get("expires_at") and data["expires_at"] > now:
            if not mark_dirty or data.get("dirty") or _conditional(client, ref, snap, {"dirty": True}):
                return False
            continue
        if _conditional(client, ref, snap, {"holder": holder, "expires_at": now + ttl, "dirty": False,
                                             "epoch": int(data.get("epoch", 0)) + 1}):
            return True
    return False  # raced every time: someone else is busy with this user; they hold it or will


def renew(client: Any, ref: Any, holder: str, clock: Callable[[], datetime], ttl: timedelta) -> bool:
    """Extend ``holder``'s lease to ``ttl`` from now (keeping any note); False when another holder
    has it or nobody does."""
    for _ in range(ATTEMPTS):
        snap = ref.get()
        data = snap.to_dict() if snap.exists else {}
        if data.get("holder") != holder:
            return False
        if _conditional(client, ref, snap, {"expires_at": clock() + ttl}):
            return True
    return (ref.get().to_dict() or {}).get("holder") == holder  # notes kept changing it: still ours?


def release(client: Any, ref: Any, holder: str, clock: Callable[[], datetime], ttl: timedelta, *,
            honour_dirty: bool = False, first: Seen | None = None) -> bool:
    """Release ``holder``'s lease. With ``honour_dirty`` and a note waiting, keep it (renewed), clear
    the note and return True: the holder should work once more before releasing again. ``first``:
    the document as the caller already read it."""
    for attempt in range(ATTEMPTS):
        snap = _snapshot(ref, first, attempt)
        data = snap.to_dict() if snap.exists else {}
        if data.get("holder") != holder:
            return False
        if honour_dirty and data.get("dirty"):
            if _conditional(client, ref, snap, {"dirty": False, "expires_at": clock() + ttl}):
                return True
            continue
        if _conditional(client, ref, snap, {"holder": None, "expires_at": None, "dirty": False}):
            return False
    # Only notes being left can keep changing the document under a holder: go round once more.
    return honour_dirty

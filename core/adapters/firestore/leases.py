"""Per-user work leases (``users/{uid}/memory_state/<name>``) in Firestore: one worker at a time
per user, by the rules of :mod:`core.domain.outbox` (expiry, the dirty note, the epoch).

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

from core.domain import outbox
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
    """True when ``holder`` now holds the lease (:func:`core.domain.outbox.take` decides, on the
    document as read); ``first``: the document as the caller already read it."""
    for attempt in range(ATTEMPTS):
        snap = _snapshot(ref, first, attempt)
        taken, write = outbox.take(snap.to_dict() if snap.exists else None, holder, clock(), ttl,
                                   mark_dirty=mark_dirty)
        if write is None or _conditional(client, ref, snap, write):
            return taken
    return False  # raced every time: someone else is busy with this user; they hold it or will


def release(client: Any, ref: Any, holder: str, clock: Callable[[], datetime], ttl: timedelta, *,
            honour_dirty: bool = False, first: Seen | None = None) -> bool:
    """Release ``holder``'s lease; True when a note asks it to work once more (kept, renewed:
    :func:`core.domain.outbox.release`). ``first``: the document as the caller already read it."""
    for attempt in range(ATTEMPTS):
        snap = _snapshot(ref, first, attempt)
        again, write = outbox.release(snap.to_dict() if snap.exists else None, holder, clock(), ttl,
                                      honour_dirty=honour_dirty)
        if write is None or _conditional(client, ref, snap, write):
            return again
    # Only notes being left can keep changing the document under a holder: go round once more.
    return honour_dirty

"""Compare-and-swap on one Firestore document (:meth:`core.ports.Store.swap`), e.g. a per-user
work lease (``users/{uid}/memory_state/<name>``) decided by :mod:`core.domain.outbox`.

Every change is a read followed by a write that is conditional on the document being exactly as
read (its update time, or its absence). A lost race re-reads and decides again. This keeps such
documents out of transactions: a lease is contended by design (every nudge and every pass asks),
and transactions on one hot document queue behind each other's locks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from core.ports import ABSENT, SWAP_ATTEMPTS, StoredDoc

T = TypeVar("T")


def _read(client: Any, path: str) -> StoredDoc | None:
    snap = client.document(path).get()
    return StoredDoc(path, snap.to_dict() or {}, snap.update_time) if snap.exists else None


def _conditional(client: Any, path: str, doc: StoredDoc | None, data: dict[str, Any]) -> bool:
    """Write ``data`` only if the document is still as ``doc`` saw it (None: absent); False when
    it changed."""
    from google.api_core import exceptions as gexc

    ref = client.document(path)
    try:
        if doc is not None:
            ref.update(data, option=client.write_option(last_update_time=doc.version))
        else:
            ref.create(data)
    except (gexc.FailedPrecondition, gexc.AlreadyExists, gexc.NotFound, gexc.Conflict):
        return False
    return True


def swap(client: Any, path: str, decide: Callable[[dict[str, Any] | None], tuple[T, dict[str, Any] | None]], *,
         seen: StoredDoc | None, exhausted: T) -> T:
    """``decide`` on the document as read (first as ``seen``, when it carries a version), its
    write conditional on that read; a lost race reads and decides again, ``exhausted`` after
    :data:`core.ports.SWAP_ATTEMPTS` of them."""
    known = seen is not None and seen.version is not None
    first = None if seen is None or seen.version is ABSENT else seen
    for attempt in range(SWAP_ATTEMPTS):
        doc = first if attempt == 0 and known else _read(client, path)
        value, write = decide(dict(doc.data) if doc is not None else None)
        if write is None or _conditional(client, path, doc, write):
            return value
    return exhausted  # raced every time: someone else is busy with this document

"""An in-memory :class:`core.ports.Outbox` for unit tests, on the fake store's documents and lock:
each decision is :mod:`core.domain.outbox`'s, as in the Firestore adapter; under the lock every
guard is checked on the documents as they are, so a guarded commit is one step."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.domain import outbox, paths
from core.domain.documents import OutboxEvent
from core.ports import Outbox, Publisher
from tests.unit.fakes.store import InMemoryStore


class InMemoryOutbox(Outbox):
    def __init__(self, store: InMemoryStore, *, publisher: Publisher | None = None, topic: str = "") -> None:
        self.store, self.publisher, self.topic = store, publisher, topic

    def due(self, uid: str, now: datetime, *, holder: str | None = None, limit: int = outbox.SCAN) -> outbox.Due:
        with self.store._lock:
            rows = self.store.query("outbox_due", {"state": ["pending", "leased"], "due_at": now},
                                    parent=paths.user(uid), limit=limit)
            lease = self.store.get(outbox.drain_lease(uid)) if holder is not None else None
            return outbox.Due([outbox.Entry(row.path, OutboxEvent.from_store(row.data), row.version) for row in rows],
                              lease, self.store.versions.get(outbox.drain_lease(uid)))

    def commit(self, commit: outbox.Commit) -> tuple[bool, dict[str, Any] | None]:
        with self.store._lock:
            if not all(guard.holds(self.store.get(path)) for path, guard in commit.guards.items()):
                return False, None
            self.store._commit(commit.writes)
            return True, None

"""The Firestore implementation of :class:`core.ports.Outbox`: the drain lease's compare-and-swap
(the store's :meth:`swap`, :mod:`core.adapters.firestore.swap`), the round's reads at once, and the guarded commit — one
preconditioned write when every guarded document is still at the version its guard held on, else
a transaction that reads the guarded documents and writes only when every guard holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from core import tracing
from core.adapters.firestore import transactions
from core.adapters.firestore.store import stage
from core.domain import outbox, paths
from core.domain.documents import OutboxEvent
from core.domain.unit_of_work import TransactionReads
from core.ports import Outbox, Publisher, Store, Write

# The drain lease is read beside the due events (shared by the drains of one process).
_READS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbox-reads")


@tracing.spanned("firestore.outbox")
class FirestoreOutbox(Outbox):
    def __init__(self, client: Any, store: Store, *, publisher: Publisher | None = None, topic: str = "") -> None:
        self.client, self.store = client, store
        self.publisher, self.topic = publisher, topic

    def due(self, uid: str, now: datetime, *, holder: str | None = None, limit: int = outbox.SCAN) -> outbox.Due:
        lease = _READS.submit(self.store.get_all_versioned, [outbox.drain_lease(uid)]) if holder is not None else None
        rows = self.store.query("outbox_due", {"state": ["pending", "leased"], "due_at": now},
                                parent=paths.user(uid), limit=limit)
        entries = [outbox.Entry(row.path, OutboxEvent.from_store(row.data), row.version) for row in rows]
        read = lease.result()[outbox.drain_lease(uid)] if lease is not None else None
        return outbox.Due(entries, read.data if read is not None else None, read.version if read is not None else None)

    def commit(self, commit: outbox.Commit) -> tuple[bool, dict[str, Any] | None]:
        if commit.expected is not None:
            versions = self._unchanged(commit.expected, [*commit.writes, *commit.renewal])
            if versions is not None:
                return True, versions
        return self._guarded(commit), None

    def _unchanged(self, expected: Mapping[str, Any], writes: Sequence[Write]) -> dict[str, Any] | None:
        """``writes`` in one commit, no transaction, each expected document only while still at
        its version: the new versions (deletes excepted), or None, nothing written, when one had
        changed (or a version is unknown, or a set, which takes no precondition, is among them)."""
        from google.api_core import exceptions as gexc

        if not writes or any(v is None for v in expected.values()) or not set(expected) <= {w.path for w in writes}:
            return None
        if any(w.op == "set" and w.path in expected for w in writes):
            return None
        batch = self.client.batch()
        for write in writes:
            option = (self.client.write_option(last_update_time=expected[write.path])
                      if write.path in expected else None)
            stage(batch, self.client.document(write.path), write, option)
        try:
            results = batch.commit()
        except (gexc.FailedPrecondition, gexc.NotFound, gexc.Aborted, gexc.Conflict):
            return None  # one of them changed (or went) since: nothing was written
        return {w.path: r.update_time for w, r in zip(writes, results, strict=True) if w.op != "delete"}

    def _guarded(self, commit: outbox.Commit) -> bool:
        def run(transaction: Any, reads: TransactionReads) -> bool:
            found = reads.get_all(list(commit.guards))
            if not all(guard.holds(found.get(path)) for path, guard in commit.guards.items()):
                return False
            for write in commit.writes:
                stage(transaction, self.client.document(write.path), write)
            return True

        return bool(transactions.run(self.client, run))

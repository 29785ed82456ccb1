"""Firestore transactions that begin with their first read.

The SDK's ``Transaction`` spends a BeginTransaction round trip before its first read, so a begin,
a read and a commit cost three sequential round trips. :func:`run` keeps the SDK's transaction loop
but begins each attempt with its first lookup (BatchGetDocuments' ``new_transaction`` option, in
:func:`core.adapters.firestore.wire.get_all_beginning`): two round trips.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from core import tracing
from core.adapters.firestore.queries import QUERIES, build
from core.domain.unit_of_work import TransactionReads

T = TypeVar("T")
MAX_ATTEMPTS = 5  # the SDK's default


@tracing.spanned("firestore.transaction")
class Reads(TransactionReads):
    """The reads of one Firestore transaction, as the unit of work asks for them. A transaction not
    begun yet (``begin``) is begun by its first read (a lookup or a query), in the same round trip."""

    def __init__(self, client: Any, transaction: Any, *, begin: bool = False, retry_id: bytes | None = None) -> None:
        self.client, self.transaction = client, transaction
        self.begin, self.retry_id = begin, retry_id

    def get_all(self, paths: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        from core.adapters.firestore.wire import get_all, get_all_beginning

        out: dict[str, dict[str, Any] | None] = dict.fromkeys(paths)
        if paths:
            refs = [self.client.document(p) for p in paths]
            if self.begin and not self.transaction.in_progress:
                snaps = get_all_beginning(self.client, refs, self.transaction, self.retry_id)
            else:
                snaps = get_all(self.client, refs, self.transaction)
            for snap in snaps:
                out[snap.reference.path] = snap.to_dict() if snap.exists else None
        return out

    def query(self, name: str, params: Mapping[str, Any], *, parent: str, limit: int,
              after: str | None) -> list[tuple[str, dict[str, Any]]]:
        from core.adapters.firestore.wire import run_query_beginning

        base = self.client.collection(f"{parent}/{QUERIES[name].collection}")
        cursor = {"__name__": after} if after else None
        query = build(base, name, params, limit=limit, start_after=cursor)
        if self.begin and not self.transaction.in_progress:
            return run_query_beginning(self.client, query, self.transaction, self.retry_id)
        found = self.transaction.get(query)
        return [(snap.reference.path, snap.to_dict() or {}) for snap in found]


def run(client: Any, body: Callable[[Any, TransactionReads], T], max_attempts: int = MAX_ATTEMPTS) -> T:
    """The SDK's transaction loop (``firestore.transactional``: up to ``max_attempts`` attempts,
    each retry naming the first attempt's id, an Aborted commit retried at once, anything else
    rolled back and raised), except that an attempt begins with its first lookup instead of a
    BeginTransaction of its own: a begin, a read and a commit are two round trips, not three."""
    from google.api_core import exceptions as gexc

    retry_id: bytes | None = None
    last: Exception | None = None
    for _ in range(max_attempts):
        transaction = client.transaction()
        try:
            value = body(transaction, Reads(client, transaction, begin=True, retry_id=retry_id))
            if not transaction.in_progress:  # a body that read nothing
                transaction._begin(retry_id=retry_id)
            transaction._commit()
            return value
        except gexc.Aborted as exc:  # contention: the attempt is over on the server already
            last = exc
            retry_id = retry_id or transaction._id
        except BaseException:
            if transaction.in_progress:
                transaction._rollback()
            raise
    raise ValueError(f"Failed to commit transaction in {max_attempts} attempts.") from last

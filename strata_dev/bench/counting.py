"""Counting Firestore document reads and writes, and replaying recorded writes as a raw baseline.

:class:`CountingClient` is a real ``firestore.Client`` whose GAPIC stub is wrapped: every RPC still
goes to the server unchanged, and the wrapper counts what Firestore bills — a document read per
document asked for in a lookup (found or missing), per document a query returns and one for a query
that returns nothing; a document write per entry of a commit. Commits may also be *recorded* (their
``Write`` messages) so the baseline can replay exactly the same documents in raw transactions.

Every RPC's interval (from the call to its answer, or to the last message a stream yielded) is
kept too, so :meth:`Counts.sequential` can say how many of them ran one after another: the
longest chain of RPCs each of which started after the previous one had answered. That is the
number of round trips a network's latency is paid for; RPCs that overlap pay it once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


def _field(request: Any, name: str) -> Any:
    if request is None:
        return None
    if isinstance(request, dict):
        return request.get(name)
    return getattr(request, name, None)


@dataclass
class Counts:
    reads: int = 0
    writes: int = 0
    lookups: int = 0
    queries: int = 0
    commits: int = 0
    begins: int = 0
    recording: list[list[Any]] | None = None
    intervals: list[list[float]] = field(default_factory=list, repr=False)
    names: list[str] = field(default_factory=list, repr=False)  # each interval's RPC
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def snapshot(self) -> dict[str, int]:
        return {"reads": self.reads, "writes": self.writes, "lookups": self.lookups, "queries": self.queries,
                "commits": self.commits, "begins": self.begins, "rpcs": len(self.intervals),
                "sequential_rpcs": self.sequential()}

    def reset(self, record: bool = False) -> None:
        with self.lock:
            self.reads = self.writes = self.lookups = self.queries = self.commits = self.begins = 0
            self.recording = [] if record else None
            self.intervals = []
            self.names = []

    def started(self, name: str = "") -> list[float]:
        """A new RPC's interval (its end moves as it answers: :func:`answered`)."""
        now = time.monotonic()
        interval = [now, now]
        with self.lock:
            self.intervals.append(interval)
            self.names.append(name)
        return interval

    def chain(self, start: int = 0, stop: int | None = None) -> list[str]:
        """The RPCs of one longest sequential chain (:meth:`sequential`), in order."""
        with self.lock:
            spans = sorted((end, begin, name) for (begin, end), name
                           in zip(self.intervals[start:stop], self.names[start:stop], strict=True))
        out, last_end = [], float("-inf")
        for end, begin, name in spans:
            if begin >= last_end:
                out.append(name)
                last_end = end
        return out

    def sequential(self, start: int = 0, stop: int | None = None) -> int:
        """The longest chain of RPCs each started after the previous one answered (greedy by end
        time: the maximum number of pairwise non-overlapping intervals); ``start``/``stop`` take
        the RPCs started in that slice of :attr:`intervals` only."""
        with self.lock:
            spans = sorted((end, begin) for begin, end in self.intervals[start:stop])
        chain, last_end = 0, float("-inf")
        for end, begin in spans:
            if begin >= last_end:
                chain += 1
                last_end = end
        return chain


def answered(interval: list[float]) -> None:
    interval[1] = time.monotonic()


# The Firestore RPCs the wrapper times without counting documents (the counted ones are methods).
_TIMED = frozenset({"rollback", "run_aggregation_query", "batch_write", "list_documents", "get_document",
                    "update_document", "delete_document", "create_document", "partition_query",
                    "list_collection_ids"})


class _TimedStream:
    """A response stream whose interval ends at the last message it yielded."""

    def __init__(self, stream: Any, interval: list[float]) -> None:
        self._stream = stream
        self._interval = interval

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._stream)
        finally:
            answered(self._interval)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _timed(call: Any, counts: Counts, name: str = "") -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        interval = counts.started(name)
        try:
            result = call(*args, **kwargs)
        finally:
            answered(interval)
        if hasattr(result, "__next__"):
            return _TimedStream(result, interval)
        return result

    return timed


class _CountingApi:
    """Delegates to the real GAPIC client; counts lookups, query results and commit writes."""

    def __init__(self, api: Any, counts: Counts) -> None:
        self._api = api
        self._counts = counts

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._api, name)
        return _timed(attr, self._counts, name) if name in _TIMED else attr

    def batch_get_documents(self, request: Any = None, **kwargs: Any) -> Any:
        documents = _field(request, "documents") or []
        with self._counts.lock:
            self._counts.reads += len(documents)
            self._counts.lookups += 1
        return _timed(self._api.batch_get_documents, self._counts, "lookup")(request=request, **kwargs)

    def begin_transaction(self, request: Any = None, **kwargs: Any) -> Any:
        with self._counts.lock:
            self._counts.begins += 1
        return _timed(self._api.begin_transaction, self._counts, "begin")(request=request, **kwargs)

    def run_query(self, request: Any = None, **kwargs: Any) -> Any:
        interval = self._counts.started("query")
        try:
            stream = self._api.run_query(request=request, **kwargs)
        finally:
            answered(interval)
        return _QueryStream(_TimedStream(stream, interval), self._counts)

    def commit(self, request: Any = None, **kwargs: Any) -> Any:
        writes = list(_field(request, "writes") or [])
        with self._counts.lock:
            self._counts.writes += len(writes)
            self._counts.commits += 1
            if self._counts.recording is not None and writes:
                self._counts.recording.append(writes)
        return _timed(self._api.commit, self._counts, "commit")(request=request, **kwargs)


class _QueryStream:
    """Iterates a RunQuery stream, counting returned documents (one read minimum per query)."""

    def __init__(self, stream: Any, counts: Counts) -> None:
        self._stream = stream
        self._counts = counts
        self._returned = 0
        with counts.lock:
            counts.queries += 1
            counts.reads += 1  # the minimum; the first returned document takes its place

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        response = next(self._stream)
        if response._pb.HasField("document"):
            self._returned += 1
            if self._returned > 1:
                with self._counts.lock:
                    self._counts.reads += 1
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def counting_client(project_id: str) -> Any:
    """A fresh client (not the process-wide cached one) whose RPCs are counted in ``.counts``."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import firestore

    class CountingClient(firestore.Client):  # type: ignore[misc]
        counts: Counts
        _counting_api: _CountingApi | None

        @property
        def _firestore_api(self) -> Any:
            real = super()._firestore_api
            wrapped = getattr(self, "_counting_api", None)
            if wrapped is None or wrapped._api is not real:
                wrapped = self._counting_api = _CountingApi(real, self.counts)
            return wrapped

    client = CountingClient(project=project_id, credentials=AnonymousCredentials())
    client.counts = Counts()
    client._counting_api = None
    return client


def retarget(writes: list[Any], old_uid: str, new_uid: str) -> list[Any]:
    """Copies of recorded ``Write`` messages aimed at another user's documents, without preconditions."""
    from google.cloud.firestore_v1.types import write as write_types

    old, new = f"/documents/users/{old_uid}/", f"/documents/users/{new_uid}/"
    out = []
    for w in writes:
        pb = write_types.Write.pb(w) if not hasattr(w, "SerializeToString") else w
        copy = type(pb)()
        copy.CopyFrom(pb)
        copy.ClearField("current_document")
        if copy.HasField("update"):
            copy.update.name = copy.update.name.replace(old, new)
        elif copy.WhichOneof("operation") == "delete":
            copy.delete = copy.delete.replace(old, new)
        out.append(copy)
    return out


def raw_transaction(client: Any, writes: list[Any]) -> None:
    """One Firestore transaction (begin + commit, no reads) that writes exactly ``writes``."""
    api = client._firestore_api
    database = client._database_string
    began = api.begin_transaction(request={"database": database}, metadata=client._rpc_metadata)
    api.commit(request={"database": database, "writes": writes, "transaction": began.transaction},
               metadata=client._rpc_metadata)


def as_documents(client: Any, writes: list[Any]) -> list[tuple[Any, dict[str, Any] | None, bool]]:
    """Recorded ``Write`` messages back as (document reference, data or None for a delete, merge)."""
    from google.cloud.firestore_v1 import _helpers

    from core.adapters.firestore.codec import document_path

    out: list[tuple[Any, dict[str, Any] | None, bool]] = []
    for w in writes:
        if w.HasField("update"):
            path = document_path(w.update.name)
            data: dict[str, Any] = dict(_helpers.decode_dict(w.update.fields, client))  # type: ignore[arg-type]
            out.append((client.document(path), data, w.HasField("update_mask")))
        else:
            out.append((client.document(document_path(w.delete)), None, False))
    return out


def sdk_transaction(client: Any, documents: list[tuple[Any, dict[str, Any] | None, bool]]) -> None:
    """One transaction through the SDK (begin + commit, no reads) writing ``documents`` from Python
    dicts — what any client pays to write them, document encoding included."""
    from google.cloud import firestore

    @firestore.transactional
    def write(transaction: Any) -> None:
        for ref, data, merge in documents:
            if data is None:
                transaction.delete(ref)
            else:
                transaction.set(ref, data, merge=merge)

    write(client.transaction())


@dataclass
class Replayed:
    """How long the recorded commits took written again: as SDK transactions from dicts (the
    baseline) and as the recorded ``Write`` messages (the floor)."""

    transactions: int
    documents: int
    sdk_seconds: float
    floor_seconds: float


def replay(client: Any, commits: list[list[Any]], recorded_uid: str, label: str, sdk_meter: Any = None) -> Replayed:
    """Write ``commits`` (recorded for ``recorded_uid``) again, one transaction each, for two fresh
    users: first through the SDK from Python dicts, then as the encoded messages themselves.
    ``sdk_meter`` (a :class:`strata_dev.bench.procs.CpuMeter`) measures the SDK part's CPU."""
    import time
    import uuid

    def fresh(kind: str) -> str:
        return f"bench-{label}-{kind}-{uuid.uuid4().hex[:10]}"

    documents = [as_documents(client, retarget(w, recorded_uid, fresh("baseline"))) for w in commits]
    if sdk_meter is not None:
        sdk_meter.start()
    started = time.monotonic()
    for docs in documents:
        sdk_transaction(client, docs)
    sdk_seconds = time.monotonic() - started
    if sdk_meter is not None:
        sdk_meter.stop()
    prepared = [retarget(w, recorded_uid, fresh("floor")) for w in commits]
    started = time.monotonic()
    for writes in prepared:
        raw_transaction(client, writes)
    return Replayed(len(commits), sum(len(d) for d in documents), sdk_seconds, time.monotonic() - started)

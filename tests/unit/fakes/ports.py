"""In-memory stand-ins for the provider, messaging and clock ports (unit tests only). Each
subclasses the real port, so a signature drift fails the type check and the tests."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from core import config
from core.adapters.rules import RuleRouter
from core.adapters.rules.extractor import RuleExtractor
from core.bootstrap import Context
from core.ports import (
    Clock,
    Embedder,
    Hit,
    KeywordIndex,
    ProjectionDoc,
    ProviderRecord,
    Publisher,
    TaskQueue,
    VectorIndex,
    WebhookSender,
)
from tests.unit.fakes.outbox import InMemoryOutbox
from tests.unit.fakes.store import InMemoryStore


class FakeClock(Clock):
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)


class _Index:
    """Rows by provider id; a search matches rows sharing a word with the query."""

    def __init__(self) -> None:
        self.rows: dict[str, ProjectionDoc] = {}
        self.calls: list[tuple[str, str]] = []
        self.fail: Exception | None = None

    def _guard(self, call: str, uid: str) -> None:
        self.calls.append((call, uid))
        if self.fail is not None:
            raise self.fail

    def ensure_ready(self) -> None:
        return None

    def delete(self, uid: str, memory_ids: Sequence[str]) -> None:
        self._guard("delete", uid)
        for pid in [p for p, d in self.rows.items() if d.uid == uid and d.memory_id in memory_ids]:
            del self.rows[pid]

    def purge_user(self, uid: str) -> None:
        self._guard("purge_user", uid)
        for pid in [p for p, d in self.rows.items() if d.uid == uid]:
            del self.rows[pid]

    def provider_ids(self, uid: str) -> set[str]:
        return {p for p, d in self.rows.items() if d.uid == uid}

    def records(self, uid: str | None) -> Iterator[list[ProviderRecord]]:
        rows = [ProviderRecord(p, d.uid, d.memory_id, d.revision, d.content) for p, d in sorted(self.rows.items())
                if uid is None or d.uid == uid]
        if rows:
            yield rows

    def _put(self, docs: Sequence[ProjectionDoc]) -> None:
        for doc in docs:
            for pid in [p for p, d in self.rows.items() if d.uid == doc.uid and d.memory_id == doc.memory_id]:
                del self.rows[pid]
            self.rows[doc.provider_id] = doc

    def _search(self, uid: str, words: set[str], layers: Sequence[str], limit: int,
                devices: Sequence[str] | None = None) -> list[Hit]:
        hits = []
        for pid, doc in sorted(self.rows.items()):
            overlap = len(words & set(doc.content.casefold().split()))
            in_scope = devices is None or bool(set(doc.capture_device_ids) & set(devices))
            if doc.uid == uid and doc.layer in layers and overlap and in_scope:
                hits.append(Hit(doc.memory_id, float(overlap), pid))
        return sorted(hits, key=lambda h: -h.score)[:limit]


class FakeKeywordIndex(_Index, KeywordIndex):
    def upsert(self, docs: Sequence[ProjectionDoc]) -> None:
        self._guard("upsert", docs[0].uid if docs else "")
        self._put(docs)

    def search(self, uid: str, query: str, *, layers: Sequence[str], limit: int,
               devices: Sequence[str] | None = None) -> list[Hit]:
        return self._search(uid, set(query.casefold().split()), layers, limit, devices)


class FakeVectorIndex(_Index, VectorIndex):
    def upsert(self, docs: Sequence[ProjectionDoc], vectors: Sequence[Sequence[float]]) -> None:
        assert len(docs) == len(vectors)
        self._guard("upsert", docs[0].uid if docs else "")
        self._put(docs)

    def search(self, uid: str, vector: Sequence[float], *, layers: Sequence[str], limit: int,
               devices: Sequence[str] | None = None) -> list[Hit]:
        return []


class FakeEmbedder(Embedder):
    dim = 8
    name = "fake-hash"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:self.dim]] for t in texts]


class FakePublisher(Publisher):
    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []
        # A subscriber a test wires in: each message is handed to it as it is published.
        self.deliver: Callable[[str, dict[str, Any]], Any] | None = None

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        self.messages.append((topic, data))
        if self.deliver is not None:
            self.deliver(topic, data)


class FakeTaskQueue(TaskQueue):
    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.fail: Exception | None = None

    def enqueue(self, url: str, payload: dict[str, Any], *, task_id: str | None = None,
                queue: str | None = None, schedule_at: datetime | None = None) -> None:
        if self.fail is not None:
            raise self.fail
        name = task_id or f"task-{len(self.tasks)}"
        self.tasks.setdefault(name, {"url": url, "payload": payload, "queue": queue, "schedule_at": schedule_at})


class FakeWebhookSender(WebhookSender):
    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.posts: list[tuple[str, str, bytes]] = []

    def resolve(self, host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    def post(self, url: str, address: str, body: bytes, *, timeout_s: float) -> int:
        self.posts.append((url, address, body))
        return self.status


class _NoFirestore:
    """Stands in for the Firestore client: a service that reached past the store fails."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a service used the Firestore client directly ({name}); use ctx.store")


@dataclass
class World:
    """A Context wired to in-memory parts, and handles on each part."""

    ctx: Context
    store: InMemoryStore
    clock: FakeClock
    keyword: FakeKeywordIndex
    vector: FakeVectorIndex
    publisher: FakePublisher
    tasks: FakeTaskQueue
    sender: FakeWebhookSender

    @property
    def nudges(self) -> list[tuple[str, int]]:
        """The drain nudges published, as (uid, sequence)."""
        topic = self.ctx.settings.projection_topic
        return [(m["uid"], m.get("sequence", 0)) for t, m in self.publisher.messages if t == topic and "purge" not in m]


def world(**settings: Any) -> World:
    clock = FakeClock()
    base = {"consolidate_url": "http://tasks.invalid/consolidate", "webhook_url": "http://tasks.invalid/deliver_webhook",
            **settings}
    keyword, vector, publisher, tasks, sender = (FakeKeywordIndex(), FakeVectorIndex(), FakePublisher(),
                                                 FakeTaskQueue(), FakeWebhookSender())
    topic = config.Settings(**base).projection_topic
    store = InMemoryStore(clock.now, publisher=publisher, topic=topic)
    ctx = Context(config.Settings(**base), store=store, outbox=InMemoryOutbox(store, publisher=publisher, topic=topic),
                  clock=clock,
                  keyword_index=keyword, vector_index=vector, embedder=FakeEmbedder(), publisher=publisher,
                  tasks=tasks, webhook_sender=sender, extractor=RuleExtractor(), router=RuleRouter(),
                  client=_NoFirestore())
    return World(ctx, store, clock, keyword, vector, publisher, tasks, sender)

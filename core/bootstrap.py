"""The composition root: wires ports to adapters. Only the entry points import it
(:mod:`core.functions_entry`, :mod:`core.start_check`, the API app and the ``strata`` CLI); services
see what it builds as :class:`core.ports.Ports`. Everything is built lazily on first use, never at
import time, so a function cold start pays only for what its request touches.

``client`` and ``paths`` (the raw Firestore client and its reference builder) are here for the
adapters it builds and for developer tooling; they are not part of :class:`core.ports.Ports`."""

from __future__ import annotations

import functools
import logging
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from core import config
from core.adapters.firestore.client import Paths, firestore_client
from core.domain import paths
from core.ports import (
    Clock,
    Embedder,
    Extractor,
    KeywordIndex,
    Outbox,
    Publisher,
    Router,
    Store,
    TaskQueue,
    VectorIndex,
    WebhookSender,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.domain.records import Sensitivity
    from core.domain.slots import Slot

log = logging.getLogger(__name__)


class Context:
    """The process's adapters, built on first use; a :class:`core.ports.Ports` for the services."""

    def __init__(self, settings: config.Settings | None = None, **overrides: Any) -> None:
        self.settings = settings or config.load()
        # The process's path layout (the names an app chose): every path is built against it.
        paths.configure(self.settings.data_root, self.settings.conversations_path)
        # An override given as None is no override (callers pass ``clock=None`` meaning "the system's").
        self._overrides = {name: part for name, part in overrides.items() if part is not None}
        self._building = threading.RLock()  # factories may ask for other parts (the store → the client)

    def _get(self, name: str, factory: Any) -> Any:
        # A function instance serves requests on several threads: the first ones must not each build
        # their own store or client.
        if name not in self._overrides:
            with self._building:
                if name not in self._overrides:
                    self._overrides[name] = factory()
        return self._overrides[name]

    def provide(self, name: str, part: Any) -> Any:
        """Use ``part``, built and checked elsewhere (the start check's embedder), as this
        context's ``name`` unless it already has one; return the one in use."""
        return self._get(name, lambda: part)

    @property
    def client(self) -> Any:
        return self._get("client", lambda: firestore_client(self.settings))

    @property
    def paths(self) -> Paths:
        return Paths(self.client)

    @property
    def store(self) -> Store:
        """The canonical store every service reads and writes through (override ``store`` with a
        fake in unit tests)."""

        def build() -> Store:
            from core.adapters.firestore.store import FirestoreStore

            return FirestoreStore(self.client, self.now, publisher=self.publisher, topic=self.settings.projection_topic)

        return self._get("store", build)

    @property
    def outbox(self) -> Outbox:
        """The users' outboxes and drain leases, in the store's database (override ``outbox`` beside
        a fake ``store`` in unit tests)."""

        def build() -> Outbox:
            from core.adapters.firestore.outbox import FirestoreOutbox

            return FirestoreOutbox(self.client, self.store, publisher=self.publisher,
                                   topic=self.settings.projection_topic)

        return self._get("outbox", build)

    @property
    def clock(self) -> Clock:
        """The time every service reads (``ctx.now()``); override ``clock`` with a :class:`Clock` or a
        zero-argument callable."""
        from core.adapters.clock import CallableClock, SystemClock

        given = self._get("clock", SystemClock)
        return given if isinstance(given, Clock) else CallableClock(given)

    def now(self) -> datetime:
        return self.clock.now()

    @property
    def publisher(self) -> Publisher:
        def build() -> Publisher:
            from core.adapters.pubsub import PubSubPublisher

            return PubSubPublisher(self.settings.project_id)

        return self._get("publisher", build)

    @property
    def tasks(self) -> TaskQueue:
        def build() -> TaskQueue:
            from core.adapters.tasks import CloudTasksQueue

            return CloudTasksQueue(self.settings)

        return self._get("tasks", build)

    @property
    def webhook_sender(self) -> WebhookSender:
        def build() -> WebhookSender:
            from core.adapters.webhook_http import HttpWebhookSender

            return HttpWebhookSender()

        return self._get("webhook_sender", build)

    @property
    def keyword_index(self) -> KeywordIndex:
        def build() -> KeywordIndex:
            from core.adapters.typesense_index import TypesenseIndex

            return TypesenseIndex(self.settings.typesense_url, self.settings.typesense_api_key,
                                  self.settings.typesense_collection,
                                  create=self.settings.provider_setup == "create")

        return self._get("keyword_index", build)

    @property
    def vector_index(self) -> VectorIndex:
        def build() -> VectorIndex:
            from core.adapters.pinecone_index import PineconeIndex

            return PineconeIndex(self.settings.pinecone_api_key or "local", self.settings.pinecone_host,
                                 self.settings.pinecone_namespace,
                                 legacy_namespace=self.settings.pinecone_legacy_namespace)

        return self._get("vector_index", build)

    @property
    def embedder(self) -> Embedder:
        def build() -> Embedder:
            from core.adapters.embeddings import build_embedder

            return build_embedder(self.settings)

        return self._get("embedder", build)

    @property
    def extractor(self) -> Extractor:
        def build() -> Extractor:
            from core.adapters.llm import build_extractor

            return build_extractor(self.settings)

        return self._get("extractor", build)

    @property
    def router(self) -> Router:
        def build() -> Router:
            from core.adapters.llm import build_router

            return build_router(self.settings)

        return self._get("router", build)

    @property
    def fallback_extractor(self) -> Extractor:
        def build() -> Extractor:
            from core.adapters.rules.extractor import RuleExtractor

            return RuleExtractor()

        return self._get("fallback_extractor", build)

    def read_slot(self, text: str) -> Slot | None:
        from core.adapters.rules.slot_words import read_slot

        return read_slot(text)

    def keyword_terms(self, query: str) -> str:
        from core.adapters.rules.query_words import keyword_terms

        return keyword_terms(query)

    def owner_voice(self, query: str, name: str | None) -> str:
        from core.adapters.rules.query_words import owner_voice

        return owner_voice(query, name)

    @property
    def sensitivity(self) -> Sensitivity:
        from core.adapters.rules import sensitivity

        return sensitivity

    @property
    def content_words(self) -> Callable[[str], frozenset[str]]:
        from core.adapters.rules.similarity import content_words

        return content_words

    @property
    def similarity(self) -> Callable[[str, str], float]:
        from core.adapters.rules.similarity import similarity

        return similarity


_DEFAULT_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _default_context() -> Context:
    return Context()


def default_context() -> Context:
    """The process's one Context (requests arriving together at a cold start share it)."""
    with _DEFAULT_LOCK:
        return _default_context()

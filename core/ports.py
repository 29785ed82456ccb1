"""The small abstract ports between Strata's services and the outside world.

Services depend only on these; :mod:`core.bootstrap` wires real adapters (or fakes in unit tests).
Adapters raise :class:`core.errors.RetryableError` subclasses for transient provider failures and
:class:`core.errors.PermanentError` for refusals, never raw SDK exceptions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


# --------------------------------------------------------------------------- projections
@dataclass(frozen=True)
class ProjectionDoc:
    """What a keyword/vector index stores for one visible, unrestricted memory."""

    provider_id: str  # memproj:<hash(uid, memory_id)>
    uid: str
    memory_id: str
    layer: str
    revision: int
    content: str
    category: str = "interesting"
    updated_at: float = 0.0  # epoch seconds
    quote: str = ""  # the evidence quotes (the user's words), a lower-weighted keyword field


@dataclass(frozen=True)
class ProviderRecord:
    """One stored row as a provider holds it (what the doctor compares with canonical state)."""

    provider_id: str
    uid: str
    memory_id: str
    revision: int | None
    content: str | None = None  # None where the provider keeps no text (the vector index)


@dataclass(frozen=True)
class Hit:
    """A provider candidate; services hydrate it from Firestore before returning it."""

    memory_id: str
    score: float
    provider_id: str = ""


class KeywordIndex(ABC):
    """Typesense (or compatible) keyword index over ProjectionDocs."""

    @abstractmethod
    def ensure_ready(self) -> None: ...

    @abstractmethod
    def upsert(self, docs: Sequence[ProjectionDoc]) -> None:
        """Replace each doc's row; rows matching (uid, memory_id) are deleted first."""

    @abstractmethod
    def delete(self, uid: str, memory_ids: Sequence[str]) -> None:
        """Delete every row of these memories (by (uid, memory_id) metadata, any id form)."""

    @abstractmethod
    def purge_user(self, uid: str) -> None: ...

    @abstractmethod
    def search(self, uid: str, query: str, *, layers: Sequence[str], limit: int) -> list[Hit]: ...

    @abstractmethod
    def provider_ids(self, uid: str) -> set[str]:
        """Every stored id for the user (trace checks, convergence tests)."""

    @abstractmethod
    def records(self, uid: str | None) -> Iterator[list[ProviderRecord]]:
        """The user's rows (every row when ``uid`` is None), streamed in bounded pages."""


class VectorIndex(ABC):
    """Pinecone (or the local compatible endpoint) over ProjectionDocs with vectors."""

    @abstractmethod
    def ensure_ready(self) -> None: ...

    @abstractmethod
    def upsert(self, docs: Sequence[ProjectionDoc], vectors: Sequence[Sequence[float]]) -> None: ...

    @abstractmethod
    def delete(self, uid: str, memory_ids: Sequence[str]) -> None: ...

    @abstractmethod
    def purge_user(self, uid: str) -> None: ...

    @abstractmethod
    def search(self, uid: str, vector: Sequence[float], *, layers: Sequence[str], limit: int) -> list[Hit]: ...

    @abstractmethod
    def provider_ids(self, uid: str) -> set[str]: ...

    @abstractmethod
    def records(self, uid: str | None) -> Iterator[list[ProviderRecord]]:
        """The user's rows (every row carrying a uid when ``uid`` is None), in bounded pages."""


class Embedder(ABC):
    """Text → vectors. ``dim`` must equal the vector index dimension."""

    dim: int
    name: str

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


# --------------------------------------------------------------------------- messaging
class Publisher(ABC):
    @abstractmethod
    def publish(self, topic: str, data: dict[str, Any]) -> None:
        """Best-effort nudge; a lost message is recovered by the scheduled sweep."""


class TaskQueue(ABC):
    @abstractmethod
    def enqueue(self, url: str, payload: dict[str, Any], *, task_id: str | None = None,
                queue: str | None = None, schedule_at: datetime | None = None) -> None:
        """Create an HTTP task calling ``url`` with ``payload`` on ``queue`` (default: the
        consolidation queue), run at ``schedule_at`` (default: now); a ``task_id`` already used is
        a no-op."""


class WebhookSender(ABC):
    """Outbound developer-webhook HTTP. The service checks every resolved address before posting,
    and the sender connects to that checked address only (no second lookup, no redirects)."""

    @abstractmethod
    def resolve(self, host: str, port: int) -> list[str]:
        """The host's addresses (an IP literal resolves to itself); [] when it does not resolve."""

    @abstractmethod
    def post(self, url: str, address: str, body: bytes, *, timeout_s: float) -> int:
        """POST ``body`` (JSON) to ``url``, connecting to ``address``; the answer's status code.
        Raises :class:`core.errors.RetryableError` on a timeout or a connection failure."""


class Clock(ABC):
    @abstractmethod
    def now(self) -> datetime: ...

"""The small abstract ports between Strata's services and the outside world.

Services depend only on these; :mod:`core.bootstrap` wires real adapters (or fakes in unit tests).
Adapters raise :class:`core.errors.RetryableError` subclasses for transient provider failures and
:class:`core.errors.PermanentError` for refusals, never raw SDK exceptions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
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
    def enqueue(self, url: str, payload: dict[str, Any], *, task_id: str | None = None) -> None: ...


class Clock(ABC):
    @abstractmethod
    def now(self) -> datetime: ...

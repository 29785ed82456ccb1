"""The legal state-combination matrix (docs/data-model.md) and the vocabulary of the state axes.

``layer`` (short_term | long_term | archive) is the only axis clients see; ``status`` and
``processing_state`` are orthogonal but not freely combinable. Physical storage may say
``hidden`` (rejected / secret outcome): it maps to ``tombstoned`` for validation and reads.
``context_only`` is not a value on any axis.
"""

from __future__ import annotations

from enum import StrEnum

from core.errors import IllegalState

# How long a Short-term item waits for its decision by default, in days (``STRATA_SHORT_TERM_TTL_DAYS``).
SHORT_TERM_TTL_DAYS = 30


class Layer(StrEnum):
    SHORT_TERM = "short_term"
    LONG_TERM = "long_term"
    ARCHIVE = "archive"


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    TOMBSTONED = "tombstoned"


class ProcessingState(StrEnum):
    PENDING = "pending"
    PROCESSED = "processed"
    BLOCKED = "blocked"


HIDDEN = "hidden"  # physical-only status value

LEGAL: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    Layer.SHORT_TERM: (frozenset({"active", "superseded", "tombstoned"}),
                       frozenset({"pending", "processed", "blocked"})),
    Layer.LONG_TERM: (frozenset({"active", "superseded", "tombstoned"}), frozenset({"processed"})),
    Layer.ARCHIVE: (frozenset({"active", "tombstoned"}), frozenset({"processed"})),
}


def physical_status_to_record_status(status: str) -> str:
    return Status.TOMBSTONED.value if status == HIDDEN else status


def is_legal_state_combination(layer: str, status: str, processing_state: str) -> bool:
    if layer not in LEGAL:  # includes context_only
        return False
    statuses, states = LEGAL[layer]
    return physical_status_to_record_status(status) in statuses and processing_state in states


def assert_legal_state(layer: str, status: str, processing_state: str) -> None:
    if not is_legal_state_combination(layer, status, processing_state):
        raise IllegalState(f"illegal memory state: layer={layer} status={status} processing_state={processing_state}")


def default_visible(layer: str, status: str, processing_state: str) -> bool:
    """Default reads: active + processed Short-term and Long-term; never Archive, never tombstoned."""
    return (
        layer in (Layer.SHORT_TERM, Layer.LONG_TERM)
        and physical_status_to_record_status(status) == Status.ACTIVE
        and processing_state == ProcessingState.PROCESSED
    )


def read_class(layer: str, status: str, processing_state: str) -> str:
    """Denormalised read bucket stored on each item: ``default`` | ``archive`` | ``hidden``."""
    if default_visible(layer, status, processing_state):
        return "default"
    if layer == Layer.ARCHIVE and physical_status_to_record_status(status) == Status.ACTIVE:
        return "archive"
    return "hidden"

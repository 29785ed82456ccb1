"""Required processing: what every pending item goes through before any route (admission needs it)."""

from __future__ import annotations

from core.domain.records import SECRET_LABELS, MemoryItem, Sensitivity
from core.domain.states import ProcessingState


def processed(item: MemoryItem, *, sensitivity: Sensitivity) -> MemoryItem:
    """A copy of a pending item after required processing (normalised, labelled, ``processed``);
    content that turns out to hold a secret is hidden and cleared instead of stored."""
    item = item.model_copy(deep=True)
    labels = sensitivity.label_sensitivity(item.content)
    secret = bool(labels & SECRET_LABELS)  # what contains_secret answers, without a second scan
    item.content = " ".join(item.content.split())
    item.sensitivity_labels = sorted(set(item.sensitivity_labels) | set(labels))
    if secret:
        item.status, item.content = "hidden", ""
    item.processing_state = ProcessingState.PROCESSED
    return item

"""An independent reference model of the spec's read rules, for test oracles.

Written from the rules ``docs/data-model.md`` states (the memory record, the legal-states table, the
bounds; the design's origin is the original system's domain model), never imported from ``core``: a test that asks ``core`` what the answer is agrees with the code whatever
the code does. Everything here works on raw stored dicts (what Firestore holds) or plain strings.

* :func:`legal` — the legal-states table (physical ``hidden`` maps to ``tombstoned``).
* :func:`default_visible` — which memories a default read shows.
* :func:`restricted` / :data:`RESTRICTED_LABELS` — "The memory record": the restricted labels.
* :func:`projectable` — default reads and projections: providers hold one record per visible, unrestricted memory.
* :func:`route_outcome_legal` — "Consolidation routes": what each terminal consolidation route may
  leave behind (promote → active Long-term with receipt and graph assertion; archive/review/reject
  never Long-term).
* :func:`primary_category` — "Categories": the primary four and the legacy map.

Constants copied from docs/data-model.md are the documented values; where a test compares them to ``core``'s
own constant, that comparison is a *regression pin* (the code must keep the documented value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# docs/data-model.md "Layers and legal states": layer -> (legal statuses, legal processing states)
LEGAL_MATRIX: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "short_term": (frozenset({"active", "superseded", "tombstoned"}), frozenset({"pending", "processed", "blocked"})),
    "long_term": (frozenset({"active", "superseded", "tombstoned"}), frozenset({"processed"})),
    "archive": (frozenset({"active", "tombstoned"}), frozenset({"processed"})),
}
ROUTES = frozenset({"promote", "archive", "review", "reject"})

# docs/data-model.md "The memory record" (restricted labels) and "Categories"
RESTRICTED_LABELS = frozenset({
    "credential", "secret", "financial", "health", "intimate", "minor", "workplace_confidential",
    "identity_authentication",
})
PRIMARY_CATEGORIES = ("interesting", "system", "manual", "workflow")
LEGACY_TO_PRIMARY = {
    "core": "system", "hobbies": "system", "lifestyle": "system", "interests": "system", "habits": "system",
    "work": "system", "skills": "system", "learnings": "interesting", "other": "system", "auto": "system",
}


def record_status(physical_status: str | None) -> str:
    """A stored ``hidden`` is ``tombstoned`` for validation and reads (docs/data-model.md)."""
    return "tombstoned" if physical_status == "hidden" else str(physical_status)


def legal(layer: Any, status: Any, processing_state: Any) -> bool:
    if layer not in LEGAL_MATRIX:  # includes context_only and missing
        return False
    statuses, states = LEGAL_MATRIX[layer]
    return record_status(status) in statuses and processing_state in states


def item_legal(item: Mapping[str, Any]) -> bool:
    return legal(item.get("layer"), item.get("status"), item.get("processing_state"))


def default_visible(item: Mapping[str, Any]) -> bool:
    """Legal states: Short-term and Long-term, active + processed only; Archive never by default;
    tombstoned (and physical hidden) never."""
    return (item.get("layer") in ("short_term", "long_term") and record_status(item.get("status")) == "active"
            and item.get("processing_state") == "processed")


def restricted(labels: Iterable[str] | None) -> bool:
    return bool(set(labels or ()) & RESTRICTED_LABELS)


def projectable(item: Mapping[str, Any]) -> bool:
    """Projections (docs/data-model.md, "Layers and legal states"): visible and unrestricted items are the only ones a keyword
    or vector provider may hold (restricted items are delete-only)."""
    return default_visible(item) and not restricted(item.get("sensitivity_labels"))


def lineage(item: Mapping[str, Any], memory_id: str) -> str:
    """The memory record's ``canonical_memory_id``: default reads collapse aliases on this lineage."""
    return str(item.get("canonical_memory_id") or memory_id)


def visible_lineages(items: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The logical memories a default read must show, once each."""
    return {lineage(item, mid) for mid, item in items.items() if default_visible(item)}


def route_outcome_problems(item: Mapping[str, Any], route: str, *, has_graph_assertion: bool) -> list[str]:
    """Spec boundary rules for the state a terminal route leaves: promote → Long-term, active,
    processed, with a server-authored promotion receipt and a graph assertion; every other route
    never reaches Long-term."""
    problems: list[str] = []
    if route not in ROUTES:
        return [f"unknown route {route!r}"]
    layer = item.get("layer")
    if route == "promote":
        if record_status(item.get("status")) == "active" and layer == "long_term":
            receipt = (item.get("promotion") or {}).get("admission_receipt") or item.get("admission_receipt")
            if not receipt:
                problems.append("active Long-term without an admission receipt")
            if not has_graph_assertion:
                problems.append("active Long-term without a graph assertion")
    elif layer == "long_term" and record_status(item.get("status")) == "active":
        problems.append(f"route {route} reached Long-term")
    if not item_legal(item):
        problems.append(f"illegal state {(layer, item.get('status'), item.get('processing_state'))}")
    return problems


def primary_category(raw: str | None) -> str:
    """docs/data-model.md "Categories": primary four kept; legacy values map (learnings → interesting, the rest → system);
    anything else (including empty) → interesting. Matching is case- and space-insensitive."""
    value = (raw or "").strip().casefold()
    if value in PRIMARY_CATEGORIES:
        return value
    return LEGACY_TO_PRIMARY.get(value, "interesting")

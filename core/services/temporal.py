"""What was true then: list and search at a point in valid time (``as_of``).

A memory holds its valid time (``valid_from``: the day of the conversation that stated it, else
when it was recorded; ``valid_to``: set when a later statement ended it at consolidation). An
ended fact stays as history: a superseded Long-term item, in no index and in no default read.
A read ``as_of`` a moment answers what was true then: the memories the default read shows that had
begun by then and, from the history, the ended facts that were still true then. Ended facts are
read from Firestore (superseded Long-term items, a bounded scan newest first) and searched by
term overlap, as the Archive is; a current memory is searched as usual and kept when it had begun.
Reading is pure: nothing is written.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time
from typing import Any

from core.domain import paths
from core.domain.records import MemoryItem, valid_at
from core.domain.states import Layer, Status
from core.domain.visibility import collapse_lineage
from core.errors import BadRequest
from core.ports import Ports

HISTORY_SCAN = 1000  # ended facts a read as_of considers, newest first
_WORD = re.compile(r"\w+")
AS_OF_PATTERN = r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?"


def parse_as_of(value: str | None) -> datetime | None:
    """``as_of`` as a UTC moment: a date means the end of that day (what was true on it, after
    everything said that day); a time without an offset is UTC. None when absent; 400 when unreadable."""
    if value is None:
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime.combine(day, time.max, tzinfo=UTC)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise BadRequest("as_of must be an ISO-8601 date or date and time", code="validation_error") from exc
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def is_history(item: MemoryItem) -> bool:
    """An ended fact: a Long-term memory a later statement superseded."""
    return item.layer == Layer.LONG_TERM and item.record_status == Status.SUPERSEDED


def history(ctx: Ports, uid: str, scan: int = HISTORY_SCAN) -> Iterator[MemoryItem]:
    """The user's ended facts, in the list order (``created_at``, id descending), at most ``scan``
    hidden Long-term rows read (tombstones among them are skipped)."""
    start_after: Any = None
    read = 0
    page = 200
    while read < scan:
        rows = ctx.store.query("list_by_read_class_and_layer", {"read_class": ["hidden"], "layer": "long_term"},
                               parent=paths.user(uid), limit=min(page, scan - read), start_after=start_after)
        for row in rows:
            item = MemoryItem.from_store(row.data)
            start_after = {"created_at": item.created_at, "__name__": row.id}
            if is_history(item) and not item.restricted:
                yield item
        read += len(rows)
        if len(rows) < page:
            return


def at(items: Iterator[MemoryItem], when: datetime) -> Iterator[MemoryItem]:
    """The items of ``items`` that were true at ``when``."""
    return (item for item in items if valid_at(item, when))


def merge_listing(current: Iterator[MemoryItem], ended: Iterator[MemoryItem], when: datetime,
                  key: Any) -> Iterator[MemoryItem]:
    """The list as of ``when``: current memories that had begun, and ended facts still true then,
    under one order (``key``, descending)."""
    return at(heapq.merge(current, ended, key=key, reverse=True), when)


def collapse(items: list[MemoryItem]) -> list[MemoryItem]:
    """One row per lineage among current memories; an ended fact is a row of its own (it is not the
    same fact as the one that ended it, which a read as of its time does not show anyway)."""
    kept = {i.id for i in collapse_lineage(i for i in items if not is_history(i))}
    return [i for i in items if is_history(i) or i.id in kept]


def search_history(ctx: Ports, uid: str, query: str, when: datetime, limit: int,
                   devices: frozenset[str] | None = None) -> list[tuple[MemoryItem, float]]:
    """Ended facts true at ``when`` that share content words with ``query``, best overlap first."""
    terms = {w.casefold() for w in _WORD.findall(ctx.keyword_terms(query))}
    scored = []
    for item in itertools.islice(history(ctx, uid), HISTORY_SCAN):
        if not valid_at(item, when) or (devices is not None and not set(item.capture_device_ids) & devices):
            continue
        overlap = len(terms & {w.casefold() for w in _WORD.findall(item.content)})
        if overlap:
            scored.append((item, overlap / max(1, len(terms))))
    scored.sort(key=lambda s: (-s[1], s[0].id))
    return scored[:limit]


def search_as_of(current: list[tuple[MemoryItem, float]], ended: list[tuple[MemoryItem, float]],
                 when: datetime, limit: int) -> list[tuple[MemoryItem, float]]:
    """A search's results as of ``when``: its current hits that had begun by then, interleaved by
    rank with the ended facts true then (the scores are on different scales), current first."""
    begun = [(item, score) for item, score in current if valid_at(item, when)]
    merged = [s for pair in itertools.zip_longest(begun, ended) for s in pair if s is not None]
    return merged[:limit]

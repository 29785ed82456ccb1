"""Reads: lists with a stable ``(created_at, memory_id)`` cursor, one memory, its history.

The list is ordered newest-created first on keys no revision changes (``created_at`` is carried
over by every apply, ids never change), so an item edited, promoted or archived between two pages
keeps its position relative to the cursor: a walk returns every item that stayed listed from its
first page to its last exactly once. Items created during a walk sort ahead of it and are left out.
Historical rows join the same order (:mod:`core.services.legacy`); materialising one keeps its key.

A device scope (the spec's universal retrieval filter ``device_scope=current|all|explicit``) is a
query on the denormalised ``capture_device_ids``, not a filter over a full read: a scope that
matches nothing costs one empty query per read class, whatever the size of the store. Historical
rows carry no device (the spec: legacy data has ``client_device_id=null``), so a scoped read never
reads them.

Reading is pure: no read writes, embeds, promotes or graphs anything.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.domain import ids, paths
from core.domain.documents import LedgerCommit
from core.domain.records import MemoryItem
from core.domain.states import Layer, ProcessingState, Status
from core.domain.visibility import collapse_lineage, is_default_visible, readable
from core.errors import BadRequest, NotFound
from core.ports import Ports
from core.services import legacy, temporal

LAYERS = ("short_term", "long_term", "archive")
MAX_LIMIT = 500
LINEAGE_HOPS = 8  # a read by id follows a superseded item's lineage at most this far
DEVICE_CHUNK = 30  # Firestore's array_contains_any takes at most 30 values
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ListQuery:
    layer: str | None = None
    include_archive: bool = False
    limit: int = 100
    cursor: str | None = None
    device_ids: frozenset[str] | None = None  # None = all devices
    offset: int = 0
    as_of: datetime | None = None  # what was true then (:mod:`core.services.temporal`); None = now


def encode_cursor(item: MemoryItem) -> str:
    raw = json.dumps({"c": item.created_at.isoformat() if item.created_at else "", "id": item.id})
    return ids.to_token(raw.encode())


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = ids.from_token(cursor)
        data = json.loads(raw)
        created = datetime.fromisoformat(data["c"])
        if created.tzinfo is None:
            raise ValueError("naive timestamp")
        return created, str(data["id"])
    except (ValueError, KeyError, TypeError) as exc:
        raise BadRequest("cursor is not one this API issued", code="bad_cursor") from exc


def _read_classes(query: ListQuery) -> list[str]:
    if query.layer == "archive":
        return ["archive"]
    return ["default", "archive"] if query.include_archive else ["default"]


def list_memories(ctx: Ports, uid: str, query: ListQuery) -> tuple[list[MemoryItem], str | None]:
    """One page of the user's memories: the canonical store and the historical rows of the view
    (:mod:`core.services.legacy`), merged under one order. Both are
    ordered by ``(created_at, id)`` descending, keys a materialisation keeps (same id, same
    ``created_at``), so a legacy row that becomes canonical between two pages keeps its place."""
    _check(query)
    after = decode_cursor(query.cursor) if query.cursor else None
    out = _take_page(_merged(ctx, uid, query, after), query)
    items = collapse_lineage(out) if query.as_of is None else temporal.collapse(out)
    next_cursor = encode_cursor(out[-1]) if len(out) == query.limit else None
    return items, next_cursor


def _check(query: ListQuery) -> None:
    if query.layer is not None and query.layer not in LAYERS:
        raise BadRequest(f"layer must be one of {', '.join(LAYERS)}", code="validation_error")
    if not 1 <= query.limit <= MAX_LIMIT:
        raise BadRequest(f"limit must be between 1 and {MAX_LIMIT}", code="validation_error")


def _merged(ctx: Ports, uid: str, query: ListQuery, after: tuple[datetime, str] | None) -> Iterator[MemoryItem]:
    """The canonical items and the historical rows of the view, strictly after ``after``, in list
    order (with the ended facts still true then, for a read ``as_of`` a moment)."""
    # Started first: the legacy collections' first pages are read while the canonical query runs.
    # Historical rows are held to the view as canonical items are: their read class (a superseded
    # or invalidated row is in none) and, for a layer view, their layer (a retired ``short_term``
    # row is Short-term). A device-scoped read leaves them out: historical rows have no capture device.
    classes = set(_read_classes(query))
    historical = (iter(()) if query.device_ids is not None else
                  (item for item in legacy.stream(ctx, uid, after)
                   if item.read_class in classes and query.layer in (None, item.layer)))
    merged: Iterator[MemoryItem] = heapq.merge(_canonical(ctx, uid, query, after), historical, key=_order_key,
                                               reverse=True)
    if query.as_of is None:
        return merged
    # As of a moment: what had begun by then, and the ended facts (history) still true then.
    ended = (temporal.history(ctx, uid) if query.layer in (None, Layer.LONG_TERM) else iter(()))
    if after is not None:
        ended = (item for item in ended if _order_key(item) < after)
    return temporal.merge_listing(merged, ended, query.as_of, _order_key)


def _take_page(merged: Iterable[MemoryItem], query: ListQuery) -> list[MemoryItem]:
    """The page of ``merged``: in the device scope and readable, past the offset, up to the limit."""
    out: list[MemoryItem] = []
    skipped = 0
    for item in merged:
        if not in_scope(item, query.device_ids) or not readable(item):  # readable: a key's restricted scope
            continue
        if skipped < query.offset:
            skipped += 1
            continue
        out.append(item)
        if len(out) == query.limit:
            break
    return out


def _order_key(item: MemoryItem) -> tuple[datetime, str]:
    return item.created_at or EPOCH, item.id


def _canonical(ctx: Ports, uid: str, query: ListQuery, after: tuple[datetime, str] | None) -> Iterator[MemoryItem]:
    """The canonical items of the view, in list order, strictly after ``after``, read in pages."""
    page = max(query.limit, 50)
    if query.device_ids is None:
        params: dict[str, Any] = {"read_class": _read_classes(query)}
        if query.layer:
            params["layer"] = query.layer
        name = "list_by_read_class_and_layer" if query.layer else "list_by_read_class"
        yield from _paged(ctx, uid, name, params, after, page)
        return
    # Scoped: one query per read class and chunk of devices, merged under the list order (an item
    # captured on devices of two chunks comes from both; it is yielded once).
    devices = sorted(query.device_ids)
    streams = []
    for read_class in _read_classes(query):
        for start in range(0, len(devices), DEVICE_CHUNK):
            params = {"read_class": read_class, "capture_device_ids": devices[start:start + DEVICE_CHUNK]}
            if query.layer:
                params["layer"] = query.layer
            name = "list_by_device_and_layer" if query.layer else "list_by_device"
            streams.append(_paged(ctx, uid, name, params, after, page))
    last: str | None = None
    for item in heapq.merge(*streams, key=_order_key, reverse=True):
        if item.id != last:
            last = item.id
            yield item


def scoped_items(ctx: Ports, uid: str, query: ListQuery) -> Iterator[MemoryItem]:
    """The canonical items of ``query``'s view and device scope, in list order (read in pages as
    they are consumed)."""
    return _canonical(ctx, uid, query, None)


def any_in_scope(ctx: Ports, uid: str, device_ids: frozenset[str]) -> bool:
    """Whether any default-visible item was captured on one of ``device_ids`` (a key-only query of
    one row per chunk of devices): what a scoped search asks before it asks the providers."""
    devices = sorted(device_ids)
    for start in range(0, len(devices), DEVICE_CHUNK):
        params = {"read_class": "default", "capture_device_ids": devices[start:start + DEVICE_CHUNK]}
        if ctx.store.query("list_by_device", params, parent=paths.user(uid), limit=1, keys_only=True):
            return True
    return False


def _paged(ctx: Ports, uid: str, name: str, params: dict[str, Any], after: tuple[datetime, str] | None,
           page: int) -> Iterator[MemoryItem]:
    """Query ``name`` in pages of ``page`` (ordered by ``created_at`` then id, descending), from
    strictly after ``after``."""
    start_after: Any = None
    if after is not None:
        start_after = {"created_at": after[0], "__name__": after[1]}
    while True:
        rows = ctx.store.query(name, params, parent=paths.user(uid), limit=page, start_after=start_after)
        for row in rows:
            item = MemoryItem.from_store(row.data)
            start_after = {"created_at": item.created_at, "__name__": row.id}
            yield item
        if len(rows) < page:
            return


def in_scope(item: MemoryItem, device_ids: frozenset[str] | None) -> bool:
    """Whether ``item`` passes a device scope (None: every item does)."""
    return device_ids is None or bool(set(item.capture_device_ids) & device_ids)


def get_memory(ctx: Ports, uid: str, memory_id: str, *, include_hidden: bool = False) -> MemoryItem:
    """One memory, as the default read shows it (:func:`as_read`): the canonical item, else the
    historical row under the same id (a canonical tombstone suppresses it: 404). ``include_hidden``
    returns the stored item whatever its state (the history route)."""
    item = _stored(ctx, uid, memory_id)
    if item is None or (item.record_status == Status.TOMBSTONED and not include_hidden):
        raise NotFound("no such memory")
    shown = item if include_hidden else as_read(ctx, uid, item)
    if not readable(item) or not readable(shown):  # a key without the restricted scope: as if it did not exist
        raise NotFound("no such memory")
    return shown


def _stored(ctx: Ports, uid: str, memory_id: str) -> MemoryItem | None:
    stored = ctx.store.get(paths.memory_item(uid, memory_id))
    if stored is None:
        return legacy.get(ctx, uid, memory_id)
    return MemoryItem.from_store(stored)


def as_read(ctx: Ports, uid: str, item: MemoryItem) -> MemoryItem:
    """What a read by id answers for ``item``: the spec's default read, which shows active,
    processed Short-term and Long-term items and folds a lineage into its survivor. So a superseded
    item or an alias answers its lineage's survivor (another id: the client sees the fold), an
    Archive item answers itself (a read by id is the explicit opt-in Archive needs), and an item
    the default read hides says why: 404 ``memory_pending`` (awaiting its processing) or
    ``memory_blocked``; a tombstoned one is 404 like a missing one. A Long-term fact a later
    statement ended answers itself: history, its ``valid_to`` and ``superseded_by`` set."""
    seen = {item.id}
    for _ in range(LINEAGE_HOPS):
        if item.record_status == Status.TOMBSTONED:
            raise NotFound("no such memory")
        if is_default_visible(item) or (item.layer == Layer.ARCHIVE and item.record_status == Status.ACTIVE):
            return item
        if temporal.is_history(item):
            return item  # an ended fact is read by id as itself: history, with the valid time it held
        if item.record_status == Status.SUPERSEDED:
            survivor_id = item.canonical_memory_id or item.superseded_by
            survivor = _stored(ctx, uid, survivor_id) if survivor_id and survivor_id not in seen else None
            if survivor is None:
                raise NotFound("no such memory")  # a lineage without a readable survivor shows nothing
            seen.add(survivor.id)
            item = survivor
            continue
        if item.processing_state == ProcessingState.BLOCKED:
            raise NotFound(f"memory {item.id} is blocked from processing; the default read does not show it",
                           code="memory_blocked")
        raise NotFound(f"memory {item.id} is awaiting processing; the default read shows it once it is processed",
                       code="memory_pending")
    raise NotFound("no such memory")


def history(ctx: Ports, uid: str, memory_id: str) -> list[dict[str, Any]]:
    """The ledger commits that touched this memory, oldest first."""
    get_memory(ctx, uid, memory_id, include_hidden=True)
    commits = ctx.store.query("commits_by_memory", {"memory_ids": memory_id}, parent=paths.user(uid))
    out = []
    for commit in (LedgerCommit.from_store(row.data) for row in commits):
        change = commit.change_of(memory_id)
        out.append({
            "commit_id": commit.commit_id, "sequence": commit.sequence, "kind": commit.kind,
            "created_at": commit.created_at.isoformat() if commit.created_at else None,
            "revision": change.revision, "layer": change.layer,
            "status": "tombstoned" if change.status == "hidden" else change.status,
        })
    return sorted(out, key=lambda c: c["sequence"])


def hydrate(ctx: Ports, uid: str, memory_ids: Iterable[str]) -> dict[str, MemoryItem]:
    refs = [paths.memory_item(uid, mid) for mid in dict.fromkeys(memory_ids)]
    out: dict[str, MemoryItem] = {}
    for data in ctx.store.get_all(refs).values():
        if data is not None:
            item = MemoryItem.from_store(data)
            out[item.id] = item
    return out

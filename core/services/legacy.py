"""The historical adapter: rows of the legacy ``users/{uid}/memories`` and retired
``users/{uid}/short_term`` collections, read as canonical memories in memory only.

What a row states (spec: "Production systems → canonical mapping", Q2, Q4):

* A ``memories`` row is grandfathered historical Long-term (no fabricated promotion receipt): the
  only rows the ``grandfathered_long_term`` exemption covers. Its own ``memory_tier`` field, when
  set, says otherwise (``short_term``, ``archive``).
* A retired ``short_term`` row is Short-term: listed under ``layer=short_term`` and in the default
  read, reported ``expired`` once its deadline (its ``expires_at``, else ``created_at`` plus the
  Short-term TTL) has passed, and never written as Long-term: materialised, it is an ordinary
  Short-term item that only consolidation can admit.
* A row's own lifecycle fields hold: ``deleted`` hides it; ``superseded_by`` (another id) or
  ``invalid_at`` (a date) makes it superseded, so no default or layer read shows it.

Legacy rows are read-only input, never an authority (spec Q2/Q4, "Historical compatibility and
reversibility directive"):

* **Reading is pure.** :func:`core.domain.legacy_rows.adapt` turns a row into a :class:`MemoryItem`
  in memory only; no read here writes, embeds, graphs or calls a model.
* **Canonical state wins.** A ``memory_items`` document with the same id — live, edited or
  tombstoned — suppresses the legacy row before it is paged or counted.
* **Ambiguity fails closed.** The same id in both legacy collections with different text is
  :class:`LegacyCollision` (409) on a get or a mutation and left out of lists, searches and the
  export; the same text twice is one memory (the ``memories`` row wins).
* **Mutation materialises lazily.** A planner that edits or deletes a legacy row builds its
  successor with :func:`core.domain.legacy_rows.successor` from the rows it read inside the apply
  transaction (same id, same timestamps), and the plan removes the legacy documents it read, so
  the canonical write, the decision it rests on and the removal are one commit. :func:`cleanup`
  removes rows an apply did not (one that committed nothing); it is idempotent and may fail
  without effect on any read (the canonical successor already suppresses them).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

from core.domain import paths as store_paths
from core.domain.changes import Change
from core.domain.legacy_rows import COLLECTIONS, adapt, resolve, winner
from core.domain.records import MemoryItem, Sensitivity
from core.errors import LegacyCollision
from core.ports import Ports, StoredDoc, Write

log = logging.getLogger(__name__)

QUERY = {"memories": "legacy_memories_by_created", "short_term": "legacy_short_term_by_created"}
PAGE = 100
# First pages of the two collections are read while the caller runs its own query (see stream()).
# bench pools --rtt-ms 8, sequential -> pooled: list page 3 -> 1 round trips, p50 50 -> 32 ms; citing 2 -> 1.
_PREFETCH = ThreadPoolExecutor(max_workers=4, thread_name_prefix="legacy-prefetch")


def _ttl(ctx: Ports) -> int:
    return int(ctx.settings.short_term_ttl_days)


def get(ctx: Ports, uid: str, memory_id: str) -> MemoryItem | None:
    """The legacy memory ``memory_id`` (not suppressed here: the caller has checked the canonical
    store), or None."""
    found = ctx.store.get_all([store_paths.doc(uid, collection, memory_id) for collection in COLLECTIONS])
    rows = {collection: found[store_paths.doc(uid, collection, memory_id)] for collection in COLLECTIONS}
    return resolve(uid, memory_id, rows, _ttl(ctx), sensitivity=ctx.sensitivity)


def _page(ctx: Ports, uid: str, collection: str, start: Any) -> list[StoredDoc]:
    return ctx.store.query(QUERY[collection], {}, parent=store_paths.user(uid), limit=PAGE, start_after=start)


def _collection_rows(ctx: Ports, uid: str, collection: str,
                     first: Future[list[StoredDoc]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``collection``'s rows newest-created first (then id, descending), from the prefetched
    ``first`` page on."""
    rows = first.result()
    while True:
        for row in rows:
            yield row.id, row.data
        if len(rows) < PAGE:
            return
        last = rows[-1]
        rows = _page(ctx, uid, collection, {"created_at": last.data["created_at"], "__name__": last.id})


def stream(ctx: Ports, uid: str, after: tuple[datetime, str] | None = None) -> Iterator[MemoryItem]:
    """Every unsuppressed legacy memory, newest-created first by ``(created_at, id)`` — the list
    order — strictly after ``after``. Rows without a ``created_at`` are not in this order (a get by
    id still reads them); colliding and suppressed rows are left out. Bounded reads: pages of
    :data:`PAGE` per collection and one batched read per page of the canonical document and the
    other collection's row under each id.

    The first page of each collection is requested when this is called, in the background, so a
    caller that calls it before its own query (the list) pays one round trip for all of them; an
    account without legacy rows costs two empty queries that overlap the canonical one."""
    firsts = {}
    for collection in COLLECTIONS:
        start = None
        if after is not None:
            start = {"created_at": after[0], "__name__": after[1]}
        firsts[collection] = _PREFETCH.submit(_page, ctx, uid, collection, start)
    return _merged(ctx, uid, [_adapted(uid, collection, _collection_rows(ctx, uid, collection, firsts[collection]),
                                       _ttl(ctx), ctx.sensitivity)
                              for collection in COLLECTIONS])


def _merged(ctx: Ports, uid: str, sources: list[Iterator[tuple[str, MemoryItem]]]) -> Iterator[MemoryItem]:
    merged = heapq.merge(*sources, key=lambda pair: (pair[1].created_at, pair[1].id), reverse=True)
    window: list[tuple[str, MemoryItem]] = []
    for pair in merged:
        window.append(pair)
        if len(window) >= PAGE:
            yield from _checked(ctx, uid, window)
            window = []
    yield from _checked(ctx, uid, window)


def _adapted(uid: str, collection: str, rows: Iterator[tuple[str, dict[str, Any]]],
             ttl_days: int, sensitivity: Sensitivity) -> Iterator[tuple[str, MemoryItem]]:
    for memory_id, data in rows:
        item = adapt(uid, memory_id, data, collection, ttl_days, sensitivity=sensitivity)
        if item is not None and item.created_at is not None:
            yield collection, item


def _checked(ctx: Ports, uid: str, window: list[tuple[str, MemoryItem]]) -> Iterator[MemoryItem]:
    """The window's memories that are neither suppressed by a canonical document nor ambiguous. A
    row whose id also has a row in the other collection is emitted only at the position of the row
    :func:`core.domain.legacy_rows.resolve` picks, so one memory appears once."""
    if not window:
        return
    memory_ids = list(dict.fromkeys(item.id for _, item in window))
    keys = {store_paths.doc(uid, name, mid): (name, mid) for mid in memory_ids for name in (store_paths.MEMORY_ITEMS, *COLLECTIONS)}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path, data in ctx.store.get_all(list(keys)).items():
        if data is not None:
            found[keys[path]] = data
    for collection, item in window:
        if (store_paths.MEMORY_ITEMS, item.id) in found:
            continue  # canonical state (a successor, an override or a tombstone) wins
        rows = {name: found.get((name, item.id)) for name in COLLECTIONS}
        try:
            chosen = winner(uid, item.id, rows, _ttl(ctx), sensitivity=ctx.sensitivity)
        except LegacyCollision:
            log.warning("legacy memory %s of %s collides across the historical collections; withheld", item.id, uid)
            continue
        if chosen is not None and chosen[0] == collection:  # None: the row went away since its page was read
            yield chosen[1]


def every(ctx: Ports, uid: str) -> Iterator[MemoryItem]:
    """Every unsuppressed legacy memory, dated or not, by collection then document id, in pages of
    :data:`PAGE` (the export, search's bounded scan). The first page of each collection is asked
    for at once, when the first memory is asked for: an account without legacy rows pays one round
    trip, not one per collection."""
    firsts = {collection: _PREFETCH.submit(ctx.store.scan, store_paths.col(uid, collection), limit=PAGE, after=None)
              for collection in COLLECTIONS}
    for collection in COLLECTIONS:
        last = None
        rows = firsts[collection].result()
        while True:
            pairs = [(collection, item) for row in rows
                     if (item := adapt(uid, row.id, row.data, collection, _ttl(ctx), sensitivity=ctx.sensitivity)) is not None]
            yield from _checked(ctx, uid, pairs)
            if len(rows) < PAGE:
                break
            last = rows[-1].id
            rows = ctx.store.scan(store_paths.col(uid, collection), limit=PAGE, after=last)


def ids_citing(ctx: Ports, uid: str, conversation_id: str, limit: int) -> list[str]:
    """Ids of legacy rows that cite ``conversation_id`` (under either field name), bounded: one
    keys-only OR query per collection, the two at once (every capture asks, on accounts without
    legacy rows too)."""
    params = {"conversation_id": conversation_id, "memory_id": conversation_id}
    pending = [_PREFETCH.submit(ctx.store.query, f"legacy_{collection}_citing", params,
                                parent=store_paths.user(uid), limit=limit, keys_only=True)
               for collection in COLLECTIONS]
    out: dict[str, None] = {}
    for future in pending:
        out.update((row.id, None) for row in future.result())
    return list(out)[:limit]


def first_ids(ctx: Ports, uid: str, limit: int) -> list[str]:
    """Ids of up to ``limit`` legacy rows of either collection (any row: delete-all removes what is
    there, shown or not), by document id."""
    out: dict[str, None] = {}
    for collection in COLLECTIONS:
        rows = ctx.store.scan(store_paths.col(uid, collection), limit=limit, keys_only=True)
        out.update((row.id, None) for row in rows)
    return sorted(out)[:limit]


def cleanup(ctx: Ports, uid: str, memory_ids: Iterable[str]) -> bool:
    """Remove the legacy documents of memories whose canonical successor or tombstone is written.
    Idempotent; a failure is logged and reported (False) but harmless: the canonical document
    already suppresses the rows, and any later mutation, delete-all or account wipe removes them."""
    memory_ids = list(memory_ids)
    if not memory_ids:
        return True
    try:
        _delete_rows(ctx, uid, memory_ids)
    except Exception as exc:  # noqa: BLE001 - cleanup is best effort by design; the reason is logged
        log.warning("legacy cleanup of %d rows for %s failed (suppressed, retried later): %s",
                    len(memory_ids), uid, exc)
        return False
    return True


def _delete_rows(ctx: Ports, uid: str, memory_ids: list[str]) -> None:
    ctx.store.write(Change("legacy.rows_cleanup", [Write("delete", store_paths.doc(uid, collection, memory_id))
                                                   for memory_id in memory_ids for collection in COLLECTIONS]))

"""Search: providers return candidates only; every hit is hydrated from Firestore and dropped if
it is no longer visible (a delayed projection can never resurrect a deleted memory).

Every search takes the device scope (``devices``: the capture devices to keep, None for all), the
spec's universal retrieval filter: the providers filter on the ``capture_device_ids`` they hold (and
every hydrated hit is checked against the canonical item's devices), the archive is queried by
device in Firestore, and historical rows (which carry no device) are not scanned at all. A scope
no visible memory was captured on is answered from one key-only read.

What does not depend on another read runs beside it (round trips, not reads, are what a
deployment's latency is made of): the historical scan is sent when a search starts and read
after its hits are hydrated, and a hybrid search runs its keyword and vector sides at once. A
keyword or vector search is then two sequential Firestore round trips (the historical scan beside
the provider's query, then the hydration), and so is a hybrid one."""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from core.domain import paths
from core.domain.records import MemoryItem
from core.domain.visibility import collapse_lineage, is_default_visible
from core.errors import BadRequest
from core.ports import Hit, Ports
from core.services import legacy
from core.services.reads import ListQuery, any_in_scope, hydrate, in_scope, scoped_items

DEFAULT_LAYERS = ("short_term", "long_term")
_WORD = re.compile(r"\w+")
LEGACY_SCAN = 1000
# Historical scans run here beside the provider query; hybrid's two sides on the other pool (a side
# waits on its scan, so the two levels never share workers). Scans read through legacy's own pool.
_SCANS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="search-historical")
_SIDES = ThreadPoolExecutor(max_workers=8, thread_name_prefix="search-side")
T = TypeVar("T")


def _beside(pool: ThreadPoolExecutor, fn: Callable[..., T], *args: object) -> Future[T]:
    """``fn(*args)`` started on ``pool`` (in a copy of the caller's context: its log fields)."""
    import contextvars

    return pool.submit(contextvars.copy_context().run, fn, *args)


@dataclass
class Scored:
    item: MemoryItem
    score: float


def _check(query: str, limit: int) -> str:
    query = " ".join((query or "").split())
    if not query:
        raise BadRequest("q must not be empty", code="validation_error")
    if len(query) > 1000:
        raise BadRequest("q must be at most 1000 characters", code="validation_error")
    if not 1 <= limit <= 100:
        raise BadRequest("limit must be between 1 and 100", code="validation_error")
    return query


def _sorted(devices: frozenset[str] | None) -> list[str] | None:
    return sorted(devices) if devices is not None else None


def _hydrated(ctx: Ports, uid: str, hits: list[Hit], limit: int, devices: frozenset[str] | None) -> list[Scored]:
    items = hydrate(ctx, uid, [h.memory_id for h in hits])
    out: list[Scored] = []
    for hit in hits:
        item = items.get(hit.memory_id)
        if item is None or not is_default_visible(item) or item.restricted:
            continue  # stale projection: canonical state wins
        if not in_scope(item, devices):
            continue
        out.append(Scored(item, hit.score))
    keep = {i.id for i in collapse_lineage(s.item for s in out)}
    return [s for s in out if s.item.id in keep][:limit]


# The owner's display name (``users/{uid}`` profile field ``display_name`` or ``displayName``, as
# an app keeps its users' profiles), read once per user and process for NAME_TTL_S seconds.
PROFILE_NAME_FIELDS = ("display_name", "displayName")
NAME_TTL_S = 300.0
_NAMES: dict[str, tuple[float, str | None]] = {}
_NAMES_LOCK = threading.Lock()


def owner_name(ctx: Ports, uid: str) -> str | None:
    """The owner's display name from their profile, None when it has none (cached briefly)."""
    now = time.monotonic()
    with _NAMES_LOCK:
        cached = _NAMES.get(uid)
    if cached is not None and cached[0] > now:
        return cached[1]
    profile = ctx.store.get(paths.user(uid)) or {}
    name = next((str(profile[f]).strip() for f in PROFILE_NAME_FIELDS
                 if isinstance(profile.get(f), str) and str(profile[f]).strip()), None)
    with _NAMES_LOCK:
        _NAMES[uid] = (now + NAME_TTL_S, name)
    return name


def _scope_is_empty(ctx: Ports, uid: str, devices: frozenset[str] | None) -> bool:
    """A device scope no visible memory was captured on: the search answers nothing, reading nothing
    else (no candidates hydrated, no historical scan, no embedding)."""
    return devices is not None and not any_in_scope(ctx, uid, devices)


def keyword(ctx: Ports, uid: str, query: str, limit: int = 10, devices: frozenset[str] | None = None) -> list[Scored]:
    query = _check(query, limit)
    if _scope_is_empty(ctx, uid, devices):
        return []
    scan = _beside(_SCANS, _historical, ctx, uid, query, limit, devices)
    terms = ctx.keyword_terms(ctx.owner_voice(query, owner_name(ctx, uid)))
    hits = ctx.keyword_index.search(uid, terms, layers=DEFAULT_LAYERS, limit=limit * 2,
                                    devices=_sorted(devices))
    return _with_legacy(_hydrated(ctx, uid, hits, limit, devices), scan.result(), limit)


def vector(ctx: Ports, uid: str, query: str, limit: int = 10, devices: frozenset[str] | None = None) -> list[Scored]:
    query = _check(query, limit)
    if _scope_is_empty(ctx, uid, devices):
        return []
    scan = _beside(_SCANS, _historical, ctx, uid, query, limit, devices)
    [embedding] = ctx.embedder.embed([ctx.owner_voice(query, owner_name(ctx, uid))])
    hits = ctx.vector_index.search(uid, embedding, layers=DEFAULT_LAYERS, limit=limit * 2, devices=_sorted(devices))
    return _with_legacy(_hydrated(ctx, uid, hits, limit, devices), scan.result(), limit)


def _historical(ctx: Ports, uid: str, query: str, limit: int, devices: frozenset[str] | None) -> list[Scored]:
    """Historical rows carry no capture device: a device-scoped search has none to scan."""
    return historical(ctx, uid, query, limit) if devices is None else []


def historical(ctx: Ports, uid: str, query: str, limit: int, scan: int = LEGACY_SCAN) -> list[Scored]:
    """Historical rows matching the query's content words, best overlap first. Legacy rows are in
    no index (reading never embeds or projects them), so they are ranked by term overlap over a
    bounded scan of ``scan`` rows, like the archive; a materialised row is indexed as usual."""
    terms = {w.casefold() for w in _WORD.findall(ctx.keyword_terms(query))}
    scored = []
    for item in itertools.islice(legacy.every(ctx, uid), scan):
        if item.restricted or item.read_class != "default":  # as the indexes: default-visible rows only
            continue
        overlap = len(terms & {w.casefold() for w in _WORD.findall(item.content)})
        if overlap:
            scored.append(Scored(item, overlap / max(1, len(terms))))
    scored.sort(key=lambda s: (-s.score, s.item.id))
    return scored[:limit]


def _with_legacy(canonical: list[Scored], historical: list[Scored], limit: int) -> list[Scored]:
    """Interleave by rank (the two scores are on different scales): canonical first at each rank."""
    merged = [s for pair in itertools.zip_longest(canonical, historical) for s in pair if s is not None]
    return merged[:limit]


def hybrid(ctx: Ports, uid: str, query: str, limit: int = 10, k: int = 60,
           keyword_weight: float = 1.0, devices: frozenset[str] | None = None) -> list[Scored]:
    """Reciprocal-rank fusion of keyword and vector results, a keyword rank counting
    ``keyword_weight`` of a vector rank (equal weights, tuned on the LoCoMo development split:
    docs/benchmarks.md)."""
    fused: dict[str, float] = {}
    items: dict[str, MemoryItem] = {}
    keyword_side = _beside(_SIDES, keyword, ctx, uid, query, limit, devices)
    vector_side = vector(ctx, uid, query, limit, devices)
    for weight, results in ((keyword_weight, keyword_side.result()), (1.0, vector_side)):
        for rank, scored in enumerate(results):
            fused[scored.item.id] = fused.get(scored.item.id, 0.0) + weight / (k + rank + 1)
            items[scored.item.id] = scored.item
    ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [Scored(items[mid], score) for mid, score in ranked]


def archive(ctx: Ports, uid: str, query: str, limit: int = 10, scan: int = 1000,
            devices: frozenset[str] | None = None) -> list[Scored]:
    """Archive is never projected to providers (its transition deletes projections), so archive
    search ranks the user's archive rows from Firestore by term overlap, bounded by ``scan`` (a
    device-scoped search reads only the archive rows of those devices)."""
    query = _check(query, limit)
    terms = {w.casefold() for w in _WORD.findall(query)}
    items: Iterable[MemoryItem]
    if devices is None:
        rows = ctx.store.query("items_by_read_class", {"read_class": ["archive"]}, parent=paths.user(uid), limit=scan)
        # Historical rows whose own ``memory_tier`` archived them are Archive too (bounded scan, as above).
        archived = (item for item in itertools.islice(legacy.every(ctx, uid), LEGACY_SCAN)
                    if item.read_class == "archive")
        items = itertools.chain((MemoryItem.from_store(row.data) for row in rows), archived)
    else:  # historical rows have no capture device: a scoped search never reads them
        items = itertools.islice(scoped_items(ctx, uid, ListQuery(layer="archive", limit=scan, device_ids=devices)),
                                 scan)
    scored = []
    for item in items:
        if item.restricted:
            continue
        words = {w.casefold() for w in _WORD.findall(item.content)}
        overlap = len(terms & words)
        if overlap:
            scored.append(Scored(item, overlap / max(1, len(terms))))
    scored.sort(key=lambda s: (-s.score, s.item.id))
    return scored[:limit]

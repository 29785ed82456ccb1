"""Per-user leases on the emulator, through the store's compare-and-swap (``Store.swap``, deciding
with :mod:`core.domain.outbox`): one holder at a time, notes for the holder are never lost, an
expired lease can be taken over; all without transactions (conditional writes)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.bootstrap import Context
from core.domain import outbox
from core.ports import StoredDoc

pytestmark = pytest.mark.integration
TTL = timedelta(seconds=60)


def _path() -> str:
    return f"users/lease-{uuid.uuid4().hex[:10]}/memory_state/test_lease"


def _now() -> datetime:
    return datetime.now(UTC)


def _take(ctx: Context, path: str, holder: str, *, clock: Callable[[], datetime] = _now, mark_dirty: bool = False,
          seen: StoredDoc | None = None) -> bool:
    return ctx.store.swap(path, lambda d: outbox.take(d, holder, clock(), TTL, mark_dirty=mark_dirty),
                          seen=seen, exhausted=False)


def _release(ctx: Context, path: str, holder: str, *, honour_dirty: bool = False,
             seen: StoredDoc | None = None) -> bool:
    return ctx.store.swap(path, lambda d: outbox.release(d, holder, _now(), TTL, honour_dirty=honour_dirty),
                          seen=seen, exhausted=honour_dirty)


def _data(ctx: Context, path: str) -> dict[str, Any]:
    return ctx.store.get(path) or {}


def test_concurrent_takers_get_one_winner(stack: dict[str, Any]) -> None:
    ctx = Context()
    path = _path()
    with ThreadPoolExecutor(max_workers=4) as pool:
        won = list(pool.map(lambda h: _take(ctx, path, h), [f"h{i}" for i in range(4)]))
    assert won.count(True) == 1
    holder = f"h{won.index(True)}"
    assert _data(ctx, path)["holder"] == holder


def test_a_note_left_for_the_holder_sends_it_round_again(stack: dict[str, Any]) -> None:
    ctx = Context()
    path = _path()
    assert _take(ctx, path, "a")
    assert not _take(ctx, path, "b", mark_dirty=True)
    assert _data(ctx, path)["dirty"] is True
    assert _release(ctx, path, "a", honour_dirty=True) is True  # go round once more
    assert _data(ctx, path)["holder"] == "a" and _data(ctx, path)["dirty"] is False
    assert _release(ctx, path, "a", honour_dirty=True) is False
    assert _data(ctx, path)["holder"] is None
    assert _release(ctx, path, "a") is False  # not the holder any more


def test_an_expired_lease_is_taken_over(stack: dict[str, Any]) -> None:
    ctx = Context()
    path = _path()
    assert _take(ctx, path, "a", clock=lambda: _now() - timedelta(seconds=120))
    assert _take(ctx, path, "b")
    data = _data(ctx, path)
    assert data["holder"] == "b" and data["epoch"] == 2
    assert _release(ctx, path, "a") is False  # the old holder cannot release it


def _seen(ctx: Context, path: str) -> StoredDoc:
    """The lease as a caller's own lookup read it (``Store.get_all_versioned``)."""
    doc = ctx.store.get_all_versioned([path])[path]
    assert doc is not None and doc.version is not None
    return doc


def test_a_lease_decided_on_an_earlier_read_is_never_taken_twice(stack: dict[str, Any]) -> None:
    """A taker that read the lease before another took it decides on that stale read: its write is
    conditional on it (its update time, or its absence), so it fails, and the re-read sees the live
    holder."""
    ctx = Context()
    path = _path()
    assert ctx.store.get_all_versioned([path])[path] is None
    assert _take(ctx, path, "first")
    assert not _take(ctx, path, "second", seen=StoredDoc.absent(path))  # its create fails, the re-read loses
    assert _data(ctx, path)["holder"] == "first"
    held = _seen(ctx, path)
    assert held.data["holder"] == "first"
    assert not _release(ctx, path, "first")
    free = _seen(ctx, path)
    assert free.data["holder"] is None
    assert _take(ctx, path, "third")
    assert not _take(ctx, path, "second", seen=free)  # decided on the free lease: the write fails, the re-read loses
    assert _data(ctx, path)["holder"] == "third"
    assert not _release(ctx, path, "first", seen=held)  # not its lease any more
    assert _data(ctx, path)["holder"] == "third"


def test_a_release_decided_on_a_stale_read_still_releases(stack: dict[str, Any]) -> None:
    ctx = Context()
    path = _path()
    assert _take(ctx, path, "h")
    before_note = _seen(ctx, path)
    assert not _take(ctx, path, "other", mark_dirty=True)  # a note moves the lease
    assert not _release(ctx, path, "h", seen=before_note)
    assert _data(ctx, path)["holder"] is None

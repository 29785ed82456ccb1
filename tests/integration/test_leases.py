"""Per-user leases on the emulator: one holder at a time, notes for the holder are never lost,
an expired lease can be taken over; all without transactions (conditional writes)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.adapters.firestore import leases
from core.bootstrap import Context

pytestmark = pytest.mark.integration
TTL = timedelta(seconds=60)


def _ref(ctx: Context) -> Any:
    return ctx.paths.doc(f"lease-{uuid.uuid4().hex[:10]}", "memory_state", "test_lease")


def _now() -> datetime:
    return datetime.now(UTC)


def test_concurrent_takers_get_one_winner(stack: dict[str, Any]) -> None:
    ctx = Context()
    ref = _ref(ctx)
    with ThreadPoolExecutor(max_workers=4) as pool:
        won = list(pool.map(lambda h: leases.take(ctx.client, ref, h, _now, TTL), [f"h{i}" for i in range(4)]))
    assert won.count(True) == 1
    holder = f"h{won.index(True)}"
    assert ref.get().to_dict()["holder"] == holder


def test_a_note_left_for_the_holder_sends_it_round_again(stack: dict[str, Any]) -> None:
    ctx = Context()
    ref = _ref(ctx)
    assert leases.take(ctx.client, ref, "a", _now, TTL)
    assert not leases.take(ctx.client, ref, "b", _now, TTL, mark_dirty=True)
    assert ref.get().to_dict()["dirty"] is True
    assert leases.release(ctx.client, ref, "a", _now, TTL, honour_dirty=True) is True  # go round once more
    assert ref.get().to_dict()["holder"] == "a" and ref.get().to_dict()["dirty"] is False
    assert leases.release(ctx.client, ref, "a", _now, TTL, honour_dirty=True) is False
    assert ref.get().to_dict()["holder"] is None
    assert leases.release(ctx.client, ref, "a", _now, TTL) is False  # not the holder any more


def test_an_expired_lease_is_taken_over(stack: dict[str, Any]) -> None:
    ctx = Context()
    ref = _ref(ctx)
    assert leases.take(ctx.client, ref, "a", lambda: _now() - timedelta(seconds=120), TTL)
    assert leases.take(ctx.client, ref, "b", _now, TTL)
    data = ref.get().to_dict()
    assert data["holder"] == "b" and data["epoch"] == 2
    assert leases.release(ctx.client, ref, "a", _now, TTL) is False  # the old holder cannot release it


def _seen(ctx: Context, ref: Any) -> leases.Seen | None:
    """The lease as a caller's own lookup read it (``Store.get_all_versioned``)."""
    return leases.seen(ctx.store.get_all_versioned([ref.path]), ref.path)


def test_a_lease_decided_on_an_earlier_read_is_never_taken_twice(stack: dict[str, Any]) -> None:
    """A taker that read the lease before another took it decides on that stale read: its write is
    conditional on it, so it fails, and the re-read sees the live holder."""
    ctx = Context()
    ref = _ref(ctx)
    stale = _seen(ctx, ref)
    assert stale is not None and not stale.exists
    assert leases.take(ctx.client, ref, "first", _now, TTL)
    assert not leases.take(ctx.client, ref, "second", _now, TTL, first=stale)
    assert ref.get().to_dict()["holder"] == "first"

    # Read while "first" holds it, then released and taken by a third: the stale read still loses.
    held = _seen(ctx, ref)
    assert held is not None and held.to_dict()["holder"] == "first"
    assert not leases.release(ctx.client, ref, "first", _now, TTL)
    assert leases.take(ctx.client, ref, "third", _now, TTL)
    assert not leases.release(ctx.client, ref, "first", _now, TTL, first=held)  # not its lease any more
    assert ref.get().to_dict()["holder"] == "third"


def test_a_release_decided_on_a_stale_read_still_releases(stack: dict[str, Any]) -> None:
    ctx = Context()
    ref = _ref(ctx)
    assert leases.take(ctx.client, ref, "h", _now, TTL)
    before_note = _seen(ctx, ref)
    assert not leases.take(ctx.client, ref, "other", _now, TTL, mark_dirty=True)  # a note moves the lease
    assert not leases.release(ctx.client, ref, "h", _now, TTL, first=before_note)
    assert ref.get().to_dict()["holder"] is None

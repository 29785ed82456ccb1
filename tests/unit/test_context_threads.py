"""A function instance serves requests on several threads: at a cold start they must share one
Context, one store and so one set of per-user apply locks (two engines used to let two captures of
one user run their transactions side by side, deadlock on its control doc and stall for seconds)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core import bootstrap
from core.bootstrap import Context


def test_concurrent_first_uses_build_one_part() -> None:
    built: list[int] = []
    gate = threading.Barrier(8)

    def slow_factory() -> Any:
        built.append(1)
        time.sleep(0.05)  # a cold import: every thread arrives before the first build ends
        return object()

    ctx = Context(client=object())

    def use(_: int) -> Any:
        gate.wait()
        return ctx._get("part", slow_factory)

    with ThreadPoolExecutor(max_workers=8) as pool:
        parts = list(pool.map(use, range(8)))
    assert len(built) == 1 and len({id(p) for p in parts}) == 1


def test_stores_of_one_process_share_their_user_locks() -> None:
    first, second = Context(client=object()), Context(client=object())
    assert first.store is not second.store
    assert first.store._user_locks is second.store._user_locks  # type: ignore[attr-defined]


def test_default_context_is_one_per_process() -> None:
    bootstrap._default_context.cache_clear()
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            contexts = list(pool.map(lambda _: bootstrap.default_context(), range(32)))
        assert len({id(c) for c in contexts}) == 1
    finally:
        bootstrap._default_context.cache_clear()

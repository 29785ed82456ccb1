"""What every benchmark shares: a stack to run on, contexts (plain and counted), sample
conversations, polling.

:func:`stack_info` uses the stack whose environment is exported (``FIRESTORE_EMULATOR_HOST`` set —
the CLI exports a running stack's env first); otherwise :func:`local_stack` starts a private stack in
a temporary directory and stops it afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from core.domain import paths
from core.ports import Publisher
from strata_dev.samples import load_samples

REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def local_stack(latency: bool = False) -> Iterator[dict[str, Any]]:
    """The running stack's description; starts (and later stops) a private one if none is exported.
    ``latency``: the stack runs the delay proxy in front of Firestore, Typesense and the vector index
    (:func:`rtt`), so a private stack is started with it and an exported one must have it."""
    from strata_dev.localstack import stack

    if os.environ.get("FIRESTORE_EMULATOR_HOST"):
        info = stack.status().get("info")
        if not info or info.get("firestore_emulator_host") != os.environ["FIRESTORE_EMULATOR_HOST"]:
            raise SystemExit("FIRESTORE_EMULATOR_HOST is set but no matching stack state was found: set "
                             "STRATA_STATE_DIR to that stack's state dir (or unset the variable)")
        if latency and "latency" not in info:
            raise SystemExit("--rtt-ms needs the latency proxy: unset FIRESTORE_EMULATOR_HOST so the bench "
                             "starts a private stack with it")
        yield info
        return
    state_dir = Path(tempfile.mkdtemp(prefix="strata-bench-"))
    saved = dict(os.environ)
    # One math thread per process (a function instance's share of a small machine): several
    # processes each running a multi-threaded MiniLM on two cores spend their time thrashing.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        info = stack.up(state_dir, latency=latency)
        os.environ.update(stack.stack_env(info))
        yield info
    finally:
        os.environ.clear()
        os.environ.update(saved)
        stack.down(state_dir)
        shutil.rmtree(state_dir, ignore_errors=True)


def rtt_levels(args: Any) -> list[float]:
    """The per-request delays a benchmark measures at: 0 alone, or 0 and ``--rtt-ms``."""
    rtt = getattr(args, "rtt_ms", None)
    return [0.0] if not rtt else [0.0, float(rtt)]


@contextlib.contextmanager
def rtt(info: dict[str, Any], ms: float) -> Iterator[None]:
    """Every request to Firestore, Typesense and the vector index delayed by ``ms`` inside the block
    (the stack's latency proxy; a stack without it is only allowed ``ms == 0``)."""
    from strata_dev.localstack import stack

    if "latency" not in info:
        if ms:
            raise SystemExit("this stack runs without the latency proxy")
        yield
        return
    stack.set_rtt_ms(info, ms)
    try:
        yield
    finally:
        stack.set_rtt_ms(info, 0)


class NullPublisher(Publisher):
    """Drops projection nudges: the benchmark drains (or leaves pending) the outbox itself."""

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        return None


class StampingPublisher(Publisher):
    """Forwards nudges to the real publisher and remembers when each user's commit was announced."""

    def __init__(self, inner: Publisher) -> None:
        self.inner = inner
        self.stamps: list[tuple[str, int, float]] = []
        self._lock = threading.Lock()

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        with self._lock:
            self.stamps.append((str(data.get("uid")), int(data.get("sequence") or 0), time.monotonic()))
        self.inner.publish(topic, data)


def context(**overrides: Any) -> Any:
    from core.bootstrap import Context

    return Context(**overrides)


def counted_context(**overrides: Any) -> Any:
    """A Context on a :func:`counting_client` (its ``client.counts`` tallies reads and writes)."""
    from core import config
    from strata_dev.bench.counting import counting_client

    settings = config.load()
    return context(client=counting_client(settings.project_id), **overrides)


def new_uid(label: str) -> str:
    return f"bench-{label}-{uuid.uuid4().hex[:10]}"


def sample_conversations() -> list[dict[str, Any]]:
    """The repository's sample conversations (ids removed), the same ones ``make demo`` feeds."""
    try:
        docs = list(load_samples().values())
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None
    for doc in docs:
        doc.pop("id", None)
    return docs


def conversations(count: int, tag: str) -> list[tuple[str, dict[str, Any]]]:
    """``count`` conversations cycling through the samples, each with its own id and segment ids."""
    samples = sample_conversations()
    out = []
    for index in range(count):
        doc = json.loads(json.dumps(samples[index % len(samples)]))
        conversation_id = f"{tag}-c{index:04d}"
        for position, segment in enumerate(doc.get("transcript_segments") or []):
            segment["id"] = f"{conversation_id}-s{position}"
        out.append((conversation_id, doc))
    return out


def capture_in_process(ctx: Any, uid: str, convs: list[tuple[str, dict[str, Any]]]) -> int:
    """Setup helper (not the measured path): capture conversations directly; returns memories created."""
    from core.services import capture

    return sum(capture.capture_conversation(ctx, uid, cid, doc).created for cid, doc in convs)


def wait_for(check: Callable[[], Any], timeout_s: float, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout_s:.0f} s")
        time.sleep(every)


def count_docs(ctx: Any, uid: str, collection: str) -> int:
    result = ctx.paths.col(uid, collection).count().get()
    return int(result[0][0].value)


def drain(ctx: Any, uid: str, rounds: int = 50) -> Any:
    """Drain a user's outbox in process until nothing is due (a live lease elsewhere: wait)."""
    from core.services import projection

    total = projection.DrainReport()
    for _ in range(rounds):
        report = projection.drain_user(ctx, uid)
        total.add(report)
        if count_docs(ctx, uid, paths.OUTBOX) == 0:
            break
        if report.skipped:
            time.sleep(0.2)
    return total


def write_item_rows(ctx: Any, uid: str, rows: list[dict[str, Any]], batch_size: int = 400) -> None:
    """Seed ``memory_items`` documents straight with batched writes, four batches at a time (the
    benchmarks' setup for sizes the capture path would take too long to build)."""
    from concurrent.futures import ThreadPoolExecutor

    from core.adapters.firestore.wire import set_document

    def write(chunk: list[dict[str, Any]]) -> None:
        batch = ctx.client.batch()
        for row in chunk:
            set_document(batch, ctx.paths.doc(uid, paths.MEMORY_ITEMS, row["id"]), row)
        batch.commit()

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, [rows[i:i + batch_size] for i in range(0, len(rows), batch_size)]))

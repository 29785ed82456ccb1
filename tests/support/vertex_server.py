"""A real local HTTP server speaking Vertex AI's text-embeddings ``:predict`` REST protocol.

``POST /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:predict`` with
``{"instances": [{"content": ...}], "parameters": {"outputDimensionality": n}}`` answers
``{"predictions": [{"embeddings": {"values": [...], "statistics": {...}}}]}``: deterministic unit
vectors of ``outputDimensionality`` floats (``native_dim`` without it), as the service does. A
request without ``Authorization: Bearer`` is refused 401 as the service refuses it. Scripted
:class:`~tests.support.openai_server.Reply` objects are answered first, in order (``google_error``
builds the service's error body: 429 ``RESOURCE_EXHAUSTED``, 503 ``UNAVAILABLE``, ...). Every request
is recorded in ``server.requests``.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from tests.support.json_server import Reply, ScriptedJSONServer
from tests.support.openai_server import deterministic_embedding

PREDICT = re.compile(r"^/v1/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:]+):predict$")
STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def google_error(status: int, message: str = "scripted error") -> Reply:
    return Reply(status=status, body={"error": {"code": status, "message": message,
                                                "status": STATUS_NAMES.get(status, "UNKNOWN")}})


def predictions(vectors: list[list[float]]) -> Reply:
    return Reply(body={"predictions": [{"embeddings": {"values": v, "statistics": {"token_count": 3,
                                                                                    "truncated": False}}}
                                       for v in vectors]})


class VertexProtocolServer(ScriptedJSONServer):
    name = "vertex-protocol"

    def __init__(self, native_dim: int = 768) -> None:
        self.native_dim = native_dim
        self._script: deque[Reply] = deque()
        super().__init__()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def answer(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if not PREDICT.match(path):
            return google_error(404, f"unknown path {path}")
        if not headers.get("Authorization", "").removeprefix("Bearer ").strip():
            return google_error(401, "Request is missing required authentication credential.")
        try:
            texts = [str(instance["content"]) for instance in body["instances"]]
        except (KeyError, TypeError):
            return google_error(400, "instances[].content is required")
        dim = (body.get("parameters") or {}).get("outputDimensionality") or self.native_dim
        return predictions([deterministic_embedding(t, int(dim)) for t in texts])


__all__ = ["VertexProtocolServer", "google_error", "predictions"]

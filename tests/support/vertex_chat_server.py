"""A real local HTTP server speaking Vertex AI's OpenAI-compatible chat-completions endpoint.

``POST /v1/projects/{project}/locations/{location}/endpoints/openapi/chat/completions`` with an
``Authorization: Bearer <access token>`` header. The token must be one of ``accepted`` (a callable:
for instance the tokens a :class:`~tests.support.metadata_server.MetadataServer` issued), else the
answer is Vertex's 401 ``UNAUTHENTICATED``. Scripted :class:`~tests.support.json_server.Reply`
objects are answered first, in order; with none scripted the answer is ``responder(body)`` when one
is set, else 500 ``INTERNAL``. Every request is recorded in ``requests``.

The error bodies are the ones the service sends. Authentication and IAM are refused by Google's
front end with the standard Google error object (``{"error": {code, message, status, details}}``,
an ``ErrorInfo`` naming the reason); errors of the model backend — 429 ``RESOURCE_EXHAUSTED``
(quota, or shared capacity exhausted), 503 ``UNAVAILABLE`` — come from the OpenAI-compatible layer
as that object wrapped in a one-element JSON list, which is what OpenAI clients report as
``Error code: 429 - [{'error': {'code': 429, 'message': 'Resource exhausted. ...', 'status':
'RESOURCE_EXHAUSTED'}}]``. A success is an OpenAI chat completion as Vertex writes it (no
``refusal`` field, ``system_fingerprint`` empty, ``usage`` with the token counts).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Collection
from typing import Any

from tests.support.json_server import RecordedRequest, Reply, ScriptedJSONServer

CHAT = re.compile(r"^/v1/projects/([^/]+)/locations/([^/]+)/endpoints/openapi/chat/completions$")
QUOTA_MESSAGE = ("Resource exhausted. Please try again later. Please refer to "
                 "https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.")


def unauthenticated(reason: str = "ACCESS_TOKEN_TYPE_UNSUPPORTED") -> Reply:
    """401 as Google's front end answers a missing, expired or foreign token."""
    return Reply(status=401, body={"error": {
        "code": 401, "status": "UNAUTHENTICATED",
        "message": "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
                   "or other valid authentication credential. See "
                   "https://developers.google.com/identity/sign-in/web/devconsole-project.",
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                     "domain": "googleapis.com",
                     "metadata": {"service": "aiplatform.googleapis.com",
                                  "method": "google.cloud.aiplatform.v1.PredictionService.ChatCompletions"}}]}})


def permission_denied(project: str, location: str) -> Reply:
    """403 as IAM answers a service account without ``aiplatform.endpoints.predict``."""
    resource = f"projects/{project}/locations/{location}/endpoints/openapi"
    return Reply(status=403, body={"error": {
        "code": 403, "status": "PERMISSION_DENIED",
        "message": f"Permission 'aiplatform.endpoints.predict' denied on resource "
                   f"'//aiplatform.googleapis.com/{resource}' (or it may not exist).",
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "IAM_PERMISSION_DENIED",
                     "domain": "aiplatform.googleapis.com",
                     "metadata": {"permission": "aiplatform.endpoints.predict", "resource": resource}}]}})


def resource_exhausted() -> Reply:
    return Reply(status=429, body=[{"error": {"code": 429, "message": QUOTA_MESSAGE, "status": "RESOURCE_EXHAUSTED"}}])


def unavailable() -> Reply:
    return Reply(status=503, body=[{"error": {"code": 503, "message": "The service is currently unavailable.",
                                              "status": "UNAVAILABLE"}}])


def completion(content: Any, *, model: str = "google/gemini-2.5-flash", prompt_tokens: int = 120,
               completion_tokens: int = 40, finish_reason: str = "stop") -> Reply:
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(body={
        "choices": [{"finish_reason": finish_reason, "index": 0, "logprobs": None,
                     "message": {"content": text, "role": "assistant"}}],
        "created": 1764800000, "id": "vertex-local", "model": model, "object": "chat.completion",
        "system_fingerprint": "",
        "usage": {"completion_tokens": completion_tokens, "prompt_tokens": prompt_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


class VertexChatServer(ScriptedJSONServer):
    name = "vertex-openai"

    def __init__(self, *, project: str = "strata-test", location: str = "us-central1",
                 accepted: Callable[[], Collection[str]] = lambda: ()) -> None:
        self.project = project
        self.location = location
        self.accepted = accepted
        self.responder: Callable[[Any], Reply] | None = None
        self._script: deque[Reply] = deque()
        super().__init__()

    @property
    def base_url(self) -> str:
        """What Terraform derives for ``llm_base_url`` (with this server's scheme and host)."""
        return (f"http://127.0.0.1:{self.port}/v1/projects/{self.project}/locations/{self.location}"
                f"/endpoints/openapi")

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if CHAT.match(r.path)]

    def answer(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        match = CHAT.match(path)
        if not match:
            return Reply(status=404, body={"error": {"code": 404, "message": f"unknown path {path}",
                                                     "status": "NOT_FOUND"}})
        token = headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not token:
            return unauthenticated("CREDENTIALS_MISSING")
        if token not in self.accepted():
            return unauthenticated()
        with self._lock:
            if self._script:
                return self._script.popleft()
        responder = self.responder
        if responder is not None:
            return responder(body)
        return Reply(status=500, body=[{"error": {"code": 500, "message": "nothing scripted", "status": "INTERNAL"}}])


__all__ = ["VertexChatServer", "completion", "permission_denied", "resource_exhausted", "unauthenticated",
           "unavailable"]

"""``GET /v1/conversations/{conversation_id}``: the capture status of one of the caller's
conversations (state, extractor, memory count, last error, timestamps); see
:mod:`core.services.capture_status`. Kept apart from :mod:`core.api.routes` as a self-contained
module, like the webhook routes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from core.api.declare import Request, Response, route
from core.services import capture_status


class ExtractorUsed(BaseModel):
    id: str = Field(description="rules, or openai (the OpenAI-compatible model)")
    version: str


class CaptureStatus(BaseModel):
    conversation_id: str
    state: Literal["pending", "captured", "failed", "fell_back"] = Field(
        description="capture of the conversation's current revision: pending (not yet, or retrying), captured, "
                    "failed (recorded; earlier memories kept), fell_back (the model failed; the rule extractor "
                    "captured it)")
    conversation_status: str = Field(description="the conversation document's own status (completed, ...)")
    revision: str = Field(description="the revision (segments, integration text, reprocess token) the state is of")
    extractor: ExtractorUsed | None = Field(description="the extractor whose memories this revision holds; "
                                                        "null while pending")
    memory_count: int = Field(ge=0, description="memories this conversation currently supports")
    last_error_code: str | None = Field(description="why the model's last attempt failed, why it fell back, or "
                                                    "why the capture failed (e.g. llm_malformed_reply)")
    attempts: int = Field(ge=0, description="model calls made for this revision")
    max_attempts: int = Field(ge=1, description="the bound on model calls per revision")
    created_at: str | None = Field(description="ISO 8601 timestamps, null when unknown")
    captured_at: str | None
    first_attempt_at: str | None
    last_attempt_at: str | None
    last_error_at: str | None


@route("GET", "/v1/conversations/{conversation_id}", "Capture status of a conversation: state, extractor, "
       "memory count, last error", response=CaptureStatus, operation_id="getConversation")
def v1_conversation_status(req: Request) -> Response:
    return 200, capture_status.conversation_status(req.ctx, req.uid, req.params["conversation_id"])

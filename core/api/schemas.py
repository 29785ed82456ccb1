"""Request bodies (strict: unknown fields and wrong types are 400) and response shapes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_CONTENT = 8_000


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _content(value: str) -> str:
    if not value.strip():
        raise ValueError("content must not be empty")
    if len(value) > MAX_CONTENT:
        raise ValueError(f"content must be at most {MAX_CONTENT} characters")
    return value


class MemoryCreate(Strict):
    content: str = Field(description="The fact, in the user's words.")
    category: str | None = Field(default=None, max_length=64)
    visibility: Literal["public", "private"] = "private"

    _check = field_validator("content")(_content)


class MemoryBatch(Strict):
    memories: list[MemoryCreate] = Field(min_length=1, max_length=100)


class ReviewResolve(Strict):
    decision: Literal["accept", "reject", "correct"]
    correction: str | None = None


class TranscriptSegment(Strict):
    id: str = Field(min_length=1, max_length=200)
    text: str = Field(max_length=20_000)
    speaker: str = "SPEAKER_00"
    speaker_id: int = 0
    is_user: bool = False
    start: float = 0.0
    end: float = 0.0


class ExternalData(Strict):
    text: str = Field(max_length=200_000)
    text_source: str = "other"


class Structured(BaseModel):
    model_config = ConfigDict(extra="allow")
    title: str = ""
    overview: str = ""
    action_items: list[dict] = Field(default_factory=list)
    events: list[dict] = Field(default_factory=list)
    category: str = "other"


class ConversationCreate(Strict):
    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_\-]{1,128}$")
    status: Literal["completed"] = "completed"
    transcript_segments: list[TranscriptSegment] = Field(default_factory=list, max_length=5_000)
    structured: Structured | None = None
    source: str = "api"
    language: str = "en"
    discarded: bool = False
    client_device_id: str | None = Field(default=None, pattern=r"^[a-z]+_[0-9a-f]{8}$")
    client_platform: str | None = None
    external_data: ExternalData | None = None
    started_at: str | None = None
    finished_at: str | None = None


class Evidence(BaseModel):
    evidence_id: str
    source_type: str
    source_id: str
    quote_refs: list[dict]
    client_device_id: str | None


class Memory(BaseModel):
    """What every memory read returns."""

    id: str
    content: str
    layer: Literal["short_term", "long_term", "archive"]
    category: str
    visibility: str
    created_at: str | None
    updated_at: str | None
    conversation_id: str | None
    source_ids: list[str]
    evidence: list[Evidence]
    canonical_memory_id: str | None
    expires_at: str | None
    expired: bool
    reviewed: bool
    user_review: bool | None
    manually_added: bool
    edited: bool
    capture_device_ids: list[str]
    subject_attribution: str
    restricted: bool


class MemoryList(BaseModel):
    memories: list[Memory]
    next_cursor: str | None = None


class ErrorBody(BaseModel):
    code: str
    message: str


class Error(BaseModel):
    error: ErrorBody

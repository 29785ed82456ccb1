"""Request bodies (strict: unknown fields and wrong types are 400) and response shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

MAX_SECONDS = 1_000_000_000.0  # a segment offset: ~31 years of audio is plenty


class Schema(BaseModel):
    """Every API shape builds its validator and serializer on first use, not at import: a function
    instance pays only for the shapes its requests touch (most response shapes serve only the
    OpenAPI document)."""

    model_config = ConfigDict(defer_build=True)


class Strict(Schema):
    model_config = ConfigDict(extra="forbid", strict=True)


def _content(value: str) -> str:
    # The length limit is Settings.max_content_chars, enforced by the service (intake.checked_content)
    # for every path that writes content, so it is configured in one place.
    if not value.strip():
        raise ValueError("content must not be empty")
    return value


class MemoryCreate(Strict):
    content: str = Field(description="The fact, in the user's words.")
    category: str | None = Field(default=None, max_length=64)
    visibility: Literal["public", "private"] = "private"

    _check = field_validator("content")(_content)


class MemoryEdit(Strict):
    """``PATCH /v1/memories/{memory_id}``: any of the fields, at least one. A content edit is a new
    revision back in Short-term; visibility, category and the review flag are metadata edits."""

    content: str | None = Field(default=None, description="the new content (whitespace-collapsed, at most "
                                                           "STRATA_MAX_CONTENT_CHARS characters)")
    visibility: Literal["public", "private"] | None = None
    category: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]{0,63}$",
                                 description="a category name (interesting, system, manual, workflow, or an "
                                             "older name)")
    reviewed: bool | None = Field(default=None, description="the user's own verdict on the memory: true (right) "
                                                            "or false (wrong); sets user_review")

    @field_validator("content")
    @classmethod
    def _check_content(cls, value: str | None) -> str | None:
        return None if value is None else _content(value)

    @model_validator(mode="after")
    def _something(self) -> MemoryEdit:
        if self.content is None and self.visibility is None and self.category is None and self.reviewed is None:
            raise ValueError("give at least one of content, visibility, category, reviewed")
        return self


class ToolSearch(Strict):
    """``POST /v1/tools/memories/search`` (the original's tool request)."""

    query: str = Field(min_length=1, max_length=1_000, description="the search text")
    limit: int = Field(default=5, ge=1, le=20)


class MemoryBatch(Strict):
    memories: list[MemoryCreate] = Field(min_length=1, max_length=100)


class ReviewResolve(Strict):
    decision: Literal["accept", "keep_both", "reject", "correct"] = Field(description=(
        "accept: admit it and end the facts it would end; keep_both: admit it beside them, never asked "
        "again; correct: admit the corrected text; reject: hide it"))
    correction: str | None = None


class TranscriptSegment(Strict):
    id: str = Field(min_length=1, max_length=200)
    text: str = Field(max_length=20_000)
    speaker: str = Field(default="SPEAKER_00", max_length=200)
    speaker_id: int = Field(default=0, ge=0, le=1_000_000)
    is_user: bool = False
    start: float = Field(default=0.0, ge=0.0, le=MAX_SECONDS, allow_inf_nan=False)
    end: float = Field(default=0.0, ge=0.0, le=MAX_SECONDS, allow_inf_nan=False)


class ExternalData(Strict):
    text: str = Field(max_length=200_000)
    text_source: str = Field(default="other", max_length=200)


class Structured(Schema):
    model_config = ConfigDict(extra="allow")
    title: str = ""
    overview: str = ""
    action_items: list[dict] = Field(default_factory=list)
    events: list[dict] = Field(default_factory=list)
    category: str = "other"


class AppResult(Schema):
    """One app's output on a conversation, as apps write it (``apps_results[]``)."""

    model_config = ConfigDict(extra="allow")
    app_id: str | None = Field(default=None, max_length=200)
    content: str = Field(default="", max_length=200_000)


class PluginResult(Schema):
    """The legacy mirror of :class:`AppResult` (``plugins_results[]``)."""

    model_config = ConfigDict(extra="allow")
    plugin_id: str | None = Field(default=None, max_length=200)
    content: str = Field(default="", max_length=200_000)


def _iso_datetime(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError("must be an ISO 8601 date-time") from exc
    return value


class ConversationCreate(Strict):
    """A completed conversation, with the fields apps write (docs/data-model.md, the conversation document). It must carry
    something to capture: at least one transcript segment or ``external_data.text``."""

    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,127}$")
    status: Literal["completed"] = "completed"
    transcript_segments: list[TranscriptSegment] = Field(default_factory=list, max_length=5_000)
    structured: Structured | None = None
    source: str = Field(default="api", max_length=200)
    language: str = Field(default="en", max_length=35)
    discarded: bool = False
    client_device_id: str | None = Field(default=None, pattern=r"^[a-z]+_[0-9a-f]{8}$")
    client_platform: str | None = Field(default=None, max_length=64)
    external_data: ExternalData | None = None
    created_at: str | None = Field(default=None, max_length=64, description="ISO 8601 date-time")
    started_at: str | None = Field(default=None, max_length=64, description="ISO 8601 date-time")
    finished_at: str | None = Field(default=None, max_length=64, description="ISO 8601 date-time")
    apps_results: list[AppResult] | None = Field(default=None, max_length=100)
    plugins_results: list[PluginResult] | None = Field(default=None, max_length=100)
    processing_memory_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,127}$")

    _dates = field_validator("created_at", "started_at", "finished_at")(_iso_datetime)

    @model_validator(mode="after")
    def _has_content(self) -> ConversationCreate:
        if not any(s.text.strip() for s in self.transcript_segments) and not (
                self.external_data and self.external_data.text.strip()):
            raise ValueError("a conversation needs a transcript segment with text or external_data.text")
        return self


class Evidence(Schema):
    evidence_id: str
    source_type: str
    source_id: str
    quote_refs: list[dict]
    client_device_id: str | None


class MemorySlot(Schema):
    """The attribute a fact states, from the declared vocabulary, and its value; ``ended``: the
    statement says that value no longer holds."""

    attribute: str
    value: str
    ended: bool


class Memory(Schema):
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
    valid_from: str | None = None
    valid_to: str | None = None
    superseded_by: str | None = None
    slot: MemorySlot | None = None


class V3Memory(Memory):
    """``/v3``'s memory: a locked memory's content is cut to 70 characters (plus "...")."""

    is_locked: bool


class V3MemoryArray(RootModel[list[V3Memory]]):
    """``GET /v3/memories``: a bare array (legacy shape)."""

    model_config = ConfigDict(defer_build=True)


class McpMemory(Schema):
    """``GET /v1/mcp/memories``: the original's compact memory (locked content cut as on /v3)."""

    id: str
    content: str
    category: str


class McpMemoryArray(RootModel[list[McpMemory]]):
    """A bare array (the original's shape)."""

    model_config = ConfigDict(defer_build=True)


class StatusOk(Schema):
    status: Literal["ok"]


class ToolResult(Schema):
    """The original's tool envelope: the result as text for an agent."""

    tool_name: str
    result_text: str
    is_error: bool


class MemoryList(Schema):
    memories: list[Memory]
    next_cursor: str | None = None


class MemoryArray(RootModel[list[Memory]]):
    """``GET /v3/memories``: a bare array (legacy shape)."""

    model_config = ConfigDict(defer_build=True)


class MemoryPage(Schema):
    memories: list[Memory]


class ScoredMemory(Memory):
    score: float


class SearchResults(Schema):
    memories: list[ScoredMemory]


class SearchPage(SearchResults):
    next_cursor: str | None = Field(description="the next page's cursor; null at the end of the results or at "
                                                "the depth limit")
    depth_limited: bool = Field(description="true when paging stopped at the search's depth limit (the first "
                                            "100 results) while more may match")


class Health(Schema):
    status: str


class HistoryCommit(Schema):
    commit_id: str
    sequence: int
    kind: str
    created_at: str | None
    revision: int | None
    layer: str | None
    status: str | None


class History(Schema):
    commits: list[HistoryCommit]
    next_cursor: str | None = Field(default=None, description="the next page's cursor; null on the last page")


class MemoryDeleted(Schema):
    deleted: list[str]
    commit_id: str | None = None
    receipt_id: str = Field(description="the deletion receipt: GET /v1/deletions/{receipt_id}")


class AllDeleted(Schema):
    deleted: int
    stable_at_sequence: int
    receipt_id: str = Field(description="the deletion receipt: GET /v1/deletions/{receipt_id}")


class ConversationCreated(Schema):
    id: str
    status: Literal["completed"]


class Reprocessed(Schema):
    conversation_id: str
    created: int
    kept: int
    retracted: int
    action_items: int
    goals: int


class ConversationDeleted(Schema):
    deleted: bool
    cascade: bool | dict[str, Any]
    receipt_id: str | None = Field(default=None, description="the deletion receipt of a cascade: "
                                                        "GET /v1/deletions/{receipt_id} (none with cascade=false)")


class AccountDeleted(Schema):
    state: Literal["completed"]
    uid: str
    receipt_id: str = Field(description="the deletion receipt: GET /v1/deletions/{receipt_id}")


class WouldEnd(Schema):
    id: str
    content: str


class ReviewEntry(Schema):
    review_id: str
    memory_id: str
    content: str
    conflicting: list[str]
    would_end: list[WouldEnd] = Field(default_factory=list,
                                      description="the current facts accepting this entry would end")
    reason: str
    created_at: str
    expires_at: str


class ReviewQueue(Schema):
    reviews: list[ReviewEntry]


class ReviewPage(ReviewQueue):
    next_cursor: str | None = Field(description="the next page's cursor; null at the end or at the depth limit")
    depth_limited: bool = Field(description="true when paging stopped at the queue's depth limit (500 entries)")


class ReviewResolved(Schema):
    review_id: str


class GraphPage(Schema):
    nodes: list[dict[str, Any]] = Field(description="the nodes this page's edges end at (a node shared by edges "
                                                    "of two pages is on both)")
    edges: list[dict[str, Any]] = Field(description="a page of the edges, in id order")
    next_cursor: str | None = Field(default=None, description="the next page's cursor; null on the last page")
    truncated: bool = Field(description="true when more pages follow (next_cursor is set); kept for older clients")


class ErrorBody(Schema):
    code: str
    message: str
    request_id: str | None = Field(default=None, description="the request's id, also in the X-Request-Id header "
                                                              "and in every log line written for it")


class Error(Schema):
    error: ErrorBody

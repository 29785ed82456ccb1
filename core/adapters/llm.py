"""OpenAI-compatible chat-completions adapters: the LLM extractor and the LLM router.

Both ask for a strict ``json_schema`` response and accept nothing less: a transport failure,
timeout, 429/5xx, truncated reply (``finish_reason == "length"``), malformed JSON or a reply of the
wrong shape raises a :class:`core.errors.RetryableError` subclass; a 4xx refusal or a model refusal
raises :class:`LLMRejected` (a :class:`core.errors.PermanentError`). A partial result is never
returned, so a failed extraction leaves the conversation's prior memories untouched.

What leaves the process: the extractor sends the numbered *owner* segments with every disclosed
secret already redacted; the router sends unrestricted candidates and unrestricted neighbours only
(restricted candidates are routed by :class:`~core.domain.routing.RuleRouter` locally). Neither
sends ids other than the opaque refs the server assigned, and the LLM never supplies ids.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.config import Settings
from core.domain.extraction import (
    CATEGORIES,
    Candidate,
    ExtractionResult,
    ExtractionSource,
    Extractor,
    WorkflowCandidate,
    drop_secret_candidates,
    source_segments,
)
from core.domain.routing import ROUTE_SCHEMA, ROUTES, RouteCandidate, RouteProposal, Router, RuleRouter
from core.domain.rule_extractor import RuleExtractor
from core.domain.sensitivity import REDACTED, RESTRICTED_LABELS, label_sensitivity, redact_secrets
from core.errors import (
    LLMMalformedReply,
    LLMRejected,
    LLMTimeout,
    LLMTruncatedReply,
    LLMUnavailable,
)


# --------------------------------------------------------------------------- errors
# --------------------------------------------------------------------------- the client
class ChatClient:
    """A small OpenAI-compatible ``/chat/completions`` client returning the parsed JSON object."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 20.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        if not base_url or not model:
            raise LLMRejected("LLM adapter needs a base URL and a model", code="llm_misconfigured")
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers,
                                  timeout=httpx.Timeout(timeout_s), transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings) -> ChatClient:
        return cls(settings.llm_base_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)

    def close(self) -> None:
        self._http.close()

    def complete_json(self, *, system: str, user: str, schema_name: str, schema: dict[str, Any]) -> Any:
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": True, "schema": schema},
            },
        }
        try:
            response = self._http.post("/chat/completions", json=body)
        except httpx.TimeoutException as exc:
            raise LLMTimeout(f"LLM request timed out: {exc}") from exc
        except httpx.HTTPError as exc:
            raise LLMUnavailable(f"LLM request failed: {exc}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise LLMUnavailable(f"LLM provider answered HTTP {response.status_code}")
        if response.status_code >= 400:
            raise LLMRejected(f"LLM provider refused the request: HTTP {response.status_code}")
        try:
            choice = response.json()["choices"][0]
            finish = choice.get("finish_reason")
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMMalformedReply("LLM reply is not a chat completion") from exc
        if finish == "length":
            raise LLMTruncatedReply("LLM reply was truncated (finish_reason=length)")
        if isinstance(message, dict) and message.get("refusal"):
            raise LLMRejected("LLM refused to answer")
        if finish not in (None, "stop"):
            raise LLMMalformedReply(f"LLM reply finished with {finish!r}")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise LLMMalformedReply("LLM reply has no text content")
        try:
            return json.loads(content)
        except ValueError as exc:
            raise LLMMalformedReply("LLM reply content is not valid JSON") from exc


# --------------------------------------------------------------------------- extraction
_NULLABLE_STRING = {"type": ["string", "null"]}
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["memories", "action_items", "goals"],
    "properties": {
        "memories": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["content", "kind", "category", "subject", "subject_label", "quotes", "sensitivity"],
            "properties": {
                "content": {"type": "string"},
                "kind": {"type": "string", "enum": ["fact", "preference", "relationship", "plan"]},
                "category": {"type": "string", "enum": list(CATEGORIES)},
                "subject": {"type": "string", "enum": ["user", "third_party", "unknown"]},
                "subject_label": _NULLABLE_STRING,
                "quotes": {"type": "array", "items": {"type": "string"}},
                "sensitivity": {"type": "array", "items": {"type": "string", "enum": sorted(RESTRICTED_LABELS)}},
            },
        }},
        "action_items": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["description", "quote", "due"],
            "properties": {"description": {"type": "string"}, "quote": {"type": "string"}, "due": _NULLABLE_STRING},
        }},
        "goals": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["description", "quote", "due"],
            "properties": {"description": {"type": "string"}, "quote": {"type": "string"}, "due": _NULLABLE_STRING},
        }},
    },
}

_EXTRACTION_SYSTEM = (
    "You extract durable memories about the owner of a conversation. You receive the owner's own "
    "numbered transcript segments. Return only facts, preferences, relationships and plans that stay "
    "true beyond this conversation; skip greetings, weather and small talk. Write each memory as one "
    "short sentence about its subject: 'User ...' for the owner, the person's name for anyone else "
    "(subject 'third_party', subject_label the name); never attribute another person's fact to the "
    "owner. Every memory cites one or more quotes copied verbatim from a single segment (without the "
    "[n] number). Never output passwords, PINs, keys, card numbers or other secrets; text shown as "
    f"{REDACTED} must not be quoted. Action items (things the owner must do) and goals go to their own "
    "lists, not to memories. Return an empty list when nothing qualifies."
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _MemoryOut(_Strict):
    content: str = Field(min_length=1, max_length=2000)
    kind: str
    category: str
    subject: str
    subject_label: str | None
    quotes: list[str] = Field(min_length=1)
    sensitivity: list[str]


class _WorkflowOut(_Strict):
    description: str = Field(min_length=1, max_length=2000)
    quote: str = Field(min_length=1)
    due: str | None


class _ExtractionOut(_Strict):
    memories: list[_MemoryOut]
    action_items: list[_WorkflowOut]
    goals: list[_WorkflowOut]


class LLMExtractor:
    """Extraction through an OpenAI-compatible model; same interface as the rule extractor."""

    extractor_id = "openai"

    def __init__(self, client: ChatClient) -> None:
        self._client = client
        self.extractor_version = f"1:{client.model}"

    def extract(self, source: ExtractionSource) -> ExtractionResult:
        owner = [s for s in source_segments(source) if s.is_user]
        if not owner:
            return ExtractionResult((), (), (), self.extractor_id, self.extractor_version)
        numbered = "\n".join(f"[{n}] {redact_secrets(s.text)}" for n, s in enumerate(owner, start=1))
        raw = self._client.complete_json(system=_EXTRACTION_SYSTEM, user=f"Owner segments:\n{numbered}",
                                         schema_name="strata_extraction", schema=EXTRACTION_SCHEMA)
        try:
            parsed = _ExtractionOut.model_validate(raw)
            memories = tuple(
                Candidate(
                    content=m.content.strip(), kind=m.kind, category=m.category,  # type: ignore[arg-type]
                    subject=m.subject,  # type: ignore[arg-type]
                    subject_label=(m.subject_label or None), quotes=tuple(m.quotes),
                    sensitivity=frozenset(label for label in m.sensitivity if label in RESTRICTED_LABELS)
                    | label_sensitivity(" ".join((m.content, *m.quotes))),
                )
                for m in parsed.memories
            )
            if any(m.category not in CATEGORIES for m in memories) or any(not m.content for m in memories):
                raise ValueError("category outside the schema or empty content")
            action_items = tuple(WorkflowCandidate("action_item", w.description.strip(), w.quote, w.due)
                                 for w in parsed.action_items)
            goals = tuple(WorkflowCandidate("goal", w.description.strip(), w.quote, w.due) for w in parsed.goals)
        except (ValidationError, ValueError, TypeError) as exc:
            raise LLMMalformedReply(f"LLM extraction reply has the wrong shape: {exc}") from exc
        result = ExtractionResult(memories, action_items, goals, self.extractor_id, self.extractor_version)
        result = drop_secret_candidates(result)
        # A quote of redacted text cannot be grounded and must not be stored.
        return ExtractionResult(
            memories=tuple(m for m in result.memories if not any(REDACTED in q for q in m.quotes)),
            action_items=tuple(w for w in result.action_items if REDACTED not in w.quote),
            goals=tuple(w for w in result.goals if REDACTED not in w.quote),
            extractor_id=result.extractor_id, extractor_version=result.extractor_version,
        )


# --------------------------------------------------------------------------- routing
_ROUTER_SYSTEM = (
    "You decide the consolidation route of each pending Short-term memory: 'promote' (durable, "
    "worth keeping Long-term), 'archive' (a duplicate of a Long-term neighbour, or stale), 'review' "
    "(ambiguous; a person decides) or 'reject' (garbage). Give exactly one proposal per item_ref. "
    "Use only the refs you are given: duplicate_of must be a neighbour ref or null, supersedes lists "
    "neighbour refs the item contradicts and replaces. Keep the reason short."
)


class _ProposalOut(_Strict):
    item_ref: str
    route: str
    reason: str
    duplicate_of: str | None
    supersedes: list[str]


class _RouteOut(_Strict):
    proposals: list[_ProposalOut]


class LLMRouter:
    """Routing through an OpenAI-compatible model. Proposals are returned as parsed; the server
    validates them (unknown refs, missing or duplicate items). Restricted items stay local."""

    router_id = "openai"

    def __init__(self, client: ChatClient, fallback: RuleRouter | None = None) -> None:
        self._client = client
        self._local = fallback or RuleRouter()
        self.router_version = f"1:{client.model}"

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        local = [c for c in candidates if c.restricted]
        remote = [c for c in candidates if not c.restricted]
        proposals = self._local.route(local)
        if not remote:
            return proposals
        items = [{
            "item_ref": c.ref, "content": c.content, "kind": c.kind, "category": c.category,
            "subject": c.subject, "subject_label": c.subject_label,
            "independent_sources": c.independent_sources, "manually_added": c.manually_added,
            "expired": c.expired,
            "neighbours": [{"ref": n.ref, "content": n.content, "layer": n.layer, "subject_label": n.subject_label}
                           for n in c.neighbours if not n.restricted],
        } for c in remote]
        raw = self._client.complete_json(system=_ROUTER_SYSTEM, user=json.dumps({"items": items}, sort_keys=True),
                                         schema_name="strata_routes", schema=ROUTE_SCHEMA)
        try:
            parsed = _RouteOut.model_validate(raw)
            if any(p.route not in ROUTES for p in parsed.proposals):
                raise ValueError("route outside the schema")
        except (ValidationError, ValueError) as exc:
            raise LLMMalformedReply(f"LLM routing reply has the wrong shape: {exc}") from exc
        return proposals + [
            RouteProposal(item_ref=p.item_ref, route=p.route, reason=p.reason,  # type: ignore[arg-type]
                          duplicate_of=p.duplicate_of, supersedes=tuple(p.supersedes))
            for p in parsed.proposals
        ]


# --------------------------------------------------------------------------- factories
def build_extractor(settings: Settings) -> Extractor:
    if settings.extractor == "rules":
        return RuleExtractor()
    if settings.extractor == "openai":
        return LLMExtractor(ChatClient.from_settings(settings))
    raise LLMRejected(f"unknown extractor {settings.extractor!r} (rules | openai)", code="misconfigured")


def build_router(settings: Settings) -> Router:
    if settings.router == "rules":
        return RuleRouter()
    if settings.router == "openai":
        return LLMRouter(ChatClient.from_settings(settings))
    raise LLMRejected(f"unknown router {settings.router!r} (rules | openai)", code="misconfigured")


__all__ = [
    "EXTRACTION_SCHEMA", "ChatClient", "LLMExtractor", "LLMMalformedReply", "LLMRejected", "LLMRouter",
    "LLMTimeout", "LLMTruncatedReply", "LLMUnavailable", "build_extractor", "build_router",
]

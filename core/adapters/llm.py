"""OpenAI-compatible chat-completions adapters: the LLM extractor and the LLM router.

Both ask for a strict ``json_schema`` response by default (``STRATA_LLM_RESPONSE_FORMAT``:
``json_object`` for servers with JSON mode only, ``none`` for servers with neither; the reply is
validated here against the same schema either way), bounded by ``max_tokens``, at temperature 0
unless ``STRATA_LLM_SEND_TEMPERATURE=0``. A transport failure, timeout, 429/5xx, truncated reply
(``finish_reason == "length"``), malformed JSON or a reply of the wrong shape raises a
:class:`core.errors.RetryableError` subclass; a 4xx refusal or a model refusal raises
:class:`LLMRejected` (a :class:`core.errors.PermanentError`) whose message carries the status and
the start of the provider's answer, logged as an error. A partial result is never returned, so a
failed extraction leaves the conversation's prior memories untouched. How often capture calls the
model for one conversation revision, and what it does after, is capture's business
(``STRATA_LLM_MAX_ATTEMPTS``, ``STRATA_LLM_ON_FAILURE``).

A long transcript is sent in windows of whole owner segments (``STRATA_LLM_WINDOW_SEGMENTS`` /
``STRATA_LLM_WINDOW_CHARS``), one request each, numbered from 1 within the window; the windows'
candidates are merged, and grounding still binds every quote to one segment of the whole
conversation.

What leaves the process: the extractor sends the numbered *owner* segments with every disclosed
secret already redacted; the router sends unrestricted candidates and unrestricted neighbours only
(restricted candidates are routed by :class:`~core.adapters.rules.RuleRouter` locally, and a restricted
neighbour the model does not see is ended only by the ending rule's own reading of the two slots).
Neither
sends ids other than the opaque refs the server assigned, and the LLM never supplies ids.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core import metering, tracing
from core.adapters.rules import RuleRouter, sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.adapters.rules.router import rule_endings
from core.adapters.rules.sensitivity import label_sensitivity, redact_secrets
from core.config import Settings
from core.domain.extraction import (
    CATEGORIES,
    Candidate,
    ExtractionResult,
    ExtractionSource,
    Segment,
    WorkflowCandidate,
    drop_secret_candidates,
    source_segments,
)
from core.domain.records import REDACTED, RESTRICTED_LABELS
from core.domain.routing import ROUTE_SCHEMA, ROUTES, RouteCandidate, RouteProposal
from core.domain.slots import ATTRIBUTES, VOCABULARY, Slot
from core.errors import (
    LLMMalformedReply,
    LLMRejected,
    LLMTimeout,
    LLMTruncatedReply,
    LLMUnavailable,
    PermanentError,
    ProviderUnavailable,
)
from core.ports import Extractor, Router

if TYPE_CHECKING:  # httpx is imported when a model client is built: the rule extractor never needs it
    import httpx

log = logging.getLogger(__name__)
RESPONSE_FORMATS = ("json_schema", "json_object", "none")
AUTH_MODES = ("none", "key", "google")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


@dataclass
class Usage:
    """What one client sent and received so far (the real-model check reports it)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


# --------------------------------------------------------------------------- the client
@tracing.spanned("model", only=("complete_json",))
class ChatClient:
    """A small OpenAI-compatible ``/chat/completions`` client returning the parsed JSON object.

    ``auth`` (``STRATA_LLM_AUTH``): ``key`` sends ``api_key`` as a bearer token when there is one,
    ``none`` sends no credential, ``google`` sends an access token of the process's own service
    account from ``token`` (default: Application Default Credentials, which on Cloud Run is the
    metadata server; cached by google-auth until shortly before it expires), as Vertex AI's
    OpenAI-compatible endpoint requires. A 401 or 403 is permanent, its message naming the
    provider's status and words; a 429 (quota) or 5xx is retryable. Every call, failed or not,
    is counted in the current :func:`core.metering.metered` meter (whether the answer was usable is
    for its reader to count)."""

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 20.0,
                 transport: httpx.BaseTransport | None = None, *, max_tokens: int = 4096,
                 response_format: str = "json_schema", send_temperature: bool = True, auth: str = "key",
                 token: Callable[[], str] | None = None, reasoning_effort: str = "") -> None:
        if not base_url or not model:
            raise LLMRejected("LLM adapter needs a base URL and a model", code="llm_misconfigured")
        if response_format not in RESPONSE_FORMATS:
            raise LLMRejected(f"unknown LLM response format {response_format!r} ({' | '.join(RESPONSE_FORMATS)})",
                              code="llm_misconfigured")
        if auth not in AUTH_MODES:
            raise LLMRejected(f"unknown LLM auth {auth!r} ({' | '.join(AUTH_MODES)})", code="llm_misconfigured")
        if auth == "google" and token is None:
            from core.adapters.google_auth import adc_token

            token = adc_token(what="STRATA_LLM_AUTH=google")
        self.auth = auth
        self._token = token if auth == "google" else None
        self.model = model
        self.max_tokens = max_tokens
        self.response_format = response_format
        self.send_temperature = send_temperature
        self.reasoning_effort = reasoning_effort
        self.usage = Usage()
        import httpx

        # The transport's errors, kept so that a call maps them without importing httpx again.
        self._timeout_error: type[httpx.TimeoutException] = httpx.TimeoutException
        self._transport_error: type[httpx.HTTPError] = httpx.HTTPError
        headers = {"Authorization": f"Bearer {api_key}"} if api_key and auth == "key" else {}
        self.timeout_s = timeout_s
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers,
                                  timeout=httpx.Timeout(timeout_s), transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings, *, token: Callable[[], str] | None = None) -> ChatClient:
        return cls(settings.llm_base_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s,
                   max_tokens=settings.llm_max_tokens, response_format=settings.llm_response_format,
                   send_temperature=settings.llm_send_temperature, auth=settings.llm_auth, token=token,
                   reasoning_effort=settings.llm_reasoning_effort)

    def close(self) -> None:
        self._http.close()

    def _body(self, system: str, user: str, schema_name: str, schema: dict[str, Any]) -> dict[str, Any]:
        if self.response_format != "json_schema":
            # Without strict structured output the schema travels in the prompt; the reply is
            # validated against it by the caller all the same.
            system = (f"{system}\n\nAnswer with one JSON object only, no prose, matching this JSON schema:\n"
                      f"{json.dumps(schema, sort_keys=True)}")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        if self.send_temperature:
            body["temperature"] = 0
        if self.reasoning_effort:
            body["reasoning_effort"] = self.reasoning_effort
        if self.response_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": True, "schema": schema},
            }
        elif self.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def body(self, *, system: str, user: str, schema_name: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The request body :meth:`complete_json` posts (what the replay tooling keys and dumps)."""
        return self._body(system, user, schema_name, schema)

    def complete_json(self, *, system: str, user: str, schema_name: str, schema: dict[str, Any]) -> Any:
        self.usage.calls += 1
        response = self._post(self._body(system, user, schema_name, schema))
        tokens = [0, 0]  # prompt, completion: what the reply says it used, usable or not
        try:
            return self._parse(response, tokens)
        finally:
            metering.record_call(self.model, *tokens)
            tracing.annotate(**{"gen_ai.request.model": self.model, "gen_ai.usage.input_tokens": tokens[0],
                                "gen_ai.usage.output_tokens": tokens[1], "strata.schema": schema_name})

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        """The answer to one request; a transport failure or an HTTP error raised (and counted)."""
        headers = {"Authorization": f"Bearer {self._token()}"} if self._token is not None else None
        try:
            response = self._http.post("/chat/completions", json=body, headers=headers)
        except self._timeout_error as exc:
            metering.record_call(self.model, 0, 0)
            raise LLMTimeout(f"LLM request timed out after {self.timeout_s:g} s: {exc}") from exc
        except self._transport_error as exc:
            metering.record_call(self.model, 0, 0)
            raise LLMUnavailable(f"LLM request failed: {exc}") from exc
        if response.status_code >= 400:
            metering.record_call(self.model, 0, 0)
            self._refused(response)
        return response

    def _parse(self, response: httpx.Response, tokens: list[int]) -> Any:
        """The JSON object a chat completion carries; ``tokens`` gets its usage."""
        try:
            reply = response.json()
            choice = reply["choices"][0]
            finish = choice.get("finish_reason")
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMMalformedReply("LLM reply is not a chat completion") from exc
        usage = reply.get("usage") if isinstance(reply, dict) else None
        if isinstance(usage, dict):
            tokens[:] = [int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)]
            self.usage.prompt_tokens += tokens[0]
            self.usage.completion_tokens += tokens[1]
        if finish == "length":
            raise LLMTruncatedReply("LLM reply was truncated (finish_reason=length)")
        if isinstance(message, dict) and message.get("refusal"):
            raise LLMRejected("LLM refused to answer")
        if finish not in (None, "stop"):
            raise LLMMalformedReply(f"LLM reply finished with {finish!r}")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise LLMMalformedReply("LLM reply has no text content")
        if self.response_format != "json_schema":
            fenced = _FENCE.match(content)  # models without JSON mode like a ```json fence
            content = fenced.group(1) if fenced else content
        try:
            return json.loads(content)
        except ValueError as exc:
            raise LLMMalformedReply("LLM reply content is not valid JSON") from exc

    def _refused(self, response: httpx.Response) -> None:
        """Raise the error of an HTTP error answer: 429 and 5xx retryable, any other 4xx permanent;
        401/403 say which credential was refused. The message carries the status and the
        provider's own words (Google's ``{"error": {code, message, status}}``, which Vertex AI's
        OpenAI-compatible endpoint also sends wrapped in a one-element list, or OpenAI's
        ``{"error": {message, type}}``)."""
        status = response.status_code
        detail = _error_detail(response)
        if status == 429 or status >= 500:
            raise LLMUnavailable(f"LLM provider answered HTTP {status}: {detail}")
        if status in (401, 403):
            credential = {"google": "the service account's access token (STRATA_LLM_AUTH=google)",
                          "key": "the API key (STRATA_LLM_API_KEY)" if "Authorization" in self._http.headers
                          else "a request without credentials (STRATA_LLM_API_KEY is empty)",
                          "none": "a request without credentials (STRATA_LLM_AUTH=none)"}[self.auth]
            hint = ("; grant the function's service account roles/aiplatform.user and enable "
                    "aiplatform.googleapis.com" if status == 403 and self.auth == "google" else "")
            message = f"LLM provider refused {credential}: HTTP {status}: {detail}{hint}"
            log.error("%s", message)
            raise LLMRejected(message, code="llm_unauthenticated" if status == 401 else "llm_permission_denied")
        # Not silent: the status and the provider's own words, logged and carried by the error
        # (capture records its code on the conversation's marker).
        log.error("LLM provider refused the request: HTTP %s: %s", status, detail)
        raise LLMRejected(f"LLM provider refused the request: HTTP {status}: {detail}")


def _error_detail(response: httpx.Response) -> str:
    """The provider's words from an error answer: ``STATUS message`` of a Google error (alone or in a
    list), ``message`` of an OpenAI one, else the start of the body."""
    try:
        body = response.json()
        error = (body[0] if isinstance(body, list) and body else body)["error"]
        words = f"{error.get('status') or ''} {error.get('message') or ''}".strip()
        if words:
            return " ".join(words.split())[:300]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        pass
    return " ".join(response.text.split())[:300]


# --------------------------------------------------------------------------- extraction
_NULLABLE_STRING = {"type": ["string", "null"]}
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["memories", "action_items", "goals"],
    "properties": {
        "memories": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["content", "kind", "category", "subject", "subject_label", "quotes", "sensitivity", "slot"],
            "properties": {
                "content": {"type": "string"},
                "slot": {"anyOf": [{"type": "null"}, {
                    "type": "object", "additionalProperties": False, "required": ["attribute", "value", "ended"],
                    "properties": {"attribute": {"type": "string", "enum": list(ATTRIBUTES)},
                                   "value": {"type": "string"}, "ended": {"type": "boolean"}}}]},
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
    "lists, not to memories. Return an empty list when nothing qualifies. Resolve relative dates "
    "('last June', 'next week') against the conversation's date, in the tense the speaker used. "
    "slot: when the memory plainly states the subject's current value of one of these attributes, "
    "give {attribute, value, ended}, else null: "
    + "; ".join(f"{a.name}: {a.about}" for a in VOCABULARY.values()) + ". value is \"none\" when the person "
    "says they have none (no car, no pets, no partner). ended is true when the statement says that "
    "value no longer holds (sold the car, left the employer, quit smoking, divorced). Never a "
    "slot for a plan, a wish, a question, a trip or visit, a hypothetical, or the past mentioned in "
    "passing."
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _SlotOut(_Strict):
    attribute: str
    value: str = Field(min_length=1, max_length=120)
    ended: bool


class _MemoryOut(_Strict):
    content: str = Field(min_length=1, max_length=2000)
    slot: _SlotOut | None = None  # required by the strict schema; a JSON-mode reply may leave it out
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


def windows(segments: Sequence[Segment], max_segments: int, max_chars: int) -> list[tuple[Segment, ...]]:
    """Consecutive runs of whole segments, each at most ``max_segments`` long and ``max_chars`` of
    text (a single longer segment is a window of its own: a segment is never cut)."""
    out: list[tuple[Segment, ...]] = []
    current: list[Segment] = []
    size = 0
    for segment in segments:
        length = len(segment.text)
        if current and (len(current) >= max_segments or size + length > max_chars):
            out.append(tuple(current))
            current, size = [], 0
        current.append(segment)
        size += length
    if current:
        out.append(tuple(current))
    return out


class LLMExtractor:
    """Extraction through an OpenAI-compatible model; same interface as the rule extractor.

    ``model_backed``: capture bounds how often it is called per conversation revision and falls
    back to the rule extractor (or fails) after that."""

    extractor_id = "openai"
    model_backed = True

    def __init__(self, client: ChatClient, *, window_segments: int = 200, window_chars: int = 24_000) -> None:
        self._client = client
        self.extractor_version = f"1:{client.model}"
        self.window_segments = window_segments
        self.window_chars = window_chars

    def extract(self, source: ExtractionSource) -> ExtractionResult:
        owner = [s for s in source_segments(source) if s.is_user]
        memories: dict[tuple[str, str], Candidate] = {}
        workflow: dict[tuple[str, str], WorkflowCandidate] = {}
        for window in windows(owner, self.window_segments, self.window_chars):
            found, rows = self._extract_window(window, source.session_date)
            for m in found:  # the same fact said in two windows is one candidate, citing both
                key = (" ".join(m.content.split()).casefold(), (m.subject_label or "").casefold())
                seen = memories.get(key)
                memories[key] = m if seen is None else replace(
                    seen, quotes=tuple(dict.fromkeys((*seen.quotes, *m.quotes))),
                    sensitivity=seen.sensitivity | m.sensitivity)
            for w in rows:
                workflow.setdefault((w.kind, " ".join(w.description.split()).casefold()), w)
        result = ExtractionResult(
            tuple(memories.values()), tuple(w for w in workflow.values() if w.kind == "action_item"),
            tuple(w for w in workflow.values() if w.kind == "goal"), self.extractor_id, self.extractor_version)
        result = drop_secret_candidates(result, sensitivity=sensitivity)
        # A quote of redacted text cannot be grounded and must not be stored.
        return ExtractionResult(
            memories=tuple(m for m in result.memories if not any(REDACTED in q for q in m.quotes)),
            action_items=tuple(w for w in result.action_items if REDACTED not in w.quote),
            goals=tuple(w for w in result.goals if REDACTED not in w.quote),
            extractor_id=result.extractor_id, extractor_version=result.extractor_version,
        )

    def _extract_window(self, window: Sequence[Segment], day: date | None = None
                        ) -> tuple[list[Candidate], list[WorkflowCandidate]]:
        numbered = "\n".join(f"[{n}] {redact_secrets(s.text)}" for n, s in enumerate(window, start=1))
        dated = f"Conversation date: {day.isoformat()}\n" if day else ""
        raw = self._client.complete_json(system=_EXTRACTION_SYSTEM, user=f"{dated}Owner segments:\n{numbered}",
                                         schema_name="strata_extraction", schema=EXTRACTION_SCHEMA)
        try:
            parsed = _ExtractionOut.model_validate(raw)
            memories = [
                Candidate(
                    content=m.content.strip(), kind=m.kind, category=m.category,  # type: ignore[arg-type]
                    subject=m.subject,  # type: ignore[arg-type]
                    subject_label=(m.subject_label or None), quotes=tuple(m.quotes),
                    sensitivity=frozenset(label for label in m.sensitivity if label in RESTRICTED_LABELS)
                    | label_sensitivity(" ".join((m.content, *m.quotes))),
                    slot=Slot(**m.slot.model_dump()) if m.slot is not None else None,
                )
                for m in parsed.memories
            ]
            if any(m.category not in CATEGORIES for m in memories) or any(not m.content for m in memories):
                raise ValueError("category outside the schema or empty content")
            rows = [WorkflowCandidate("action_item", w.description.strip(), w.quote, w.due)
                    for w in parsed.action_items]
            rows += [WorkflowCandidate("goal", w.description.strip(), w.quote, w.due) for w in parsed.goals]
        except (ValidationError, ValueError, TypeError) as exc:
            raise LLMMalformedReply(f"LLM extraction reply has the wrong shape: {exc}") from exc
        return memories, rows


# --------------------------------------------------------------------------- routing
_ROUTER_SYSTEM = (
    "You decide the consolidation route of each pending Short-term memory: 'promote' (a durable fact "
    "worth keeping Long-term), 'archive' (a duplicate of a Long-term neighbour, or not durable: a "
    "plan, a passing mood, one day's event), 'review' (ambiguous; the person decides) or 'reject' "
    "(garbage). Give exactly one proposal per item_ref. Use only the refs you are given: "
    "duplicate_of must be a neighbour ref or null; supersedes lists the neighbour refs whose fact "
    "the item's own statement ends: the same person, the same attribute (slot), a new value or the "
    "statement that the value ended, said later (said_on). Never supersede for a remark about "
    "someone else, a plan, a trip or a hypothetical. The server checks every ending against the "
    "slots and dates and asks the person when it cannot confirm it. Keep the reason short."
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
            "expired": c.expired, "slot": _slot(c.slot), "said_on": _day(c.said),
            "neighbours": [{"ref": n.ref, "content": n.content, "layer": n.layer, "subject_label": n.subject_label,
                            "slot": _slot(n.slot), "said_on": _day(n.said)}
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
        hidden = {c.ref: rule_endings(c, [n for n in c.neighbours if n.restricted]) for c in remote}
        return proposals + [
            RouteProposal(item_ref=p.item_ref, route=p.route, reason=p.reason,  # type: ignore[arg-type]
                          duplicate_of=p.duplicate_of,
                          supersedes=tuple(p.supersedes) + (hidden.get(p.item_ref, ()) if p.route == "promote" else ()))
            for p in parsed.proposals
        ]


def _slot(slot: Slot | None) -> dict[str, Any] | None:
    return slot.model_dump() if slot is not None else None


def _day(moment: datetime | None) -> str | None:
    return moment.date().isoformat() if moment is not None else None


# --------------------------------------------------------------------------- factories
def build_extractor(settings: Settings) -> Extractor:
    if settings.extractor == "rules":
        return RuleExtractor()
    if settings.extractor == "openai":
        return LLMExtractor(ChatClient.from_settings(settings), window_segments=settings.llm_window_segments,
                            window_chars=settings.llm_window_chars)
    raise LLMRejected(f"unknown extractor {settings.extractor!r} (rules | openai)", code="misconfigured")


def build_router(settings: Settings) -> Router:
    if settings.router == "rules":
        return RuleRouter()
    if settings.router == "openai":
        return FallbackRouter(ChatClient.from_settings(settings), fall_back=settings.llm_on_failure == "fall_back")
    raise LLMRejected(f"unknown router {settings.router!r} (rules | openai)", code="misconfigured")


class FallbackRouter(LLMRouter):
    """The model router, counting a batch the model could not route (timeout, quota, 5xx, refusal,
    malformed reply) as a failure; with ``fall_back`` (``STRATA_LLM_ON_FAILURE=fall_back``) the rule
    router routes that batch: one model call per batch, so a pass during a model outage waits at
    most ``STRATA_LLM_TIMEOUT_S`` per batch. Without it the error reaches consolidation, which
    retries the batch and then sends it to review."""

    def __init__(self, client: ChatClient, fallback: RuleRouter | None = None, *, fall_back: bool = True) -> None:
        super().__init__(client, fallback)
        self.fall_back = fall_back

    def route(self, candidates: list[RouteCandidate]) -> list[RouteProposal]:
        try:
            return super().route(candidates)
        except (PermanentError, ProviderUnavailable, LLMMalformedReply) as exc:
            metering.record_failure()
            if not self.fall_back:
                raise
            log.warning("model routing failed (%s: %s); routed %d item(s) with the rule router",
                        exc.code, exc.message, len(candidates))
            metering.record_fallback()
            return RuleRouter().route(candidates)


__all__ = [
    "AUTH_MODES", "EXTRACTION_SCHEMA", "RESPONSE_FORMATS", "ChatClient", "FallbackRouter", "LLMExtractor", "LLMMalformedReply", "LLMRejected", "LLMRouter",
    "LLMTimeout", "LLMTruncatedReply", "LLMUnavailable", "Usage", "build_extractor", "build_router",
    "windows",
]

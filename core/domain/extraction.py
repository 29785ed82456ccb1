"""What an extractor sees, what it proposes, and how proposals are bound to the transcript.

An extractor receives an :class:`ExtractionSource` (the owner's uid, the conversation id and the
processed segments -- never the conversation document itself) and returns an
:class:`ExtractionResult`: memory :class:`Candidate` s plus workflow candidates (action items and
goals, which are never memories).

:func:`ground` is the gate between a proposal and storage. Every quote of every memory candidate
must occur in exactly one processed segment after both sides are normalised (case-folded, every run
of punctuation/whitespace collapsed to one space). One unbound or ambiguous quote fails the whole
set with :class:`GroundingError`, so a capture never half-replaces a conversation's memories.
Grounding also decides attribution: a candidate stays about the ``user`` only if every quote was
spoken by the owner; otherwise it becomes ``unknown`` (``third_party`` stays ``third_party``).

Integration conversations carry ``external_data.text`` instead of a transcript; it is split into
deterministic pseudo-segments ``external:0``, ``external:1``, ... (one per line, then per sentence)
that quotes bind to. That text is the owner's own, so its pseudo-segments count as the owner's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, Literal

from core.domain.records import QuoteRef, Sensitivity
from core.domain.slots import Slot
from core.errors import GroundingError

MemoryKind = Literal["fact", "preference", "relationship", "plan"]
Subject = Literal["user", "third_party", "unknown"]
WorkflowKind = Literal["action_item", "goal"]

MEMORY_KINDS: tuple[str, ...] = ("fact", "preference", "relationship", "plan")
SUBJECTS: tuple[str, ...] = ("user", "third_party", "unknown")
WORKFLOW_KINDS: tuple[str, ...] = ("action_item", "goal")
# Topic categories an extractor may propose; the record layer maps them to the primary categories.
CATEGORIES: tuple[str, ...] = (
    "core", "hobbies", "lifestyle", "interests", "habits", "work", "skills", "learnings", "other",
)
EXTERNAL_SEGMENT_PREFIX = "external:"


# --------------------------------------------------------------------------- inputs
@dataclass(frozen=True)
class Segment:
    id: str
    text: str
    speaker: str = ""
    is_user: bool = False


@dataclass(frozen=True)
class ExtractionSource:
    uid: str
    conversation_id: str
    segments: tuple[Segment, ...] = ()
    external_text: str | None = None
    language: str = "en"
    session_date: date | None = None  # the day the conversation took place ("last Tuesday" resolves against it)


# --------------------------------------------------------------------------- outputs
@dataclass(frozen=True)
class Candidate:
    """A proposed memory. ``content`` is written about its subject ("User ...", "Tom ...")."""

    content: str
    kind: MemoryKind
    category: str
    subject: Subject
    subject_label: str | None
    quotes: tuple[str, ...]
    sensitivity: frozenset[str] = field(default_factory=frozenset)
    slot: Slot | None = None  # the declared attribute it states, when the extractor read one

    def __post_init__(self) -> None:
        if self.kind not in MEMORY_KINDS:
            raise ValueError(f"unknown memory kind {self.kind!r}")
        if self.subject not in SUBJECTS:
            raise ValueError(f"unknown subject {self.subject!r}")
        if not isinstance(self.quotes, tuple) or not isinstance(self.sensitivity, frozenset):
            raise TypeError("quotes must be a tuple and sensitivity a frozenset")


@dataclass(frozen=True)
class WorkflowCandidate:
    """An action item or goal; it goes to its workflow collection, never into memories."""

    kind: WorkflowKind
    description: str
    quote: str
    due: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in WORKFLOW_KINDS:
            raise ValueError(f"unknown workflow kind {self.kind!r}")


@dataclass(frozen=True)
class ExtractionResult:
    memories: tuple[Candidate, ...]
    action_items: tuple[WorkflowCandidate, ...]
    goals: tuple[WorkflowCandidate, ...]
    extractor_id: str
    extractor_version: str


@dataclass(frozen=True)
class GroundedCandidate:
    candidate: Candidate
    quote_refs: tuple[QuoteRef, ...]
    subject: Subject


# --------------------------------------------------------------------------- sources
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def normalize_text(text: str) -> str:
    """Case-fold and collapse every run of punctuation/whitespace to one space."""
    return _NON_WORD.sub(" ", (text or "").casefold()).strip()


def split_external_text(text: str) -> tuple[Segment, ...]:
    """Deterministic pseudo-segments of integration text: one per non-empty line, then sentence."""
    pieces: list[str] = []
    for line in (text or "").splitlines():
        for sentence in _SENTENCE_END.split(line.strip()):
            if sentence.strip():
                pieces.append(sentence.strip())
    return tuple(
        Segment(id=f"{EXTERNAL_SEGMENT_PREFIX}{index}", text=piece, speaker="external", is_user=True)
        for index, piece in enumerate(pieces)
    )


def source_segments(source: ExtractionSource) -> tuple[Segment, ...]:
    """The segments quotes bind to: external pseudo-segments when there is external text."""
    if source.external_text and source.external_text.strip():
        return split_external_text(source.external_text)
    return source.segments


def _session_date(doc: Mapping[str, Any]) -> date | None:
    """The day the conversation started (``started_at``, as apps write it: a timestamp or ISO text).
    ``created_at`` is not used: it is when the document was written, which a backfill sets to now."""
    for key in ("started_at",):
        value = doc.get(key)
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        if isinstance(value, str) and value.strip():
            try:
                return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
            except ValueError:
                continue
    return None


def source_from_conversation(uid: str, conversation_id: str, doc: Mapping[str, Any]) -> ExtractionSource:
    """Build the extraction input from a conversation document as apps write it.

    Only the processed segments (or the integration text) are copied; the returned source holds no
    reference to the document, its structured summary or app results.
    """
    external = doc.get("external_data") or {}
    external_text = external.get("text") if isinstance(external, Mapping) else None
    external_text = str(external_text) if external_text and str(external_text).strip() else None
    segments: list[Segment] = []
    if external_text is None:
        for index, raw in enumerate(doc.get("transcript_segments") or ()):
            if not isinstance(raw, Mapping):
                continue
            segment_id = str(raw.get("id") or f"seg:{index}")
            segments.append(Segment(
                id=segment_id,
                text=str(raw.get("text") or ""),
                speaker=str(raw.get("speaker") or ""),
                is_user=bool(raw.get("is_user")),
            ))
    return ExtractionSource(
        uid=uid,
        conversation_id=conversation_id,
        segments=tuple(segments),
        external_text=external_text,
        language=str(doc.get("language") or "en"),
        session_date=_session_date(doc),
    )


# --------------------------------------------------------------------------- grounding
def bind_quote(segments: Sequence[Segment], quote: str) -> Segment:
    """The one segment whose normalised text contains the normalised quote, or GroundingError."""
    needle = normalize_text(quote)
    if not needle:
        raise GroundingError("an empty quote cannot be grounded")
    padded = f" {needle} "
    matches = [s for s in segments if padded in f" {normalize_text(s.text)} "]
    if not matches:
        raise GroundingError(f"quote not found in any segment: {quote[:80]!r}")
    if len(matches) > 1:
        ids = ", ".join(s.id for s in matches[:5])
        raise GroundingError(f"quote occurs in {len(matches)} segments ({ids}): {quote[:80]!r}")
    return matches[0]


def searchable(text: str, sensitivity: Sensitivity) -> str:
    """A segment's text as its quote ref keeps it for vector search: empty when any of it is
    restricted or a secret (a restricted word never reaches an index, even as a vector)."""
    return "" if sensitivity.label_sensitivity(text) else text


def ground(source: ExtractionSource, result: ExtractionResult, *,
           sensitivity: Sensitivity) -> tuple[GroundedCandidate, ...]:
    """Bind every quote of every memory candidate to exactly one segment, or fail the whole set.

    Also refuses (as a grounding failure) a candidate that carries no quote, or whose content or
    quotes disclose a secret: extractors must have dropped those already.
    """
    segments = source_segments(source)
    grounded: list[GroundedCandidate] = []
    for candidate in result.memories:
        if not candidate.quotes:
            raise GroundingError(f"candidate has no quote: {candidate.content[:80]!r}")
        if sensitivity.contains_secret(candidate.content) or any(map(sensitivity.contains_secret, candidate.quotes)):
            raise GroundingError("candidate discloses a secret; extractors must drop such candidates")
        refs: list[QuoteRef] = []
        owner_only = True
        for quote in candidate.quotes:
            segment = bind_quote(segments, quote)
            refs.append(QuoteRef(segment_id=segment.id, quote=quote, segment=searchable(segment.text, sensitivity)))
            owner_only = owner_only and segment.is_user
        subject: Subject = candidate.subject
        if subject == "user" and not owner_only:
            subject = "unknown"
        grounded.append(GroundedCandidate(candidate=candidate, quote_refs=tuple(refs), subject=subject))
    return tuple(grounded)


def ground_then_drop_secrets(source: ExtractionSource, result: ExtractionResult, *,
                             sensitivity: Sensitivity) -> tuple[tuple[GroundedCandidate, ...], int]:
    """Capture's grounding: every quote of every memory candidate, a secret-bearing one too, must
    bind to exactly one segment (else the whole set fails, as for any candidate); then the candidates
    that disclose a secret are dropped. Returns the grounded rest and how many were dropped, so an
    extraction of nothing but secrets is told apart from a genuinely empty one."""
    segments = source_segments(source)
    for candidate in result.memories:
        secret = sensitivity.contains_secret(candidate.content) or any(map(sensitivity.contains_secret, candidate.quotes))
        if not candidate.quotes:
            raise GroundingError("candidate has no quote" + ("" if secret else f": {candidate.content[:80]!r}"))
        for quote in candidate.quotes:
            try:
                bind_quote(segments, quote)
            except GroundingError:
                if not secret:
                    raise
                # The failure is recorded with the capture: it must not carry the secret.
                raise GroundingError("a candidate that discloses a secret has a quote bound to no single "
                                     "segment") from None
    clean = drop_secret_candidates(result, sensitivity=sensitivity)
    return ground(source, clean, sensitivity=sensitivity), len(result.memories) - len(clean.memories)


def drop_secret_candidates(result: ExtractionResult, *, sensitivity: Sensitivity) -> ExtractionResult:
    """The same result without any candidate whose text or quotes disclose a secret."""

    def clean(texts: Sequence[str]) -> bool:
        return not any(map(sensitivity.contains_secret, texts))

    return replace(
        result,
        memories=tuple(c for c in result.memories if clean((c.content, *c.quotes))),
        action_items=tuple(w for w in result.action_items if clean((w.description, w.quote))),
        goals=tuple(w for w in result.goals if clean((w.description, w.quote))),
    )


__all__ = [
    "CATEGORIES", "EXTERNAL_SEGMENT_PREFIX", "MEMORY_KINDS", "SUBJECTS", "WORKFLOW_KINDS",
    "Candidate", "ExtractionResult", "ExtractionSource", "GroundedCandidate",
    "GroundingError", "QuoteRef", "Segment", "WorkflowCandidate",
    "bind_quote", "drop_secret_candidates", "ground", "ground_then_drop_secrets", "normalize_text",
    "source_from_conversation", "source_segments", "split_external_text",
]

"""Clauses and quotes: a segment split into clauses (each inside its sentence), the drafts that
cite them and the narrowest quote that binds to exactly one segment."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from core.adapters.rules.sensitivity import contains_secret
from core.domain.extraction import GroundingError, MemoryKind, Segment, Subject, bind_quote

_I = re.IGNORECASE


# --------------------------------------------------------------------------- clause splitting
_SENTENCE_BREAK = re.compile(r"[.!?;:…]+(?=\s|$)")
_CLAUSE_BREAK = re.compile(
    r",\s*(?:(?:and|but|so|although|though|because|plus|or)\b\s*)?"
    r"|\s+(?:and|but|so)\s+(?=(?:I|I'm|I've|I'll|I'd|my|he|she|he's|she's|we)\b)"
    r"|\s+[-–—]+\s+"
)
_FILLER = re.compile(
    r"^(?:oh|well|so|and|but|also|anyway|by the way|btw|actually|right|yeah|yes|yep|okay|ok|um+|uh+|"
    r"like|honestly|basically|although|though|plus|then|and then|you know|i mean|still|see|now|"
    r"to be honest|fun fact|just so you know|oh and)\b[,\s]*",
    _I,
)
_REPORTED = re.compile(
    r"^(?:the|my)\s+(?P<who>doctor|dentist|physio|physiotherapist|therapist|cardiologist|gp|nurse|"
    r"dermatologist|optician|vet)\s+(?:said|says|told me|thinks|confirmed)\s+(?:that\s+)?",
    _I,
)


_JOINT_SUBJECT = re.compile(r"^(?:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?|[Mm]y\s+[a-z]+)$")


@dataclass(frozen=True)
class _Clause:
    segment: Segment
    start: int
    end: int
    sentence: tuple[int, int]

    @property
    def text(self) -> str:
        return self.segment.text[self.start:self.end]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and (text[start].isspace() or text[start] in ",;:-–—\"'“”(){}[]"):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",;:-–—.!?…\"'“”(){}[]"):
        end -= 1
    return start, end


def _clauses(segment: Segment) -> Iterator[_Clause]:
    text = segment.text
    cursor = 0
    sentence_spans: list[tuple[int, int]] = []
    for match in _SENTENCE_BREAK.finditer(text):
        sentence_spans.append((cursor, match.end()))
        cursor = match.end()
    sentence_spans.append((cursor, len(text)))
    for s_start, s_end in sentence_spans:
        sentence = _trimmed(text, s_start, s_end)
        if sentence[0] >= sentence[1]:
            continue
        piece_start = sentence[0]
        breaks = list(_CLAUSE_BREAK.finditer(text, sentence[0], sentence[1]))
        # "Lena and I went ...", "My brother and I ...": a bare subject before "and I" is not a clause.
        breaks = [m for m in breaks if not (m.group().strip() == "and" and m.start() > piece_start and
                                            _JOINT_SUBJECT.match(text[piece_start:m.start()].strip()) and
                                            re.match(r"I\b", text[m.end():]))]
        bounds = [(m.start(), m.end()) for m in breaks] + [(sentence[1], sentence[1])]
        for b_start, b_end in bounds:
            start, end = _trimmed(text, piece_start, b_start)
            # Strip leading fillers; the quote then starts at the meaningful words.
            while start < end:
                filler = _FILLER.match(text[start:end])
                if not filler or not filler.end():
                    break
                start += filler.end()
            start, end = _trimmed(text, start, end)
            if end > start:
                yield _Clause(segment, start, end, sentence)
            piece_start = b_end


@dataclass
class _Draft:
    content: str
    kind: MemoryKind
    subject: Subject
    subject_label: str | None
    quotes: tuple[tuple[_Clause, int, int], ...]  # (clause, start, end) spans in the clause's segment
    category: str | None = None  # None: derived from the content's topic


def _sentence_around(segment: Segment, index: int) -> tuple[_Clause, int, int]:
    for clause in _clauses(segment):
        if clause.sentence[0] <= index < clause.sentence[1]:
            start, end = _trimmed(segment.text, *clause.sentence)
            return clause, start, end
    start, end = _trimmed(segment.text, 0, len(segment.text))
    return _Clause(segment, start, end, (start, end)), start, end


def _unique_quote(segments: tuple[Segment, ...], clause: _Clause, start: int, end: int) -> str | None:
    """The narrowest of clause / sentence / segment text that binds to exactly one segment."""
    text = clause.segment.text
    sentence = _trimmed(text, *clause.sentence)
    options = (text[start:end], text[min(start, sentence[0]):max(end, sentence[1])], text.strip())
    for option in options:
        if contains_secret(option):
            return None  # widening must never pull a secret into a quote
        try:
            if bind_quote(segments, option).id == clause.segment.id:
                return option
        except GroundingError:
            continue
    return None

"""Conversations in the LoCoMo format, read tolerantly, and turned into Strata conversation docs.

A sample is ``{"sample_id", "conversation": {"speaker_a", "speaker_b", "session_N": [turns],
"session_N_date_time"}, "observation": {"session_N_observation": {speaker: [[fact, dia_id], ...]}},
"qa": [{"question", "answer", "evidence": ["D1:3"], "category"}]}``; a turn is ``{"speaker",
"dia_id", "text"}``. The real data set has quirks this reader accepts: evidence written as
``"D8:6; D9:17"``, observation ids given as a list, questions with ``adversarial_answer`` instead of
``answer``, image turns with a ``blip_caption``, and a top-level list or a single sample.

Mapping (see docs/benchmarks.md): each session becomes one completed conversation whose transcript
segments keep the turn's ``dia_id`` as their segment id and the turn's speaker name as their
``speaker`` (LoCoMo names who spoke, as an app with speaker identification would); the *owner* (the
user whose memories are built) is ``speaker_a`` unless told otherwise, and only the owner's turns are
``is_user``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int


@dataclass(frozen=True)
class Session:
    index: int
    date: str | None
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Observation:
    fact: str
    dia_ids: tuple[str, ...]
    speaker: str
    session: int


@dataclass(frozen=True)
class Question:
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: Any = None


@dataclass
class Sample:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[Session] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


def dia_ids(value: Any) -> tuple[str, ...]:
    """Every ``D<session>:<turn>`` id in a string, or a (nested) list of strings."""
    if isinstance(value, str):
        return tuple(_DIA_ID.findall(value))
    if isinstance(value, (list, tuple)):
        out: list[str] = []
        for part in value:
            out.extend(i for i in dia_ids(part) if i not in out)
        return tuple(out)
    return ()


def _turn_text(raw: dict[str, Any]) -> str:
    text = str(raw.get("text") or "").strip()
    caption = raw.get("blip_caption")
    if caption and not text:
        text = f"[shares a photo: {caption}]"
    return text


def _sessions(conversation: dict[str, Any]) -> list[Session]:
    sessions = []
    for key, value in conversation.items():
        match = _SESSION_KEY.match(key)
        if not match or not isinstance(value, list):
            continue
        index = int(match.group(1))
        turns = tuple(
            Turn(dia_id=str(raw["dia_id"]), speaker=str(raw.get("speaker") or ""), text=_turn_text(raw), session=index)
            for raw in value if isinstance(raw, dict) and raw.get("dia_id") and _turn_text(raw)
        )
        date = conversation.get(f"{key}_date_time")
        sessions.append(Session(index=index, date=str(date) if date else None, turns=turns))
    return sorted(sessions, key=lambda s: s.index)


def _observations(raw: Any) -> list[Observation]:
    out: list[Observation] = []
    if not isinstance(raw, dict):
        return out
    for key, per_speaker in raw.items():
        match = re.search(r"session_(\d+)", key)
        if not match or not isinstance(per_speaker, dict):
            continue
        for speaker, facts in per_speaker.items():
            for entry in facts or []:
                if isinstance(entry, (list, tuple)) and entry:
                    fact, refs = str(entry[0]), dia_ids(list(entry[1:]))
                elif isinstance(entry, dict):
                    fact, refs = str(entry.get("fact") or entry.get("text") or ""), dia_ids(
                        entry.get("dia_id") or entry.get("evidence") or [])
                else:
                    continue
                if fact and refs:
                    out.append(Observation(fact=fact, dia_ids=refs, speaker=str(speaker), session=int(match.group(1))))
    return out


def _questions(raw: Any) -> list[Question]:
    out = []
    for entry in raw or []:
        if not isinstance(entry, dict) or not entry.get("question"):
            continue
        answer = entry.get("answer", entry.get("adversarial_answer", ""))
        out.append(Question(question=str(entry["question"]), answer=str(answer), evidence=dia_ids(entry.get("evidence")),
                            category=entry.get("category")))
    return out


def parse_sample(raw: dict[str, Any], index: int = 0) -> Sample:
    conversation = raw.get("conversation") if isinstance(raw.get("conversation"), dict) else raw
    if not isinstance(conversation, dict):
        raise ValueError(f"sample {index} has no conversation")
    sessions = _sessions(conversation)
    if not sessions:
        raise ValueError(f"sample {index} has no session_N turn lists")
    speakers = list(dict.fromkeys(t.speaker for s in sessions for t in s.turns))
    speaker_a = str(conversation.get("speaker_a") or (speakers[0] if speakers else "A"))
    speaker_b = str(conversation.get("speaker_b") or next((s for s in speakers if s != speaker_a), "B"))
    return Sample(sample_id=str(raw.get("sample_id") or f"sample-{index}"), speaker_a=speaker_a, speaker_b=speaker_b,
                  sessions=sessions, observations=_observations(raw.get("observation")),
                  questions=_questions(raw.get("qa")))


def load(path: str | Path) -> list[Sample]:
    data = json.loads(Path(path).read_text())
    if isinstance(data, dict):
        data = data.get("samples") if isinstance(data.get("samples"), list) else [data]
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a list of LoCoMo samples")
    return [parse_sample(raw, i) for i, raw in enumerate(data) if isinstance(raw, dict)]


DATA_DIR = Path(__file__).resolve().parent / "data"
# The development set first (tuned on), then the older files (reported, never tuned on).
DEFAULT_FILES = ("dev_set.json", "locomo_sample.json", "locomo_heldout.json", "locomo_heldout2.json")


def default_sample_path() -> Path:
    return DATA_DIR / "locomo_sample.json"


def default_paths() -> list[Path]:
    """Every shipped recall file that exists, the development set first."""
    return [DATA_DIR / name for name in DEFAULT_FILES if (DATA_DIR / name).exists()]


def session_start(session: Session) -> datetime | None:
    """The session's ``date_time`` ("7:40 pm on 12 January, 2025") as a UTC timestamp, if it parses."""
    raw = " ".join((session.date or "").replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%d %B %Y", "%B %d %Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(raw, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def conversation_doc(sample: Sample, session: Session, owner: str) -> dict[str, Any]:
    """A completed conversation as an app writes it; segment ids are the turns' dia_ids and each
    segment's speaker is the turn's speaker name (``speaker_id`` 0 for the owner, 1 for the others)."""
    segments = []
    for position, turn in enumerate(session.turns):
        is_owner = turn.speaker == owner
        segments.append({"id": turn.dia_id, "text": turn.text, "speaker": turn.speaker,
                         "speaker_id": 0 if is_owner else 1, "is_user": is_owner,
                         "start": float(position * 6), "end": float(position * 6 + 5)})
    started = session_start(session)
    return {"status": "completed", "source": "omi", "language": "en", "discarded": False,
            **({"started_at": started} if started else {}),
            "structured": {"title": f"{sample.sample_id} session {session.index}", "overview": session.date or "",
                           "action_items": [], "events": [], "category": "personal"},
            "transcript_segments": segments}

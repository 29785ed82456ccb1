"""Extraction coverage of the rule extractor on LoCoMo-format files, without a stack.

Pure: each session becomes an :class:`ExtractionSource` (segment ids = dia_ids, owner =
``speaker_a``, only the owner's turns ``is_user``), the rule extractor runs on it, and every
candidate is grounded exactly as capture grounds it. A gold ``observation`` counts as covered when
one of its turns is cited by some grounded candidate's quote; an *evidence turn* (a turn some
question cites as its evidence) counts as covered when some grounded candidate's quote cites it --
the ceiling of what any search over the memories can reach. These are the measures
``strata bench recall`` reports as ``extraction_coverage``, minus consolidation.

    python -m strata_dev.bench.coverage [PATH ...] [--verbose]

Prints one JSON object per file; ``--verbose`` also lists the owner's uncovered facts and evidence turns.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.adapters.rules import sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.domain.extraction import ExtractionSource, Segment, ground
from strata_dev.bench import locomo


def session_source(sample: locomo.Sample, session: locomo.Session, owner: str) -> ExtractionSource:
    segments = tuple(Segment(id=t.dia_id, text=t.text, speaker=t.speaker, is_user=t.speaker == owner)
                     for t in session.turns)
    started = locomo.session_start(session)
    return ExtractionSource(uid="bench", conversation_id=f"{sample.sample_id}-session-{session.index}",
                            segments=segments, session_date=started.date() if started else None)


@dataclass
class Tally:
    """Gold observations counted against the turns the memories cite, overall and the owner's."""

    gold: int = 0
    gold_owner: int = 0
    hit_all: int = 0
    hit_owner: int = 0
    missed: list[str] = field(default_factory=list)  # the owner's uncovered facts
    evidence: int = 0  # distinct evidence turns of the questions, per sample
    evidence_owner: int = 0  # ... spoken by the owner
    evidence_hit: int = 0
    evidence_owner_hit: int = 0
    missed_turns: list[str] = field(default_factory=list)  # the owner's uncovered evidence turns

    def add(self, sample: locomo.Sample, cited: set[str], owner: str) -> None:
        turns = {t.dia_id: t for t in sample.turns()}
        wanted = sorted({e for q in sample.questions for e in q.evidence if e in turns})
        for dia_id in wanted:
            hit = dia_id in cited
            self.evidence += 1
            self.evidence_hit += hit
            if turns[dia_id].speaker == owner:
                self.evidence_owner += 1
                self.evidence_owner_hit += hit
                if not hit:
                    self.missed_turns.append(f"{sample.sample_id} {dia_id}: {turns[dia_id].text}")
        for obs in sample.observations:
            hit = bool(cited & set(obs.dia_ids))
            self.gold += 1
            self.hit_all += hit
            if obs.speaker == owner:
                self.gold_owner += 1
                self.hit_owner += hit
                if not hit:
                    self.missed.append(f"{'/'.join(obs.dia_ids)}: {obs.fact}")

    def evidence_figures(self) -> dict[str, Any]:
        return {"evidence_turns": self.evidence, "evidence_coverage": _ratio(self.evidence_hit, self.evidence),
                "owner_evidence_turns": self.evidence_owner,
                "owner_evidence_coverage": _ratio(self.evidence_owner_hit, self.evidence_owner)}


def _ratio(hit: int, total: int) -> float | None:
    return round(hit / total, 3) if total else None


def coverage(path: str | Path, verbose: bool = False) -> dict[str, Any]:
    extractor = RuleExtractor()
    tally = Tally()
    memories = 0
    for sample in locomo.load(path):
        owner = sample.speaker_a
        cited: set[str] = set()
        for session in sample.sessions:
            source = session_source(sample, session, owner)
            grounded = ground(source, extractor.extract(source), sensitivity=sensitivity)  # raises if the extractor broke its promise
            memories += len(grounded)
            cited.update(ref.segment_id for item in grounded for ref in item.quote_refs)
        tally.add(sample, cited, owner)
    out: dict[str, Any] = {
        "data": str(path), "memories": memories, "observations": tally.gold, "owner_observations": tally.gold_owner,
        "coverage_all": round(tally.hit_all / tally.gold, 3) if tally.gold else None,
        "coverage_owner": round(tally.hit_owner / tally.gold_owner, 3) if tally.gold_owner else None,
        **tally.evidence_figures(),
    }
    if verbose:
        out["owner_missed"] = tally.missed
        out["owner_evidence_missed"] = tally.missed_turns
    return out


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    paths = [a for a in argv if not a.startswith("--")] or [str(p) for p in locomo.default_paths()]
    for path in paths:
        print(json.dumps(coverage(path, verbose), indent=1 if verbose else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Extraction coverage of the rule extractor on LoCoMo-format files, without a stack.

Pure: each session becomes an :class:`ExtractionSource` (segment ids = dia_ids, owner =
``speaker_a``, only the owner's turns ``is_user``), the rule extractor runs on it, and every
candidate is grounded exactly as capture grounds it. A gold ``observation`` counts as covered when
one of its turns is cited by some grounded candidate's quote. This is the same measure
``strata bench recall`` reports as ``extraction_coverage``, minus consolidation.

    python -m strata_dev.bench.coverage [PATH ...] [--verbose]

Prints one JSON object per file; ``--verbose`` also lists the owner's uncovered facts.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.domain.extraction import ExtractionSource, Segment, ground
from core.domain.rule_extractor import RuleExtractor
from strata_dev.bench import locomo


def session_source(sample: locomo.Sample, session: locomo.Session, owner: str) -> ExtractionSource:
    segments = tuple(Segment(id=t.dia_id, text=t.text, speaker=t.speaker, is_user=t.speaker == owner)
                     for t in session.turns)
    return ExtractionSource(uid="bench", conversation_id=f"{sample.sample_id}-session-{session.index}",
                            segments=segments)


@dataclass
class Tally:
    """Gold observations counted against the turns the memories cite, overall and the owner's."""

    gold: int = 0
    gold_owner: int = 0
    hit_all: int = 0
    hit_owner: int = 0
    missed: list[str] = field(default_factory=list)  # the owner's uncovered facts

    def add(self, sample: locomo.Sample, cited: set[str], owner: str) -> None:
        for obs in sample.observations:
            hit = bool(cited & set(obs.dia_ids))
            self.gold += 1
            self.hit_all += hit
            if obs.speaker == owner:
                self.gold_owner += 1
                self.hit_owner += hit
                if not hit:
                    self.missed.append(f"{'/'.join(obs.dia_ids)}: {obs.fact}")


def coverage(path: str | Path, verbose: bool = False) -> dict[str, Any]:
    extractor = RuleExtractor()
    tally = Tally()
    memories = 0
    for sample in locomo.load(path):
        owner = sample.speaker_a
        cited: set[str] = set()
        for session in sample.sessions:
            source = session_source(sample, session, owner)
            grounded = ground(source, extractor.extract(source))  # raises if the extractor broke its promise
            memories += len(grounded)
            cited.update(ref.segment_id for item in grounded for ref in item.quote_refs)
        tally.add(sample, cited, owner)
    out: dict[str, Any] = {
        "data": str(path), "memories": memories, "observations": tally.gold, "owner_observations": tally.gold_owner,
        "coverage_all": round(tally.hit_all / tally.gold, 3) if tally.gold else None,
        "coverage_owner": round(tally.hit_owner / tally.gold_owner, 3) if tally.gold_owner else None,
    }
    if verbose:
        out["owner_missed"] = tally.missed
    return out


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    shipped = locomo.default_sample_path()
    paths = [a for a in argv if not a.startswith("--")] or [
        str(shipped), str(shipped.with_name("locomo_heldout.json")), str(shipped.with_name("locomo_heldout2.json"))]
    for path in paths:
        print(json.dumps(coverage(path, verbose), indent=1 if verbose else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

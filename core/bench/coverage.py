"""Extraction coverage of the rule extractor on LoCoMo-format files, without a stack.

Pure: each session becomes an :class:`ExtractionSource` (segment ids = dia_ids, owner =
``speaker_a``, only the owner's turns ``is_user``), the rule extractor runs on it, and every
candidate is grounded exactly as capture grounds it. A gold ``observation`` counts as covered when
one of its turns is cited by some grounded candidate's quote. This is the same measure
``strata bench recall`` reports as ``extraction_coverage``, minus consolidation.

    python -m core.bench.coverage [PATH ...] [--verbose]

Prints one JSON object per file; ``--verbose`` also lists the owner's uncovered facts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from core.bench import locomo
from core.domain.extraction import ExtractionSource, Segment, ground
from core.domain.rule_extractor import RuleExtractor


def session_source(sample: locomo.Sample, session: locomo.Session, owner: str) -> ExtractionSource:
    segments = tuple(Segment(id=t.dia_id, text=t.text, speaker=t.speaker, is_user=t.speaker == owner)
                     for t in session.turns)
    return ExtractionSource(uid="bench", conversation_id=f"{sample.sample_id}-session-{session.index}",
                            segments=segments)


def coverage(path: str | Path, verbose: bool = False) -> dict[str, Any]:
    extractor = RuleExtractor()
    gold = gold_owner = hit_all = hit_owner = memories = 0
    missed: list[str] = []
    for sample in locomo.load(path):
        owner = sample.speaker_a
        cited: set[str] = set()
        for session in sample.sessions:
            source = session_source(sample, session, owner)
            grounded = ground(source, extractor.extract(source))  # raises if the extractor broke its promise
            memories += len(grounded)
            cited.update(ref.segment_id for item in grounded for ref in item.quote_refs)
        for obs in sample.observations:
            hit = bool(cited & set(obs.dia_ids))
            gold += 1
            hit_all += hit
            if obs.speaker == owner:
                gold_owner += 1
                hit_owner += hit
                if not hit:
                    missed.append(f"{'/'.join(obs.dia_ids)}: {obs.fact}")
    out: dict[str, Any] = {
        "data": str(path), "memories": memories, "observations": gold, "owner_observations": gold_owner,
        "coverage_all": round(hit_all / gold, 3) if gold else None,
        "coverage_owner": round(hit_owner / gold_owner, 3) if gold_owner else None,
    }
    if verbose:
        out["owner_missed"] = missed
    return out


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    paths = [a for a in argv if not a.startswith("--")] or [
        str(locomo.default_sample_path()), str(locomo.default_sample_path().with_name("locomo_heldout.json"))]
    for path in paths:
        print(json.dumps(coverage(path, verbose), indent=1 if verbose else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

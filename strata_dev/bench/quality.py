"""``strata bench quality``: are the memories a path keeps worth keeping? (issue 43)

Each selected session runs through the project's real capture and consolidation services in
process, on the in-memory fake ports the unit tests use (``tests/unit/fakes``: the in-memory store,
indexes, clock), one fresh user per session, once per *path*:

- ``rules``: the rule extractor and the rule router (the offline and local default);
- ``model``: the LLM extractor and router pointed at an OpenAI-compatible server given by
  ``--replay-url`` (the recorded-replies server, :mod:`strata_dev.localstack.model_replay`); without one
  the path is skipped with its reason. A capture the model fails is retried, then falls back to the
  rules as deployed; ``fell_back_sessions`` counts those (their memories are the rules').

A session is a LoCoMo session seen from one of its two speakers as the owner (``--data``, default the
shared development split when present) or one of the repository's sample conversations. After capture
the clock moves past every Short-term deadline and consolidation passes run until nothing is pending,
so what is left is what a user would find: the *visible* memories (active, processed Short-term and
Long-term, the default read).

Reported per path: visible memories, the Long-term share of them, visible memories per session and,
from the recorded blind verdicts (``data/quality_verdicts*.json``), the judged count, precision (good
/ judged) and good memories per session (judged good / sessions), overall and per judge; and the
memories no verdict covers. ``--packet FILE`` writes those unjudged memories as a judging packet:
per session the transcript reference and an anonymised (a hash key, not the path that made it),
shuffled list of memories; ``--record FILE --judge NAME`` turns a judge's answers to the packet into a
verdict file (``--not-blind`` for a judge who knew which path made what: such verdicts are reported
under ``by_judge`` only, never in the headline figures, and the packet still asks for them).

A verdict is keyed by :func:`key` (a hash of the session id and the memory text) and holds only that
key, the four answers (faithful, attributed, durable, self_contained), ``good`` (all four) and who
judged (and ``blind``): never a memory's or a transcript's text, so no LoCoMo text enters the
repository.

Sessions (``--split``): ``dev`` is tuned on; ``heldout`` is a disjoint set whose output is not read
while changing the rules (docs/benchmarks.md, "Quality").
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from strata_dev.bench import locomo, stats

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(__file__).resolve().parent / "data"
# The LoCoMo file is never in the repository (its licence): --data names it, or STRATA_LOCOMO_DATA.
SHARED_SPLIT = Path(os.environ.get("STRATA_LOCOMO_DATA", "")) if os.environ.get("STRATA_LOCOMO_DATA") else None
PATHS = ("rules", "model")
QUESTIONS = ("faithful", "attributed", "durable", "self_contained")

# (sample id, session indexes): each session once for each of its two speakers as the owner.
SPLITS: dict[str, tuple[tuple[str, tuple[int, ...]], ...]] = {
    "dev": (("conv-44", (1, 2, 3, 4)), ("conv-47", (1, 2, 3, 4)), ("conv-48", (1, 2, 3, 4))),
    "heldout": (("conv-49", (1, 2, 3, 4, 5, 6)), ("conv-50", (1, 2, 3, 4, 5, 6))),
}
UID = "quality"


@dataclass(frozen=True)
class Session:
    """One conversation seen by one owner: ``id`` is stable (verdicts are keyed by it)."""

    id: str
    ref: str  # where a judge finds the transcript
    owner: str
    doc: dict[str, Any]


@dataclass(frozen=True)
class Memory:
    session: str
    content: str
    layer: str
    kind: str
    subject: str

    @property
    def key(self) -> str:
        return key(self.session, self.content)


def key(session_id: str, content: str) -> str:
    """The verdict key of a memory: its session and exact text, hashed (the text is not stored)."""
    return hashlib.sha256(f"{session_id}\n{content}".encode()).hexdigest()[:20]


# --------------------------------------------------------------------------- sessions
def locomo_sessions(path: Path, split: str) -> list[Session]:
    wanted = dict(SPLITS[split])
    out: list[Session] = []
    for sample in locomo.load(path):
        indexes = wanted.get(sample.sample_id)
        if indexes is None:
            continue
        for session in sample.sessions:
            if session.index not in indexes:
                continue
            for owner in (sample.speaker_a, sample.speaker_b):
                out.append(Session(
                    id=f"{sample.sample_id}/s{session.index}/{owner}",
                    ref=f"{path} {sample.sample_id} session_{session.index} ({session.date}), owner {owner}",
                    owner=owner, doc=locomo.conversation_doc(sample, session, owner)))
    return out


def sample_sessions() -> list[Session]:
    from strata_dev import samples

    out = []
    for name, doc in samples.load_samples().items():
        doc = {k: v for k, v in doc.items() if k != "id"}
        out.append(Session(id=f"sample/{name}", ref=f"strata_dev/data/conversations/{name}.json", owner="the user",
                           doc=doc))
    return out


def select(data: str | None, split: str, with_samples: bool = True) -> tuple[list[Session], str | None]:
    """The sessions to run, and the data file used (None when there is none)."""
    path = Path(data) if data else (SHARED_SPLIT if SHARED_SPLIT is not None and SHARED_SPLIT.exists() else None)
    sessions = locomo_sessions(path, split) if path is not None else []
    if with_samples and split == "dev":
        sessions += sample_sessions()
    return sessions, str(path) if path else None


# --------------------------------------------------------------------------- running a path
def _world(path: str, replay_url: str | None) -> Any:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.unit.fakes.ports import world

    if path == "rules":
        return world()
    # The model path: the project's own LLM extractor and router, built from settings as a
    # deployment builds them, against the recorded-replies server (an OpenAI-compatible endpoint).
    w = world(extractor="openai", router="openai", llm_base_url=replay_url or "", llm_model="replay",
              llm_api_key="replay")
    w.ctx._overrides.pop("extractor", None)
    w.ctx._overrides.pop("router", None)
    return w


def run_session(path: str, session: Session, replay_url: str | None = None,
                fell_back: list[str] | None = None) -> list[Memory]:
    """The visible memories ``session`` leaves for its owner through capture and consolidation (on
    the model path a capture the model fails is retried, then falls back to the rules as deployed:
    its session id is added to ``fell_back``)."""
    from core.domain import paths
    from core.domain.records import MemoryItem
    from core.domain.visibility import collapse_lineage, is_default_visible
    from core.services import capture, consolidation

    w = _world(path, replay_url)
    started = session.doc.get("started_at")
    if isinstance(started, str):  # ISO text, as the sample conversations carry it
        started = datetime.fromisoformat(started.replace("Z", "+00:00"))
    if started is not None:
        w.clock.current = started + timedelta(hours=1)
    cid = "c-" + hashlib.sha256(session.id.encode()).hexdigest()[:12]
    w.store.put(paths.doc(UID, "conversations", cid), session.doc)
    for _ in range(1 + w.ctx.settings.llm_max_attempts):  # redelivered until captured, as the trigger is
        result = capture.capture_conversation(w.ctx, UID, cid, session.doc)
        if not result.retry:
            break
        w.clock.advance(minutes=5)
    if fell_back is not None:
        marker = w.store.get(paths.doc(UID, "capture_runs", cid)) or {}
        if marker.get("fell_back"):
            fell_back.append(session.id)
    for _ in range(2):  # a pass at capture time, then one after every Short-term deadline
        for _ in range(50):
            summary = consolidation.run_pass(w.ctx, UID)
            if not summary.get("overflow"):
                break
        w.clock.advance(days=60)
    items = [MemoryItem.from_store(data) for data in w.store.collection(f"users/{UID}/memory_items").values()]
    visible = collapse_lineage(i for i in items if is_default_visible(i))
    return [Memory(session.id, i.content, i.layer, str(getattr(i, "kind", "") or ""),
                   str(getattr(i, "subject_attribution", "") or "")) for i in visible]


# --------------------------------------------------------------------------- verdicts
def verdict_files() -> list[Path]:
    return sorted(DATA_DIR.glob("quality_verdicts*.json"))


def load_verdicts(files: Iterable[Path] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every recorded verdict by memory key (a key may have verdicts from several judges)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for file in verdict_files() if files is None else files:
        for row in json.loads(Path(file).read_text()).get("verdicts", []):
            out.setdefault(row["key"], []).append(row)
    return out


def blind(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts of blind judges (a judge who never saw which path made a memory)."""
    return [r for r in rows if r.get("blind", True)]


def figures(memories: Sequence[Memory], sessions: int, verdicts: dict[str, list[dict[str, Any]]],
            judge: str | None = None) -> dict[str, Any]:
    """Visible memories, Long-term share, per session; precision and good per session from verdicts:
    ``judge``'s, else the first blind one recorded (a judge who knew the path never counts there)."""
    judged: list[dict[str, Any]] = []
    for memory in memories:
        found = verdicts.get(memory.key, [])
        rows = [r for r in found if r.get("judge") == judge] if judge is not None else blind(found)
        if rows:
            judged.append(rows[0])
    good = sum(bool(r["good"]) for r in judged)
    out: dict[str, Any] = {
        "sessions": sessions, "visible_memories": len(memories),
        "long_term_share": stats.ratio(sum(m.layer == "long_term" for m in memories), len(memories)),
        "memories_per_session": stats.ratio(len(memories), sessions),
        "judged": len(judged), "never_judged": len(memories) - len(judged),
        "precision": stats.ratio(good, len(judged)),
        # Judged good per session: a lower bound until every memory is judged (``never_judged`` 0).
        "good_per_session": stats.ratio(good, sessions) if judged else None,
    }
    for question in QUESTIONS:
        out[f"{question}_share"] = stats.ratio(sum(bool(r[question]) for r in judged), len(judged))
    return out


def record(answers_path: str, judge: str, out: Path | None = None, is_blind: bool = True) -> Path:
    """A judge's answers to a packet (``{"answers": [{"key", "faithful", "attributed", "durable",
    "self_contained"}]}``) as a verdict file in the repository: key, answers, good, judge and whether
    the judge was blind, nothing else."""
    answers = json.loads(Path(answers_path).read_text())
    rows = answers.get("answers", answers) if isinstance(answers, dict) else answers
    slug = re.sub(r"[^a-z0-9]+", "_", judge.lower()).strip("_")
    target = out or DATA_DIR / f"quality_verdicts_{slug}.json"
    existing = json.loads(target.read_text())["verdicts"] if target.exists() else []
    by_key = {row["key"]: row for row in existing}
    for row in rows:
        verdict = {"key": str(row["key"]), **{q: bool(row[q]) for q in QUESTIONS}}
        verdict["good"] = all(verdict[q] for q in QUESTIONS)
        verdict["judge"] = judge
        verdict["blind"] = is_blind
        by_key[verdict["key"]] = verdict
    target.write_text(json.dumps({"verdicts": sorted(by_key.values(), key=lambda r: r["key"])}, indent=1) + "\n")
    return target


def packet(results: dict[str, list[Memory]], sessions: Sequence[Session], verdicts: dict[str, list[dict[str, Any]]],
           out: str, seed: int = 43) -> dict[str, Any]:
    """The memories no verdict covers, for a blind judge: per session the transcript reference and
    the memories of every path mixed, de-duplicated and shuffled, each under its key only."""
    by_session: dict[str, dict[str, str]] = {}
    for memories in results.values():
        for m in memories:
            if not blind(verdicts.get(m.key, [])):
                by_session.setdefault(m.session, {})[m.key] = m.content
    rng = random.Random(seed)
    rows = []
    for session in sessions:
        found = list(by_session.get(session.id, {}).items())
        if not found:
            continue
        rng.shuffle(found)
        rows.append({"session": session.id, "transcript": session.ref, "owner": session.owner,
                     "memories": [{"key": k, "memory": text} for k, text in found]})
    rng.shuffle(rows)
    document = {
        "instructions": (
            "For each memory, read the session's transcript (the owner is the person whose assistant keeps "
            "the memory; 'User' means the owner) and answer four yes/no questions: faithful (the transcript "
            "says it, dates included), attributed (it is about the right person), durable (still worth "
            "knowing weeks later: not a greeting, a passing mood, a one-day event or chatter), self_contained "
            "(it reads alone: no dangling it/them/there/here). Answer as {\"answers\": [{\"key\", \"faithful\", "
            "\"attributed\", \"durable\", \"self_contained\"}]}."),
        "sessions": rows}
    Path(out).write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    return {"packet": out, "sessions": len(rows), "memories": sum(len(r["memories"]) for r in rows)}


def _source(session_id: str) -> str:
    return "samples" if session_id.startswith("sample/") else "locomo"


# --------------------------------------------------------------------------- the command
def measure(data: str | None = None, split: str = "dev", paths_: Sequence[str] = PATHS,
            replay_url: str | None = None, with_samples: bool = True) -> tuple[dict[str, Any], dict[str, list[Memory]],
                                                                              list[Session]]:
    sessions, used = select(data, split, with_samples)
    verdicts = load_verdicts()
    judges = sorted({r.get("judge", "?") for rows in verdicts.values() for r in rows})
    result: dict[str, Any] = {"split": split, "data": used, "sessions": len(sessions), "paths": {}}
    memories: dict[str, list[Memory]] = {}
    for path in paths_:
        if path == "model" and not replay_url:
            result["paths"][path] = {"skipped": "no recorded-replies server: give --replay-url (an "
                                                "OpenAI-compatible server answering with recorded replies)"}
            continue
        fell_back: list[str] = []
        found = [m for s in sessions for m in run_session(path, s, replay_url, fell_back)]
        memories[path] = found
        row = figures(found, len(sessions), verdicts)
        if path == "model":  # sessions the rules captured after the model failed: not the model's figures
            row["fell_back_sessions"] = len(fell_back)
        row["by_judge"] = {j: figures(found, len(sessions), verdicts, j) for j in judges}
        row["by_source"] = {}
        for source in sorted({_source(s.id) for s in sessions}):
            picked = [s.id for s in sessions if _source(s.id) == source]
            row["by_source"][source] = {
                j or "blind": figures([m for m in found if _source(m.session) == source], len(picked), verdicts, j)
                for j in (None, *judges)}
        row["by_kind"] = {k: sum(m.kind == k for m in found) for k in sorted({m.kind for m in found})}
        result["paths"][path] = row
    return result, memories, sessions


def main(args: Any) -> int:
    from strata_dev.cli.output import Output

    if getattr(args, "record", None):
        if not getattr(args, "judge", None):
            sys.stderr.write("bench quality: --record needs --judge NAME\n")
            return 2
        target = record(args.record, args.judge, is_blind=not getattr(args, "not_blind", False))
        Output(bool(getattr(args, "json", False))).result({"benchmark": "quality", "recorded": str(target)},
                                                          title="bench quality")
        return 0
    chosen = tuple(args.path) if getattr(args, "path", None) else PATHS
    result, memories, sessions = measure(getattr(args, "data", None), getattr(args, "split", "dev") or "dev", chosen,
                                         getattr(args, "replay_url", None))
    verdicts = load_verdicts()
    unjudged = [m for found in memories.values() for m in found if not blind(verdicts.get(m.key, []))]
    if getattr(args, "packet", None):
        result["packet"] = packet(memories, sessions, verdicts, args.packet)
    if getattr(args, "list_unjudged", False):
        for m in unjudged:
            sys.stderr.write(f"never judged  {m.key}  {m.session}  [{m.layer} {m.kind}]  {m.content}\n")
        result["never_judged_keys"] = sorted({m.key for m in unjudged})
    Output(bool(getattr(args, "json", False))).result({"benchmark": "quality", **result}, title="bench quality")
    if getattr(args, "plot", None):
        from strata_dev.bench import plots

        drawn = plots.quality(result, Path(args.plot))
        sys.stderr.write(f"bench quality: chart written to {drawn}\n" if drawn else "bench quality: no chart\n")
    return 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data")
    parser.add_argument("--split", default="dev", choices=sorted(SPLITS))
    parser.add_argument("--path", action="append", choices=PATHS)
    parser.add_argument("--replay-url")
    parser.add_argument("--packet")
    parser.add_argument("--record")
    parser.add_argument("--judge")
    parser.add_argument("--not-blind", action="store_true")
    parser.add_argument("--list-unjudged", action="store_true")
    parser.add_argument("--json", action="store_true")
    raise SystemExit(main(parser.parse_args()))

"""Recordings for the replay server (``strata_dev/localstack/model_replay.py``) made from the
hand-labelled replies of ``tests/support/recordings/model_replies_fixture.json``.

A recording is keyed by the request it answers, and the request is the project's current prompt
and schema: so the tests build their recordings when they run, from the requests the project's own
extractor sends now (``strata model-replies dump``'s machinery) and the hand-labelled reply of each
conversation, instead of pinning keys a prompt change would orphan. A required property the current
schema added and allows to be null (a field the labels predate) is given null; nothing else of the
labelled reply is changed.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from strata_dev import model_replies
from strata_dev.localstack import model_replay

FIXTURE = Path(__file__).resolve().parent / "recordings" / "model_replies_fixture.json"


def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _nullable(schema: dict[str, Any]) -> bool:
    kinds = schema.get("type")
    return ("null" in kinds if isinstance(kinds, list) else kinds == "null") or any(
        _nullable(option) for option in schema.get("anyOf") or [])


def conform(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` with every missing required, nullable property of ``schema`` set to null."""
    if isinstance(value, dict) and schema.get("type") == "object":
        properties = schema.get("properties") or {}
        out = {k: conform(v, properties.get(k) or {}) for k, v in value.items()}
        for name in schema.get("required") or []:
            if name not in out and _nullable(properties.get(name) or {}):
                out[name] = None
        return out
    if isinstance(value, list) and schema.get("type") == "array":
        return [conform(v, schema.get("items") or {}) for v in value]
    return value


def extraction_recordings(docs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One recording per conversation in the fixture: its one extraction request, answered with the
    hand-labelled reply."""
    labels = fixture()
    entries = []
    for conversation_id, body in model_replies.extraction_requests(docs):
        reply = labels["extraction"][conversation_id]
        schema = model_replay.response_schema(body) or {}
        entries.append({**model_replay.template(body), "reply": conform(reply, schema),
                        "recorded_by": labels["recorded_by"]})
    assert len(entries) == len(docs), "each fixture conversation is one window"
    return entries


def routing_recording(missing_entry: dict[str, Any]) -> dict[str, Any]:
    """The hand-labelled answer to a routing request the replay server had no reply for."""
    labels = fixture()
    items = json.loads(missing_entry["messages"][-1]["content"])["items"]
    proposals = [{"item_ref": item["item_ref"], "route": labels["routing"].get(item["content"], "review"),
                  "reason": "hand-labelled", "duplicate_of": None, "supersedes": []} for item in items]
    return {**missing_entry, "reply": {"proposals": proposals}, "recorded_by": labels["recorded_by"]}


def write(folder: Path, name: str, entries: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


__all__ = ["conform", "extraction_recordings", "fixture", "routing_recording", "write"]


@contextlib.contextmanager
def replay_stack(state_dir: Path, replies: Path) -> Iterator[dict[str, Any]]:
    """A stack of its own whose functions run the model extractor and router on the replay server
    answering from ``replies`` (``strata stack up --model-replay``): no tick, no pass on write,
    the hashing embedder, and a model failure left to consolidation's retries (no rules fallback).
    The environment points at it while it runs (``STRATA_STATE_DIR`` included) and is restored."""
    from strata_dev.localstack import stack as localstack

    saved = dict(os.environ)
    os.environ.update({"STRATA_TICK_SECONDS": "86400", "STRATA_CONSOLIDATION_ON_WRITE": "0",
                       "STRATA_EMBEDDER": "hashing", "STRATA_LLM_ON_FAILURE": "fail"})
    try:
        info = localstack.up(state_dir, model_replay=replies)
        os.environ.update(localstack.stack_env(info))
        os.environ["STRATA_STATE_DIR"] = str(state_dir)  # the tooling's "running stack" is this one
        yield info
    finally:
        os.environ.clear()
        os.environ.update(saved)
        localstack.down(state_dir)

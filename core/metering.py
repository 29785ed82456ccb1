"""What the model path costs, counted per unit of work (one capture, one consolidation pass).

:func:`metered` opens a meter for the work running in this context (a ``ContextVar``, so concurrent
requests of one instance count separately); :class:`core.adapters.llm.ChatClient` adds every call
to it, whatever its outcome (tokens from the reply's ``usage``); whoever judges the answer counts a
failure when it was not usable (capture, for an extraction attempt that failed: transport, quota,
refusal, malformed, or quotes that do not ground; the model router, for a batch) and a fallback
when the rule extractor or rule router took over. The entry
points log :meth:`ModelUsage.log_fields` on their ``capture`` and ``consolidation_pass`` lines,
which the log-based metrics of ``infra/terraform/monitoring.tf`` read.

The estimated cost uses list prices per million tokens (:data:`PRICES_PER_MTOK`, as of
:data:`PRICES_AS_OF`); a model not in the table has no estimate (``model_cost_usd`` is omitted),
never a guess.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

# Vertex AI list prices for text input / output tokens, US dollars per million tokens, standard
# (not batch, not priority) online inference, prompts up to 200k tokens; written down from Google
# Cloud's "Vertex AI generative AI pricing" page as of this date (the run never fetches them).
# Thinking tokens of the 2.5 models are billed as output tokens.
PRICES_AS_OF = "2025-09-01"
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "google/gemini-2.5-flash": (0.30, 2.50),
    "google/gemini-2.5-flash-lite": (0.10, 0.40),
    "google/gemini-2.5-pro": (1.25, 10.00),
    "google/gemini-2.0-flash-001": (0.15, 0.60),
    "google/gemini-2.0-flash-lite-001": (0.075, 0.30),
}


def price(model: str) -> tuple[float, float] | None:
    """(input, output) dollars per million tokens of ``model`` (with or without the ``google/``
    publisher prefix), or None when it is not in the table."""
    return PRICES_PER_MTOK.get(model) or PRICES_PER_MTOK.get(f"google/{model}")


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    rates = price(model)
    if rates is None:
        return None
    return (prompt_tokens * rates[0] + completion_tokens * rates[1]) / 1_000_000


@dataclass
class ModelUsage:
    """Model calls of one unit of work: how many, how many failed, their tokens and cost, and
    how often the rules took over."""

    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fallbacks: int = 0
    cost: float = 0.0
    unpriced: set[str] = field(default_factory=set)

    def add_call(self, model: str, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        dollars = cost_usd(model, prompt_tokens, completion_tokens)
        if dollars is None:
            self.unpriced.add(model)
        else:
            self.cost += dollars

    def log_fields(self) -> dict[str, int | float]:
        """The fields a log line carries (none when the model was neither called nor replaced)."""
        if not self.calls and not self.fallbacks:
            return {}
        fields: dict[str, int | float] = {
            "model_calls": self.calls, "model_failures": self.failures, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "model_fallbacks": self.fallbacks}
        if self.calls and not self.unpriced:
            fields["model_cost_usd"] = round(self.cost, 8)
        return fields


_current: ContextVar[ModelUsage | None] = ContextVar("strata_model_usage", default=None)


@contextlib.contextmanager
def metered() -> Iterator[ModelUsage]:
    """Count the model usage of the work inside (nested meters count into the innermost)."""
    usage = ModelUsage()
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)


def record_call(model: str, prompt_tokens: int, completion_tokens: int) -> None:
    usage = _current.get()
    if usage is not None:
        usage.add_call(model, prompt_tokens, completion_tokens)


def record_failure() -> None:
    """The model's answer was not usable (an extraction attempt or a routing batch failed)."""
    usage = _current.get()
    if usage is not None:
        usage.failures += 1


def record_fallback() -> None:
    usage = _current.get()
    if usage is not None:
        usage.fallbacks += 1


__all__ = ["PRICES_AS_OF", "PRICES_PER_MTOK", "ModelUsage", "cost_usd", "metered", "price", "record_call",
           "record_failure", "record_fallback"]

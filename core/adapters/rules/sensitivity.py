"""The rules secret detector: which sensitivity labels (named in :mod:`core.domain.records`) a
text carries, what services and planners reach through ``Ports.sensitivity``.

Two kinds of sensitive text are treated differently:

* **Secrets** (labels ``credential`` and ``secret``): a disclosed password, PIN, API key or token,
  card number, CVV, social security number, security-question answer or private key. They are
  *never* stored as memory content. Extractors drop the clause that carries one; intake either
  rejects the text (:func:`contains_secret`) or stores :func:`redact_secrets` of it.
* **Other restricted labels** (``financial``, ``health``, ``intimate``, ``minor``,
  ``workplace_confidential``, ``identity_authentication``): the memory is stored and visible to its
  owner, but flagged ``restricted`` and never sent to a search/vector provider.

Guarantees: ``contains_secret(t)`` is exactly ``bool(label_sensitivity(t) & SECRET_LABELS)``, and
``contains_secret(redact_secrets(t))`` is always false. Mentioning a password without disclosing
one ("never share your password") is not a secret. Detection is deliberately eager: a false
positive drops or redacts a harmless clause, a false negative would store a credential.
"""

from __future__ import annotations

import functools
import re

from core.domain.records import REDACTED

_F = re.IGNORECASE

# Words that follow "password is" without being a password ("my password is too short").
_NOT_A_VALUE = (
    r"(?:a|an|the|my|your|his|her|their|our|too|very|so|not|no|never|still|now|just|also|same|different|"
    r"weak|strong|long|short|wrong|right|correct|incorrect|invalid|expired|old|new|easy|hard|simple|"
    r"secure|insecure|safe|required|needed|missing|empty|blank|reset|changed|saved|stored|written|"
    r"case|something|written|set|locked|hidden|secret|private|confidential|fine|ok|okay|good|bad|"
    r"that|this|it|what|which|why|how|where|when|there|here|in|on|at|for|from|about|like|because|and|or)\b"
)
# A disclosed value: one token, not a placeholder we wrote ourselves, not an ordinary word above.
_VALUE = r"[\"'“‘]?(?!\[REDACTED\])(?!" + _NOT_A_VALUE + r")[^\s\"'”’,;]{3,}"
_DIGITS_VALUE = r"[\"'“‘]?(?!\[REDACTED\])[A-Za-z]{0,3}\d[\d\- ]{2,}\d"
_IS = r"\s*(?:(?:is|was|reads|will be|is still|is now|is just)\s*[:=]?|[:=])\s*"


def _rx(source: str, flags: int = 0) -> tuple[str, int]:
    return source, flags


# The patterns are compiled on their first use (:func:`_secret_patterns`, :func:`_topic_patterns`):
# compiling them cost every function's cold start about 7 ms of CPU, and most first requests (a list
# page, a projection, a cascade, a webhook delivery) never look at a memory's text.
# (label, pattern, group holding the secret value). Group 0 when the whole match is the value.
_SECRET_SOURCES: tuple[tuple[str, tuple[str, int], str | int], ...] = (
    ("credential", _rx(
        r"\b(?:password|passcode|passphrase|pass\s?word|pwd|wi-?fi\s+(?:password|key)|login)"
        + _IS + r"(?P<v>" + _VALUE + r")", _F), "v"),
    ("credential", _rx(
        r"\b(?:pin(?:\s+(?:code|number))?|(?:door|gate|alarm|access|entry|garage|lock|verification|"
        r"one-time|one time|2fa|otp|sms|login|security|unlock)\s+code)" + _IS + r"(?P<v>" + _DIGITS_VALUE + r")",
        _F), "v"),
    ("credential", _rx(
        r"\b(?:api[\s_-]?key|access[\s_-]?(?:key|token)|secret[\s_-]?key|auth(?:entication)?[\s_-]?token|"
        r"bearer|client[\s_-]?secret|refresh[\s_-]?token|session[\s_-]?token|token)"
        r"(?:\s*(?:is|was|=|:)\s*|\s+)(?P<v>(?!\[REDACTED\])[A-Za-z0-9_\-./+=]*\d[A-Za-z0-9_\-./+=]*)", _F), "v"),
    ("credential", _rx(
        r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bAKIA[0-9A-Z]{16}\b|"
        r"\bxox[abprs]-[A-Za-z0-9\-]{10,}|\bAIza[0-9A-Za-z_\-]{30,}|"
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0),
    ("secret", _rx(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.|\n)*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"), 0),
    # Card-like numbers: 13-19 digits, optionally grouped by spaces or dashes.
    ("secret", _rx(r"(?<![\d\[])\d(?:[ -]?\d){12,18}(?!\d)"), 0),
    ("secret", _rx(r"\b(?:cvv2?|cvc2?|card security code)" + _IS + r"?(?P<v>\d{3,4})\b", _F), "v"),
    ("secret", _rx(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)"), 0),
    ("secret", _rx(
        r"\b(?:maiden name|first pet(?:'s name)?|childhood (?:best friend|street|nickname)|"
        r"security (?:question|answer)|answer to (?:my|the) security question|memorable word)"
        r"(?:'s)?" + _IS + r"(?P<v>" + _VALUE + r")", _F), "v"),
    ("secret", _rx(
        r"\b(?:social security number|ssn|passport number|passport no\.?|driver'?s licen[cs]e number|"
        r"national id(?: number)?|tax id(?: number)?|iban|account number|routing number|sort code)"
        + _IS + r"(?P<v>" + _DIGITS_VALUE + r"|[A-Z]{1,4}\d[\dA-Z]{3,})", _F), "v"),
)

_TOPIC_SOURCES: dict[str, tuple[str, int]] = {
    "health": _rx(
        r"\b(?:blood pressure|cholesterol|blood sugar|heart rate|allerg(?:y|ies|ic)|diagnos\w*|medication|"
        r"medicine|prescri\w+|pills?|dosage|doctor|physician|nurse practitioner|therapist|therapy|"
        r"psychiatri\w+|hospitali[sz]ed|surgery|operation on|symptoms?|diabet\w*|asthma|cancer|tumou?r|"
        r"depress\w*|anxiety|adhd|autis\w+|migraines?|insomnia|pregnan\w+|miscarriage|infection|"
        r"disease|disorder|syndrome|illness|sick|injur\w+|broke my|chronic|blood test|cardio\w*|"
        r"hypertension|antidepressants?|insulin|chemo\w*|vaccin\w+|covid|std|hiv)\b", _F),
    "financial": _rx(
        r"\b(?:card limit|credit limit|credit card|debit card|credit score|bank(?:ing)?|salary|salaries|"
        r"income|paycheck|pay rise|raise at work|debt|debts|loan|loans|mortgage|overdraft|savings|"
        r"invest\w*|stocks?|shares|portfolio|crypto\w*|bitcoin|tax(?:es)?|net worth|budget|bankrupt\w*|"
        r"rent is|earn(?:s|ing)?|owe[sd]?|pension|401k|account balance|interest rate|payment plan|"
        r"\$\s?\d[\d,]*|\d[\d,]*\s?(?:dollars|euros|pounds|usd|eur|gbp))\b", _F),
    "intimate": _rx(
        r"\b(?:sex|sexual\w*|sex life|intimate|intimacy|affair|cheat(?:ed|ing) on|hook(?:ed)? up|"
        r"one-night stand|erectile|libido|orientation|gay|lesbian|bisexual|transgender|"
        r"coming out|came out|nude\w*|porn\w*|fetish\w*)\b", _F),
    "minor": _rx(
        r"\b(?:kid|kids|child|children|toddler|baby|babies|infant|newborn|kindergarten|preschool|"
        r"daycare|nursery school|elementary school|primary school|middle school|high school|teen(?:ager)?s?|"
        r"(?:[1-9]|1[0-7])[\s-]years?[\s-]old|(?:[1-9]|1[0-7])-year-old|grade (?:[1-9]|1[0-2])|"
        r"(?:my|our|his|her) (?:son|daughter)'?s? (?:school|teacher|class))\b", _F),
    "workplace_confidential": _rx(
        r"\b(?:confidential|under (?:an )?nda|nda|non-disclosure|internal only|not public yet|"
        r"unannounced|embargo\w*|layoffs?|redundanc\w+|acquisition|merger|trade secret|insider|"
        r"don't tell anyone at work|off the record|quarterly numbers|earnings before)\b", _F),
    "identity_authentication": _rx(
        r"\b(?:social security|ssn|passport (?:number|no)|driver'?s licen[cs]e|national id|"
        r"date of birth|born on|birth ?date|security question|security answer|maiden name|"
        r"verification code|one-time code|2fa|two-factor|otp|biometric|fingerprint|face id|"
        r"identity (?:card|document|verification)|tax id)\b", _F),
}


@functools.cache
def _secret_patterns() -> tuple[tuple[str, re.Pattern[str], str | int], ...]:
    return tuple((label, re.compile(*source), group) for label, source, group in _SECRET_SOURCES)


@functools.cache
def _topic_patterns() -> dict[str, re.Pattern[str]]:
    return {label: re.compile(*source) for label, source in _TOPIC_SOURCES.items()}


def _secret_spans(text: str) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    for label, pattern, group in _secret_patterns():
        for match in pattern.finditer(text):
            start, end = match.span(group)
            value = text[start:end]
            # Trim quotes/punctuation around a value so the redaction keeps the sentence readable.
            lead = len(value) - len(value.lstrip("\"'“‘"))
            trail = len(value) - len(value.rstrip("\"'”’.!?)"))
            start, end = start + lead, end - trail
            if end > start:
                spans.append((label, start, end))
    return spans


def contains_secret(text: str) -> bool:
    """True when the text discloses a credential or secret value (see the module docstring)."""
    return bool(_secret_spans(text or ""))


def redact_secrets(text: str) -> str:
    """Replace every disclosed secret value with ``[REDACTED]``; the rest of the text is kept."""
    text = text or ""
    for _ in range(4):  # redacting one value can expose an overlapping pattern; settle in a few rounds
        spans = sorted(_secret_spans(text), key=lambda s: (s[1], -s[2]))
        if not spans:
            return text
        merged: list[list[int]] = []
        for _label, start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        out, cursor = [], 0
        for start, end in merged:
            out.append(text[cursor:start])
            out.append(REDACTED)
            cursor = end
        out.append(text[cursor:])
        text = "".join(out)
    return text


def label_sensitivity(text: str) -> frozenset[str]:
    """Every restricted label the text carries (empty for ordinary text)."""
    text = text or ""
    labels = {label for label, _start, _end in _secret_spans(text)}
    labels.update(label for label, pattern in _topic_patterns().items() if pattern.search(text))
    return frozenset(labels)


__all__ = ["contains_secret", "label_sensitivity", "redact_secrets"]

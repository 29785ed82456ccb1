"""Sensitivity labels, secret detection and redaction."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.adapters.rules.sensitivity import contains_secret, label_sensitivity, redact_secrets
from core.domain.records import REDACTED, RESTRICTED_LABELS, SECRET_LABELS, is_restricted
from tests.support import spec_model

SECRETS = [
    "my online banking password is Tulip-2291",
    "The wifi password is: correcthorse42",
    'my password was "hunter2"',
    "my PIN is 4417",
    "the door code is 1984",
    "my api key is sk-abcdefghijklmnop1234",
    "token ghp_abcdefghijklmnopqrstuvwx1234",
    "AKIAABCDEFGHIJKLMNOP is the access key",
    "the card number is 4111 1111 1111 1111",
    "card 4111-1111-1111-1111 expires soon",
    "the CVV is 123",
    "my ssn is 123-45-6789",
    "my mother's maiden name is Smith",
    "the answer to my security question is Rex",
    "passport number is X1234567",
]
NOT_SECRETS = [
    "You should never share your password, I'll note that it was disclosed.",
    "my password is too short",
    "I reset my password yesterday",
    "it's the one ending 4417",
    "I moved to Lisbon in March",
    "the token of appreciation was nice",
    "I climb three times a week",
]


@pytest.mark.parametrize("text", SECRETS)
def test_disclosed_secrets_are_detected_and_redacted(text: str) -> None:
    assert contains_secret(text)
    assert label_sensitivity(text) & SECRET_LABELS
    assert is_restricted(label_sensitivity(text))
    redacted = redact_secrets(text)
    assert REDACTED in redacted
    assert not contains_secret(redacted)


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_mentions_without_a_value_are_not_secrets(text: str) -> None:
    assert not contains_secret(text)
    assert redact_secrets(text) == text


def test_redaction_keeps_the_rest_of_the_sentence() -> None:
    text = "Sure, it's the one ending 4417, and my online banking password is Tulip-2291."
    assert redact_secrets(text) == "Sure, it's the one ending 4417, and my online banking password is [REDACTED]."
    assert "Tulip" not in redact_secrets(text)


@pytest.mark.parametrize(("text", "label"), [
    ("The doctor said my blood pressure is a bit high", "health"),
    ("he's allergic to peanuts", "health"),
    ("I was diagnosed with asthma", "health"),
    ("I take medication for it", "health"),
    ("I want to raise my card limit", "financial"),
    ("my salary went up", "financial"),
    ("I still have student debt", "financial"),
    ("I talked to the bank", "financial"),
    ("my daughter's school starts at eight", "minor"),
    ("our 7-year-old loves lego", "minor"),
    ("this is under NDA until the launch", "workplace_confidential"),
    ("the layoffs are not public yet", "workplace_confidential"),
    ("my date of birth is on the form", "identity_authentication"),
    ("we talked about our sex life", "intimate"),
])
def test_restricted_topics_are_labelled(text: str, label: str) -> None:
    labels = label_sensitivity(text)
    assert label in labels
    assert is_restricted(labels)
    assert not contains_secret(text)  # restricted, but stored


def test_ordinary_text_has_no_labels() -> None:
    for text in ("I moved to Lisbon in March", "I climb three times a week back home", "Hey, what's up."):
        assert label_sensitivity(text) == frozenset()
        assert not is_restricted(label_sensitivity(text))


def test_restricted_set_and_is_restricted() -> None:
    # Regression pin: the code's set must stay the one docs/data-model.md lists (the reference model's copy).
    assert spec_model.RESTRICTED_LABELS == RESTRICTED_LABELS
    assert not is_restricted([])
    assert not is_restricted(["hobby"])
    assert is_restricted(["health"])


@given(st.text(max_size=200))
def test_redaction_always_removes_every_secret(text: str) -> None:
    assert not contains_secret(redact_secrets(text))
    assert contains_secret(text) == bool(label_sensitivity(text) & SECRET_LABELS)


@given(st.sampled_from(SECRETS), st.text(alphabet=st.characters(categories=["L", "Zs"]), max_size=40))
def test_secrets_embedded_in_prose_are_redacted(secret: str, prose: str) -> None:
    text = f"{prose} {secret}. {prose}"
    assert contains_secret(text)
    assert not contains_secret(redact_secrets(text))

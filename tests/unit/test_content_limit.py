"""The one content limit (``Settings.max_content_chars``): a property of ``intake.checked_content``,
which every write path calls before it writes. No servers: the check reads only the settings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import config
from core.bootstrap import Context
from core.errors import BadRequest
from core.services import intake

TEXT = st.text(alphabet=st.sampled_from("ab \t\n\u00a0é"), max_size=40)


def _ctx(limit: int) -> Context:
    return Context(config.load(max_content_chars=limit))


@given(text=TEXT, limit=st.integers(1, 30))
def test_content_is_accepted_exactly_when_its_stored_form_fits(text: str, limit: int) -> None:
    # The stored form: words joined by single spaces (str.split's notion of whitespace).
    stored = " ".join(text.split())
    if not stored or len(stored) > limit:
        with pytest.raises(BadRequest) as refused:
            intake.checked_content(_ctx(limit), text)
        assert refused.value.status == 400 and refused.value.code == "validation_error"
    else:
        assert intake.checked_content(_ctx(limit), text) == stored


def test_the_message_names_the_field_and_the_configured_limit() -> None:
    with pytest.raises(BadRequest, match="correction must be at most 7 characters"):
        intake.checked_content(_ctx(7), "eight ch", "correction")
    with pytest.raises(BadRequest, match="value must not be empty"):
        intake.checked_content(_ctx(7), " \n ", "value")

"""``routing.changes_subject``: which merges and supersessions would change whom a fact is about
(the spec: promotion conserves subject identity; a known third party is never rewritten as the user)."""

from __future__ import annotations

import pytest

from core.domain.routing import changes_subject


@pytest.mark.parametrize(("mine", "theirs", "changes"), [
    (("third_party", "Tom"), ("user", None), True),
    (("user", None), ("third_party", "Tom"), True),
    (("third_party", None), ("legacy_assumed", None), True),  # a historical row is the user's
    (("third_party", "Tom"), ("third_party", "Anna"), True),
    (("third_party", "Tom"), ("third_party", " tom "), False),
    (("third_party", "Tom"), ("third_party", None), False),  # an unnamed third party: not firmly someone else
    (("user", None), ("legacy_assumed", None), False),
    (("unknown", None), ("user", None), False),
    (("user", None), ("user", None), False),
])
def test_changes_subject(mine: tuple[str, str | None], theirs: tuple[str, str | None], changes: bool) -> None:
    assert changes_subject(*mine, *theirs) is changes

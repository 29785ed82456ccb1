"""Which credential a request acts with, so every write records who made it.

The API's dispatcher sets it for the duration of a request (:func:`acting_as`): the user's own
Firebase ID token (``{"kind": "id_token"}``) or a personal API key (``{"kind": "personal_key",
"key_id": …}``), with the capture device the request names (``device_id``) when it names one. The
unit of work stamps it on each ledger commit it writes (``memory_commits/{id}.credential``); the
conversation create stamps it on the document (``created_by``). Work no request started (captures,
consolidation, the drain) runs with none, and its commits carry no ``credential``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

_CURRENT: ContextVar[dict[str, Any] | None] = ContextVar("strata_credential", default=None)


def current() -> dict[str, Any] | None:
    """The credential the running request acts with (a copy), None outside a request."""
    found = _CURRENT.get()
    return dict(found) if found is not None else None


@contextlib.contextmanager
def acting_as(credential: dict[str, Any]) -> Iterator[None]:
    token = _CURRENT.set(dict(credential))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def of_request(key_id: str | None, device_id: str | None) -> dict[str, Any]:
    """The credential record of a request made with personal key ``key_id`` (None: an ID token)."""
    found: dict[str, Any] = {"kind": "personal_key", "key_id": key_id} if key_id else {"kind": "id_token"}
    if device_id:
        found["device_id"] = device_id
    return found

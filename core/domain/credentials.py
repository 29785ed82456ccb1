"""Which credential a request acts with, so every write records who made it, and what its reads
may show.

The API's dispatcher sets it for the duration of a write request, and the ``/mcp`` server for
each write tool's call (:func:`acting_as`): the user's own
Firebase ID token (``{"kind": "id_token"}``), a personal API key (``{"kind": "personal_key",
"key_id": "key_…"}``) or an operator's server key acting for the user (``{"kind": "server_key",
"key_id": "srv_…"}``; a key id's prefix names its kind), with the capture device the request names
(``device_id``) when it names one. The unit of work stamps it on each ledger commit it writes
(``memory_commits/{id}.credential``); the conversation create stamps it on the document
(``created_by``). Work no request started (captures, consolidation, the drain) runs with none, and
its commits carry no ``credential``. Revoking a key lists what it wrote by that ``key_id``
(:mod:`core.services.key_writes`).

Reads: a key sees the user's restricted memories (health, finances, …;
:data:`core.domain.records.RESTRICTED_LABELS`) only when it was made with ``restricted`` (:func:`reading_as`,
:func:`sees_restricted`). The user's own ID token, and work outside a request, see everything.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

PERSONAL_KEY_ID_PREFIX = "key_"
SERVER_KEY_ID_PREFIX = "srv_"

_CURRENT: ContextVar[dict[str, Any] | None] = ContextVar("strata_credential", default=None)
_SEES_RESTRICTED: ContextVar[bool] = ContextVar("strata_sees_restricted", default=True)


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


def kind_of(key_id: str) -> str:
    """``server_key`` for an operator's server key id (``srv_…``), else ``personal_key``."""
    return "server_key" if key_id.startswith(SERVER_KEY_ID_PREFIX) else "personal_key"


def of_request(key_id: str | None, device_id: str | None) -> dict[str, Any]:
    """The credential record of a request made with key ``key_id`` (None: an ID token)."""
    found: dict[str, Any] = {"kind": kind_of(key_id), "key_id": key_id} if key_id else {"kind": "id_token"}
    if device_id:
        found["device_id"] = device_id
    return found


def sees_restricted() -> bool:
    """Whether the running request's reads may show restricted memories (True outside a request)."""
    return _SEES_RESTRICTED.get()


@contextlib.contextmanager
def reading_as(key: Any) -> Iterator[None]:
    """A request's reads as credential ``key`` may see them: a key (personal or server) without
    ``restricted`` sees no restricted memory; None (the user's ID token) sees them all."""
    token = _SEES_RESTRICTED.set(key is None or bool(getattr(key, "restricted", False)))
    try:
        yield
    finally:
        _SEES_RESTRICTED.reset(token)

"""Personal API keys: long-lived, revocable credentials for agents and tools (MCP clients).

A key is ``strata_pk_`` followed by 43 characters of ``secrets.token_urlsafe(32)`` (256 random
bits); the prefix lets a secret scanner recognise a leaked one. The secret is shown once, in the
answer that creates it, and only its SHA-256 is stored, in two places:

* ``users/{uid}/api_keys/{key_id}``: what the owner lists (name, scope, ``created_at``,
  ``last_used_at``) and the digest, so that revoking finds the lookup document;
* ``api_key_hashes/{sha256 hex}``: the global lookup (uid, key id, scope). Verifying a key is one
  read of this document, by the digest of the presented secret. A fast hash is enough: the secret
  has 256 bits of entropy, so there is nothing to brute-force that a slow hash would protect.

Both documents are written in one transaction that re-reads the account's wipe record (no key is
created while a wipe runs, nor by a request that started before one), and both are deleted by a
revoke and by the account wipe (:func:`revoke_all`, before the user's subtree goes), so a wiped
account's keys answer 401.

``last_used_at`` is written at most once a minute per key (:data:`LAST_USED_EVERY`): the lookup
document carries it, so a call knows from the read it already made whether the time is stale, and
a busy agent adds one pair of writes a minute rather than one per request.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from core.domain import credentials, paths
from core.domain.changes import Change
from core.domain.documents import ApiKeyLookup, ApiKeyRecord
from core.errors import Conflict, Forbidden, NotFound, Unauthorized
from core.ports import Ports, Write

log = logging.getLogger(__name__)

PREFIX = "strata_pk_"
SECRET_BYTES = 32
SECRET_CHARS = len(PREFIX) + 43  # token_urlsafe(32): 43 base64url characters
Scope = Literal["read", "read+write"]
SCOPES: tuple[Scope, ...] = ("read", "read+write")
COLLECTION = paths.API_KEYS
MAX_KEYS = 25  # per user: a listing is one bounded read, and so is the wipe's
LAST_USED_EVERY = timedelta(minutes=1)
_UNUSED = frozenset({"last_used_at"})  # a new key's documents store it as null


@dataclass(frozen=True)
class KeyCaller:
    """Who a verified key speaks for, and what it may do."""

    uid: str
    key_id: str
    scope: Scope
    restricted: bool = False  # whether its reads show the user's restricted memories


def new_secret() -> str:
    return PREFIX + secrets.token_urlsafe(SECRET_BYTES)


def digest(secret: str) -> str:
    """The stored form of a secret: SHA-256, hex (also the lookup document's id)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def is_key(token: str) -> bool:
    """Whether a bearer token is meant as a personal key (an ID token is a JWT: it has dots)."""
    return token.startswith(PREFIX)


def allows(scope: str, write: bool) -> bool:
    """``read`` keys read; ``read+write`` keys also create and delete. An unknown scope allows nothing."""
    return scope == "read+write" or (scope == "read" and not write)


def require(caller: KeyCaller | None, write: bool) -> None:
    """Refuse (403) a write by a ``read`` key; an ID token (``caller`` None) may do anything."""
    if caller is not None and not allows(caller.scope, write):
        raise Forbidden(f"this key's scope is {caller.scope!r}: it cannot create or delete", code="key_scope")


def _public(key_id: str, key: ApiKeyRecord) -> dict[str, Any]:
    return {"id": key_id, "name": "" if "name" in key.absent else key.name, "scope": key.scope,
            "restricted": key.restricted is True, "created_at": key.created_at, "last_used_at": key.last_used_at}


def create(ctx: Ports, uid: str, name: str, scope: Scope, restricted: bool = False) -> dict[str, Any]:
    """A new key: its listing fields and, this once, its ``secret``. ``restricted``: its reads show
    the user's restricted memories too (without it they show none)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")
    if len(ctx.store.scan(paths.col(uid, COLLECTION), limit=MAX_KEYS, keys_only=True)) >= MAX_KEYS:
        raise Conflict(f"at most {MAX_KEYS} keys per user: revoke one first", code="too_many_keys")
    secret = new_secret()
    hashed = digest(secret)
    key_id = credentials.PERSONAL_KEY_ID_PREFIX + secrets.token_hex(8)
    now = ctx.now()
    record = ApiKeyRecord(name=name, scope=scope, restricted=restricted, created_at=now, hash=hashed, nulls=_UNUSED)
    lookup = ApiKeyLookup(uid=uid, key_id=key_id, scope=scope, restricted=restricted, created_at=now, nulls=_UNUSED)
    ctx.store.write(Change("api_key.create", [Write("set", paths.api_key(uid, key_id), record.to_store()),
                                              Write("set", paths.api_key_lookup(hashed), lookup.to_store())],
                           fenced=uid))
    return {**_public(key_id, record), "secret": secret}


def list_keys(ctx: Ports, uid: str) -> list[dict[str, Any]]:
    """The user's keys, oldest first, never a secret or its hash."""
    docs = ctx.store.scan(paths.col(uid, COLLECTION), limit=MAX_KEYS)
    keys = [_public(doc.id, ApiKeyRecord.from_store(doc.data)) for doc in docs]
    return sorted(keys, key=lambda k: (str(k["created_at"]), k["id"]))


def revoke(ctx: Ports, uid: str, key_id: str) -> None:
    """Delete the key's two documents; its next call is a 401. Another user's id is a 404."""
    record = ctx.store.get(paths.api_key(uid, key_id))
    if record is None:
        raise NotFound("no such key")
    ctx.store.write(Change("api_key.revoke", _deletes(uid, key_id, ApiKeyRecord.from_store(record))))


def _deletes(uid: str, key_id: str, record: ApiKeyRecord) -> list[Write]:
    writes = [Write("delete", paths.api_key(uid, key_id))]
    if isinstance(record.hash, str):
        writes.insert(0, Write("delete", paths.api_key_lookup(record.hash)))
    return writes


def revoke_all(ctx: Ports, uid: str) -> int:
    """Every key of ``uid`` (the account wipe, before it deletes the user's subtree): lookup
    documents first, so a wipe stopped halfway never leaves a working key without its record."""
    revoked = 0
    while True:
        docs = ctx.store.scan(paths.col(uid, COLLECTION), limit=MAX_KEYS)
        if not docs:
            return revoked
        writes = [w for doc in docs for w in _deletes(uid, doc.id, ApiKeyRecord.from_store(doc.data))]
        ctx.store.write(Change("api_key.revoke_all", writes))
        revoked += len(docs)


def verify(ctx: Ports, secret: str) -> KeyCaller:
    """The caller a presented key speaks for; 401 when it is unknown, revoked or malformed."""
    if not is_key(secret) or len(secret) != SECRET_CHARS:
        raise Unauthorized("unknown or revoked key")
    hashed = digest(secret)
    found = ApiKeyLookup.from_store(ctx.store.get(paths.api_key_lookup(hashed)))
    if found.scope not in SCOPES or not isinstance(found.uid, str):
        raise Unauthorized("unknown or revoked key")
    key_id = "" if "key_id" in found.absent else str(found.key_id)
    caller = KeyCaller(found.uid, key_id, cast(Scope, found.scope), found.restricted is True)
    _touch(ctx, hashed, caller, found.last_used_at, ctx.now())
    return caller


def _touch(ctx: Ports, hashed: str, caller: KeyCaller, last: datetime | None, now: datetime) -> None:
    """Record the use, at most once per :data:`LAST_USED_EVERY`; never fails the request. ``update``
    writes nothing if a revoke or a wipe removed the documents meanwhile."""
    if isinstance(last, datetime) and now - last < LAST_USED_EVERY:
        return
    try:
        ctx.store.write(Change("api_key.touch", [
            Write("update", paths.api_key_lookup(hashed), ApiKeyLookup(last_used_at=now).to_store()),
            Write("update", paths.api_key(caller.uid, caller.key_id), ApiKeyRecord(last_used_at=now).to_store())]))
    except Exception:  # noqa: BLE001 - bookkeeping: a revoked key (NotFound) or a busy store
        log.info("api key last_used_at not recorded", exc_info=True)

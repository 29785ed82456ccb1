"""Server keys: the credential of an app's own backend, acting on ``/v1`` for the user it names.

An app's server holds no user's Firebase ID token. The operator creates a server key for it
(``strata server-key create``, never through the API: no user may mint one); the backend presents
it as ``Authorization: Bearer strata_sk_…`` with ``X-Strata-User: <uid>`` naming the user it acts
for (:data:`USER_HEADER`, checked by :func:`core.api.auth.authenticate`). It is the mem0/Zep model:
one server credential plus the user id, with the same scopes as a personal key (``read``,
``read+write``; ``restricted`` for reads that show restricted memories).

A secret is ``strata_sk_`` and 43 characters of ``secrets.token_urlsafe(32)`` (256 random bits);
only its SHA-256 is stored, in two top-level documents:

* ``server_keys/{key_id}``: name, scope, ``restricted``, times, the digest, and once revoked
  ``revoked_at`` (kept, so that what the key wrote can still be listed after its revoke);
* ``server_key_hashes/{sha256 hex}``: the lookup a request reads (key id, scope, ``restricted``).
  Revoking deletes it first, so the next request answers 401.

``server_keys/{key_id}/users/{uid}`` records each user the key wrote for (created on its first write
request for that user), so revoking the key lists, per user,
the ledger commits and conversations that name it (:mod:`core.services.key_writes`). The account
wipe removes the user from those lists (:func:`forget_user`).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any, cast

from core.domain import credentials, paths
from core.domain.changes import Change
from core.domain.documents import ServerKeyLookup, ServerKeyRecord, ServerKeyUser
from core.errors import NotFound, Unauthorized
from core.ports import Ports, Write
from core.services import api_keys, key_writes

PREFIX = "strata_sk_"
SECRET_CHARS = len(PREFIX) + 43
USER_HEADER = "X-Strata-User"
MAX_KEYS = 100  # a listing is one bounded read


@dataclass(frozen=True)
class ServerKey:
    key_id: str
    scope: api_keys.Scope
    restricted: bool


def is_server_key(token: str) -> bool:
    return token.startswith(PREFIX)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


record_path, lookup_path = paths.server_key, paths.server_key_lookup


def acted_for_path(key_id: str, uid: str) -> str:
    return f"{paths.server_key_users(key_id)}/{uid}"


def _public(key_id: str, key: ServerKeyRecord) -> dict[str, Any]:
    return {"id": key_id, "name": "" if "name" in key.absent else key.name, "scope": key.scope,
            "restricted": key.restricted is True, "created_at": key.created_at, "last_used_at": key.last_used_at,
            "revoked_at": key.revoked_at}


def create(ctx: Ports, name: str, scope: api_keys.Scope, restricted: bool = False) -> dict[str, Any]:
    """A new server key: its listing fields and, this once, its ``secret`` (an operator's act)."""
    if scope not in api_keys.SCOPES:
        raise ValueError(f"unknown scope {scope!r}")
    if not name.strip():
        raise ValueError("a server key needs a name (what backend holds it)")
    secret = PREFIX + secrets.token_urlsafe(32)
    hashed = digest(secret)
    key_id = credentials.SERVER_KEY_ID_PREFIX + secrets.token_hex(8)
    now = ctx.now()
    record = ServerKeyRecord(name=name, scope=scope, restricted=restricted, created_at=now, hash=hashed,
                             nulls=frozenset({"last_used_at", "revoked_at"}))
    lookup = ServerKeyLookup(key_id=key_id, scope=scope, restricted=restricted, created_at=now)
    ctx.store.write(Change("server_key.create", [Write("set", record_path(key_id), record.to_store()),
                                                 Write("set", lookup_path(hashed), lookup.to_store())]))
    return {**_public(key_id, record), "secret": secret}


def list_keys(ctx: Ports) -> list[dict[str, Any]]:
    """Every server key, revoked ones included (never a secret or its hash), oldest first."""
    docs = ctx.store.scan(paths.SERVER_KEYS, limit=MAX_KEYS)
    keys = [_public(doc.id, ServerKeyRecord.from_store(doc.data)) for doc in docs]
    return sorted(keys, key=lambda k: (str(k["created_at"]), k["id"]))


def verify(ctx: Ports, secret: str) -> ServerKey:
    """The server key a presented secret is; 401 when it is unknown, revoked or malformed."""
    if not is_server_key(secret) or len(secret) != SECRET_CHARS:
        raise Unauthorized("unknown or revoked server key")
    found = ServerKeyLookup.from_store(ctx.store.get(lookup_path(digest(secret))))
    if found.scope not in api_keys.SCOPES or not isinstance(found.key_id, str):
        raise Unauthorized("unknown or revoked server key")
    return ServerKey(found.key_id, cast(api_keys.Scope, found.scope), found.restricted is True)


def record_user(ctx: Ports, key_id: str, uid: str) -> None:
    """Note that ``key_id`` writes for ``uid`` (before its write runs, so no write goes unlisted):
    what its revoke walks. A create that does nothing once the note exists: one more round trip per
    write request of a server key, and no per-process cache that an account wipe
    (:func:`forget_user`) would leave stale in other instances."""
    note = ServerKeyUser(uid=uid, first_write_at=ctx.now())
    ctx.store.write(Change("server_key.user_note", [Write("create", acted_for_path(key_id, uid), note.to_store())]))


def users_of(ctx: Ports, key_id: str) -> list[str]:
    """The users ``key_id`` wrote for, in id order."""
    out: list[str] = []
    after: str | None = None
    while True:
        page = ctx.store.scan(paths.server_key_users(key_id), limit=200, after=after, keys_only=True)
        out.extend(d.id for d in page)
        if len(page) < 200:
            return out
        after = page[-1].id


def forget_user(ctx: Ports, uid: str) -> int:
    """Remove ``uid`` from every server key's list of users it wrote for (the account wipe: the
    user's data goes, and with it what a listing would find; the keys are the operator's and stay)."""
    noted = [acted_for_path(k.id, uid) for k in ctx.store.scan(paths.SERVER_KEYS, limit=MAX_KEYS, keys_only=True)]
    found = [path for path, data in ctx.store.get_all(noted).items() if data is not None] if noted else []
    if found:
        ctx.store.write(Change("server_key.users_forget", [Write("delete", path) for path in found]))
    return len(found)


def writes(ctx: Ports, key_id: str) -> list[dict[str, Any]]:
    """What ``key_id`` wrote, per user it acted for (:func:`core.services.key_writes.written`)."""
    if ctx.store.get(record_path(key_id)) is None:
        raise NotFound("no such server key")
    return [{"uid": uid, **key_writes.written(ctx, uid, key_id)} for uid in users_of(ctx, key_id)]


def revoke(ctx: Ports, key_id: str) -> dict[str, Any]:
    """Revoke ``key_id`` (its next request is a 401) and list what it wrote. Idempotent."""
    stored = ctx.store.get(record_path(key_id))
    if stored is None:
        raise NotFound("no such server key")
    record = ServerKeyRecord.from_store(stored)
    revoked = ServerKeyRecord(revoked_at=record.revoked_at or ctx.now())
    batch = [Write("update", record_path(key_id), revoked.to_store())]
    if isinstance(record.hash, str):
        batch.insert(0, Write("delete", lookup_path(record.hash)))
    ctx.store.write(Change("server_key.revoke", batch))
    return {"id": key_id, "status": "revoked", "written": writes(ctx, key_id)}

"""Personal API keys on the in-memory store (issue 31): a key is shown once and stored only as a
hash, scoped ``read`` or ``read+write``, listed with a last-used time, revocable, and revoked by
the account wipe; the routes that take keys say which scope they need."""

from __future__ import annotations

import hashlib
import json

import pytest

from core.api import auth
from core.api.app import ROUTES
from core.domain import paths
from core.domain.changes import Change
from core.errors import Forbidden, Unauthorized, WritesBlocked
from core.ports import Write
from core.services import accounts, api_keys
from tests.unit.fakes.ports import World, world

UID = "u-keys"


def _stored_text(w: World) -> str:
    return json.dumps(w.store.docs, default=str)


def _bearer(secret: str) -> str:
    return f"Bearer {secret}"


def test_a_new_key_is_shown_once_with_a_recognisable_prefix_and_stored_only_as_its_sha256() -> None:
    w = world()
    created = api_keys.create(w.ctx, UID, "laptop agent", "read+write")
    secret = created["secret"]
    assert secret.startswith("strata_pk_") and len(secret) >= len("strata_pk_") + 40
    assert {"id", "name", "scope", "restricted", "created_at", "last_used_at", "secret"} == set(created)
    assert created["restricted"] is False  # a key sees no restricted memory unless made to
    assert (created["name"], created["scope"], created["last_used_at"]) == ("laptop agent", "read+write", None)
    stored = _stored_text(w)
    assert secret not in stored and secret[len("strata_pk_"):] not in stored
    hashed = hashlib.sha256(secret.encode()).hexdigest()
    assert w.store.get(f"api_key_hashes/{hashed}") is not None  # verification: one read, by the hash
    # Never shown again: the listing has no secret and no hash.
    [listed] = api_keys.list_keys(w.ctx, UID)
    assert listed == {k: v for k, v in created.items() if k != "secret"}
    assert hashed not in json.dumps(listed, default=str)


def test_two_keys_never_share_a_secret_or_an_id() -> None:
    w = world()
    a = api_keys.create(w.ctx, UID, "a", "read")
    w.clock.advance(seconds=1)  # listed oldest first: b is made a second later
    b = api_keys.create(w.ctx, UID, "b", "read")
    assert a["secret"] != b["secret"] and a["id"] != b["id"]
    assert [k["name"] for k in api_keys.list_keys(w.ctx, UID)] == ["a", "b"]


def test_a_verified_key_speaks_for_its_owner_with_its_scope() -> None:
    w = world()
    created = api_keys.create(w.ctx, UID, "reader", "read")
    caller = api_keys.verify(w.ctx, created["secret"])
    assert (caller.uid, caller.key_id, caller.scope) == (UID, created["id"], "read")


@pytest.mark.parametrize("secret", ["strata_pk_" + "x" * 43, "strata_pk_", "nope", "strata_pk_" + "x" * 500])
def test_an_unknown_or_malformed_key_is_unauthorized(secret: str) -> None:
    with pytest.raises(Unauthorized):
        api_keys.verify(world().ctx, secret)


def test_a_revoked_key_is_unauthorized_and_both_of_its_documents_are_gone() -> None:
    w = world()
    created = api_keys.create(w.ctx, UID, "agent", "read+write")
    kept = api_keys.create(w.ctx, UID, "other", "read")
    api_keys.revoke(w.ctx, UID, created["id"])
    with pytest.raises(Unauthorized):
        api_keys.verify(w.ctx, created["secret"])
    assert w.store.get(paths.api_key(UID, created["id"])) is None
    assert api_keys.digest(created["secret"]) not in _stored_text(w)
    assert [k["id"] for k in api_keys.list_keys(w.ctx, UID)] == [kept["id"]]
    assert api_keys.verify(w.ctx, kept["secret"]).uid == UID


def test_another_users_key_cannot_be_revoked_or_listed() -> None:
    from core.errors import NotFound

    w = world()
    created = api_keys.create(w.ctx, UID, "agent", "read")
    with pytest.raises(NotFound):
        api_keys.revoke(w.ctx, "someone-else", created["id"])
    assert api_keys.list_keys(w.ctx, "someone-else") == []
    assert api_keys.verify(w.ctx, created["secret"]).uid == UID


@pytest.mark.parametrize("scope,write,allowed", [("read", False, True), ("read", True, False),
                                                 ("read+write", False, True), ("read+write", True, True),
                                                 ("write", False, False), ("", False, False)])
def test_scopes(scope: str, write: bool, allowed: bool) -> None:
    assert api_keys.allows(scope, write) is allowed


def test_a_read_key_is_refused_a_write_and_an_id_token_is_not_scoped() -> None:
    reader = api_keys.KeyCaller(UID, "key_1", "read")
    with pytest.raises(Forbidden) as refused:
        api_keys.require(reader, write=True)
    assert (refused.value.status, refused.value.code) == (403, "key_scope")
    api_keys.require(reader, write=False)
    api_keys.require(api_keys.KeyCaller(UID, "key_2", "read+write"), write=True)
    api_keys.require(None, write=True)


def test_last_used_is_recorded_at_most_once_a_minute() -> None:
    w = world()
    created = api_keys.create(w.ctx, UID, "agent", "read")
    start = w.clock.now()
    api_keys.verify(w.ctx, created["secret"])
    [first] = api_keys.list_keys(w.ctx, UID)
    assert first["last_used_at"] == start
    w.clock.advance(seconds=30)
    api_keys.verify(w.ctx, created["secret"])
    assert api_keys.list_keys(w.ctx, UID)[0]["last_used_at"] == start  # no write within the minute
    w.clock.advance(seconds=31)
    api_keys.verify(w.ctx, created["secret"])
    assert api_keys.list_keys(w.ctx, UID)[0]["last_used_at"] == w.clock.now()


def test_the_account_wipe_revokes_every_key() -> None:
    w = world()
    secrets = [api_keys.create(w.ctx, UID, f"k{i}", "read+write")["secret"] for i in range(3)]
    other = api_keys.create(w.ctx, "someone-else", "theirs", "read")["secret"]
    assert accounts.delete_account(w.ctx, UID)["state"] == "completed"
    for secret in secrets:
        with pytest.raises(Unauthorized):
            api_keys.verify(w.ctx, secret)
    assert not [p for p in w.store.docs if p.startswith("api_key_hashes/")
                and (w.store.docs[p] or {}).get("uid") == UID]
    assert api_keys.list_keys(w.ctx, UID) == []
    assert api_keys.verify(w.ctx, other).uid == "someone-else"


def test_no_key_is_created_while_the_account_is_being_wiped() -> None:
    w = world()
    w.store.write(Change("test.seed", [Write("set", paths.account_deletion(UID), {"uid": UID, "state": "fenced", "generation": 1, "steps": {}})]))
    with pytest.raises(WritesBlocked):
        api_keys.create(w.ctx, UID, "late", "read+write")
    assert not list(w.store.children(paths.user(UID)))
    assert not [p for p in w.store.docs if p.startswith("api_key_hashes/")]


def test_a_key_is_refused_on_a_route_that_takes_an_id_token_only() -> None:
    w = world()
    created = api_keys.create(w.ctx, UID, "agent", "read+write")
    before = dict(w.store.docs)
    with pytest.raises(Unauthorized):
        auth.authenticate(_bearer(created["secret"]), w.ctx, None)
    assert w.store.docs == before  # not even its last-used time
    assert auth.authenticate(_bearer(created["secret"]), w.ctx, "read+write")[0] == UID
    reader = api_keys.create(w.ctx, UID, "reader", "read")["secret"]
    assert auth.authenticate(_bearer(reader), w.ctx, "read")[1].scope == "read"
    with pytest.raises(Forbidden):
        auth.authenticate(_bearer(reader), w.ctx, "read+write")


def test_keys_are_taken_on_v1_within_their_scope_except_by_the_id_token_routes() -> None:
    """docs/api.md (issue 45): every ``/v1`` route takes a personal key, ``read`` for a read and
    ``read+write`` for a write (the tool search reads), except key management, webhooks, the export
    and the account wipe; no route outside ``/v1`` takes one (``/mcp`` checks keys itself)."""
    id_token_only = {("POST", "/v1/keys"), ("GET", "/v1/keys"), ("DELETE", "/v1/keys/{key_id}"),
                     ("GET", "/v1/keys/{key_id}/writes"),
                     ("GET", "/v1/memories/export"), ("DELETE", "/v1/users/delete-account"),
                     *{(m, "/v1/users/developer/webhooks/{webhook_type}") for m in ("PUT", "GET", "DELETE")}}
    reads_by_post = {("POST", "/v1/tools/memories/search")}
    for r in ROUTES:
        key = (r.method, r.pattern)
        if not r.auth or not r.pattern.startswith("/v1/") or key in id_token_only:
            assert r.key_scope is None, key
        else:
            assert r.key_scope == ("read" if r.method == "GET" or key in reads_by_post else "read+write"), key

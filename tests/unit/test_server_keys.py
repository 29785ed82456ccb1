"""Server keys and the reads a credential may see, on the in-memory store (issue 45; docs/api.md,
*Server keys*, *Restricted memories*).

A server key is stored only as its SHA-256, acts for the user ``X-Strata-User`` names (required,
a user id), within its scope, and stops at once when revoked; ``X-Strata-User`` with another
credential must name that credential's own user. A key's reads see restricted memories only when
it was made with ``restricted``; the ID token and work outside a request see them all.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from core.api import auth
from core.domain import credentials
from core.domain.records import MemoryItem
from core.domain.visibility import readable
from core.errors import Forbidden, NotFound, Unauthorized
from core.ports import Write
from core.services import api_keys, key_writes, server_keys
from tests.support.seed import seed
from tests.unit.fakes.ports import world

UID = "u-backend"


def test_a_server_key_is_stored_only_as_its_sha256_and_acts_for_the_named_user() -> None:
    w = world()
    made = server_keys.create(w.ctx, "app backend", "read+write")
    secret = made["secret"]
    assert secret.startswith("strata_sk_") and len(secret) == server_keys.SECRET_CHARS
    assert made["id"].startswith("srv_") and made["restricted"] is False
    stored = json.dumps(w.store.docs, default=str)
    assert secret not in stored and hashlib.sha256(secret.encode()).hexdigest() in stored
    uid, caller = auth.authenticate(f"Bearer {secret}", w.ctx, "read+write", UID)
    assert (uid, caller.key_id, caller.scope, caller.restricted) == (UID, made["id"], "read+write", False)
    assert server_keys.users_of(w.ctx, made["id"]) == [UID]  # its first write for the user is noted
    assert credentials.of_request(caller.key_id, None) == {"kind": "server_key", "key_id": made["id"]}
    assert server_keys.list_keys(w.ctx)[0].keys() == {"id", "name", "scope", "restricted", "created_at",
                                                      "last_used_at", "revoked_at"}


@pytest.mark.parametrize("user", [None, "", "a/b", "..", "__x__", "x" * 129])
def test_a_server_key_without_a_user_id_is_a_401(user: str | None) -> None:
    w = world()
    secret = server_keys.create(w.ctx, "app backend", "read")["secret"]
    with pytest.raises(Unauthorized):
        auth.authenticate(f"Bearer {secret}", w.ctx, "read", user)


def test_unknown_revoked_out_of_scope_and_id_token_routes_are_refused() -> None:
    w = world()
    reader = server_keys.create(w.ctx, "reporting", "read")
    with pytest.raises(Forbidden):
        auth.authenticate(f"Bearer {reader['secret']}", w.ctx, "read+write", UID)
    assert server_keys.users_of(w.ctx, reader["id"]) == []  # a refused write is not noted
    with pytest.raises(Unauthorized):
        auth.authenticate(f"Bearer {reader['secret']}", w.ctx, None, UID)  # an ID-token-only route
    with pytest.raises(Unauthorized):
        auth.authenticate("Bearer strata_sk_" + "x" * 43, w.ctx, "read", UID)
    revoked = server_keys.revoke(w.ctx, reader["id"])
    assert revoked["status"] == "revoked" and revoked["written"] == []
    with pytest.raises(Unauthorized):
        auth.authenticate(f"Bearer {reader['secret']}", w.ctx, "read", UID)
    assert server_keys.list_keys(w.ctx)[0]["revoked_at"] is not None  # the record stays, for its listing
    with pytest.raises(NotFound):
        server_keys.revoke(w.ctx, "srv_0000000000000000")


LOCAL = {"auth_emulator_host": "127.0.0.1:9099", "firestore_emulator_host": "127.0.0.1:8080"}  # unsigned tokens


def test_the_user_header_with_another_credential_must_name_its_own_user() -> None:
    w = world(**LOCAL)
    token = f"Bearer {auth.emulator_token(UID, w.ctx.settings.project_id)}"
    assert auth.authenticate(token, w.ctx, "read", UID)[0] == UID
    with pytest.raises(Forbidden) as refused:
        auth.authenticate(token, w.ctx, "read", "someone-else")
    assert refused.value.code == "acting_user"
    key = api_keys.create(w.ctx, UID, "agent", "read")
    with pytest.raises(Forbidden):
        auth.authenticate(f"Bearer {key['secret']}", w.ctx, "read", "someone-else")


def test_app_project_tokens_are_accepted_only_when_listed() -> None:
    w = world(**LOCAL)
    token = f"Bearer {auth.emulator_token(UID, 'app-project')}"
    with pytest.raises(Unauthorized):
        auth.uid_from_authorization(token, w.ctx.settings)
    listed = w.ctx.settings.replace(firebase_audiences=" app-project , other-app ")
    assert auth.audiences(listed) == (listed.project_id, "app-project", "other-app")
    assert auth.uid_from_authorization(token, listed) == UID


def _item(restricted: bool) -> MemoryItem:
    item = MemoryItem(id="m1", uid=UID, content="x", sensitivity_labels=["health"] if restricted else []).settle()
    assert item.restricted is restricted
    return item


def test_a_key_reads_restricted_memories_only_when_made_to() -> None:
    plain, restricted = _item(False), _item(True)
    assert readable(plain) and readable(restricted)  # outside a request: everything
    with credentials.reading_as(None):  # the user's ID token
        assert readable(restricted)
    with credentials.reading_as(api_keys.KeyCaller(UID, "key_1", "read+write")):
        assert readable(plain) and not readable(restricted)
    with credentials.reading_as(api_keys.KeyCaller(UID, "key_2", "read", restricted=True)):
        assert readable(restricted)
    assert readable(restricted)  # reset after the request


def test_what_a_key_wrote_names_conversations_in_an_apps_own_collection() -> None:
    """``STRATA_CONVERSATIONS_PATH`` of another collection id: the listing finds the key's
    conversations there (docs/api.md, ``DELETE /v1/keys/{key_id}``)."""
    w = world(conversations_path="chats/{uid}/threads")
    try:
        for conversation_id, creator in (("t1", "key_a"), ("t2", "key_b"), ("t3", "key_a")):
            seed(w.store, [Write("set", f"chats/{UID}/threads/{conversation_id}", {"created_by": {"kind": "personal_key",
                                                                               "key_id": creator}})])
        seed(w.store, [Write("set", f"users/{UID}/conversations/c9", {"created_by": {"kind": "personal_key", "key_id": "key_a"}})])
        assert key_writes._conversations(w.ctx, UID, "key_a") == (["t1", "t3"], False)
    finally:
        world()  # the default layout again for the tests after this one


def test_a_caller_without_the_user_header_takes_no_server_key() -> None:
    """``/mcp`` passes no ``X-Strata-User``: a server key there is a 401 saying where it belongs."""
    w = world()
    secret = server_keys.create(w.ctx, "app backend", "read")["secret"]
    with pytest.raises(Unauthorized) as refused:
        auth.authenticate(f"Bearer {secret}", w.ctx, "read")
    assert "/v1" in refused.value.message


@pytest.mark.parametrize("data_root", ["server_keys/{uid}", "server_key_hashes/{uid}"])
def test_an_apps_data_root_cannot_be_a_server_key_collection(data_root: str) -> None:
    """Users' roots in ``server_keys`` would sit beside the key records (docs/configuration.md)."""
    from core.domain import paths

    assert paths.layout_problems(data_root, paths.DEFAULT_CONVERSATIONS_PATH)


def test_the_account_wipe_removes_the_user_from_a_keys_list_and_a_later_write_notes_them_again() -> None:
    from core.services import accounts

    w = world()
    key = server_keys.create(w.ctx, "app backend", "read+write")
    for uid in (UID, "u-other"):
        auth.authenticate(f"Bearer {key['secret']}", w.ctx, "read+write", uid)
    assert accounts.delete_account(w.ctx, UID)["state"] == "completed"
    assert server_keys.users_of(w.ctx, key["id"]) == ["u-other"]  # the key itself stays
    assert auth.authenticate(f"Bearer {key['secret']}", w.ctx, "read", UID)[0] == UID
    auth.authenticate(f"Bearer {key['secret']}", w.ctx, "read+write", UID)
    assert server_keys.users_of(w.ctx, key["id"]) == [UID, "u-other"]

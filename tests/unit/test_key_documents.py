"""What the key services store is built and read as typed documents, byte for byte as before.

Every write of :mod:`core.services.api_keys` and :mod:`core.services.server_keys` is pinned here as
the exact dict it carries (keys present, values, null vs absent), for each scope and ``restricted``;
a stored key document reads and writes back unchanged, and the answers built from odd stored ones
(a field absent or null) stay what they were.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.domain.changes import Change
from core.domain.documents import ApiKeyLookup, ApiKeyRecord, ServerKeyLookup, ServerKeyRecord, ServerKeyUser
from core.services import api_keys, server_keys
from tests.unit.fakes.ports import World, world

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)  # the fake clock's start
SCOPES = [(scope, restricted) for scope in api_keys.SCOPES for restricted in (False, True)]


def _recorded(w: World) -> list[tuple[str, list[tuple[str, str, Any]]]]:
    """Every change the services write from now on, as (name, [(op, path, data)])."""
    log: list[tuple[str, list[tuple[str, str, Any]]]] = []
    write = w.ctx.store.write

    def record(change: Change) -> Any:
        log.append((change.name, [(x.op, x.path, x.data) for x in change.writes]))
        return write(change)

    w.ctx.store.write = record  # type: ignore[method-assign]
    return log


@pytest.fixture(autouse=True)
def _fixed_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    count = itertools.count()
    monkeypatch.setattr("secrets.token_urlsafe", lambda n=32: f"S{next(count):042d}")
    monkeypatch.setattr("secrets.token_hex", lambda n=8: f"{next(count):016d}")


@pytest.mark.parametrize(("scope", "restricted"), SCOPES)
def test_a_personal_key_writes_its_record_lookup_and_touch_exactly(scope: api_keys.Scope, restricted: bool) -> None:
    w = world()
    log = _recorded(w)
    made = api_keys.create(w.ctx, "u1", "agent", scope, restricted)
    key_id, hashed = made["id"], api_keys.digest(made["secret"])
    w.clock.advance(seconds=61)
    api_keys.verify(w.ctx, made["secret"])
    api_keys.verify(w.ctx, made["secret"])  # within the minute: no write
    api_keys.revoke(w.ctx, "u1", key_id)
    t1 = T0 + timedelta(seconds=61)
    assert log == [
        ("api_key.create", [
            ("set", f"users/u1/api_keys/{key_id}", {"name": "agent", "scope": scope, "restricted": restricted,
                                                    "created_at": T0, "last_used_at": None, "hash": hashed}),
            ("set", f"api_key_hashes/{hashed}", {"uid": "u1", "key_id": key_id, "scope": scope,
                                                 "restricted": restricted, "created_at": T0, "last_used_at": None})]),
        ("api_key.touch", [("update", f"api_key_hashes/{hashed}", {"last_used_at": t1}),
                           ("update", f"users/u1/api_keys/{key_id}", {"last_used_at": t1})]),
        ("api_key.revoke", [("delete", f"api_key_hashes/{hashed}", None),
                            ("delete", f"users/u1/api_keys/{key_id}", None)]),
    ]
    assert made == {"id": key_id, "name": "agent", "scope": scope, "restricted": restricted, "created_at": T0,
                    "last_used_at": None, "secret": made["secret"]}


def test_the_wipe_deletes_each_lookup_first_and_a_record_without_a_hash_alone() -> None:
    w = world()
    made = api_keys.create(w.ctx, "u2", "a", "read")
    w.store.put("users/u2/api_keys/key_old", {"name": "legacy", "scope": "read", "hash": None})
    log = _recorded(w)
    assert api_keys.revoke_all(w.ctx, "u2") == 2
    assert log == [("api_key.revoke_all", [("delete", f"api_key_hashes/{api_keys.digest(made['secret'])}", None),
                                           ("delete", f"users/u2/api_keys/{made['id']}", None),
                                           ("delete", "users/u2/api_keys/key_old", None)])]


@pytest.mark.parametrize(("scope", "restricted"), SCOPES)
def test_a_server_key_writes_its_record_lookup_user_note_and_revoke_exactly(scope: api_keys.Scope,
                                                                             restricted: bool) -> None:
    w = world()
    log = _recorded(w)
    made = server_keys.create(w.ctx, "backend", scope, restricted)
    key_id, hashed = made["id"], server_keys.digest(made["secret"])
    server_keys.record_user(w.ctx, key_id, "uA")
    w.clock.advance(seconds=5)
    server_keys.revoke(w.ctx, key_id)
    w.clock.advance(seconds=5)
    server_keys.revoke(w.ctx, key_id)  # again: the first revoke's time stays
    revoked = T0 + timedelta(seconds=5)
    assert log == [
        ("server_key.create", [
            ("set", f"server_keys/{key_id}", {"name": "backend", "scope": scope, "restricted": restricted,
                                              "created_at": T0, "last_used_at": None, "revoked_at": None,
                                              "hash": hashed}),
            ("set", f"server_key_hashes/{hashed}", {"key_id": key_id, "scope": scope, "restricted": restricted,
                                                    "created_at": T0})]),
        ("server_key.user_note", [("create", f"server_keys/{key_id}/users/uA", {"uid": "uA", "first_write_at": T0})]),
        ("server_key.revoke", [("delete", f"server_key_hashes/{hashed}", None),
                               ("update", f"server_keys/{key_id}", {"revoked_at": revoked})]),
        ("server_key.revoke", [("delete", f"server_key_hashes/{hashed}", None),  # the record keeps its hash
                               ("update", f"server_keys/{key_id}", {"revoked_at": revoked})]),
    ]
    assert server_keys.list_keys(w.ctx) == [{"id": key_id, "name": "backend", "scope": scope, "restricted": restricted,
                                             "created_at": T0, "last_used_at": None, "revoked_at": revoked}]


@pytest.mark.parametrize(("cls", "data"), [
    (ApiKeyRecord, {"name": "a", "scope": "read", "restricted": False, "created_at": T0, "last_used_at": None,
                    "hash": "h"}),
    (ApiKeyRecord, {"name": None, "scope": "read", "extra": [1]}),
    (ApiKeyRecord, {}),
    (ApiKeyLookup, {"uid": "u", "key_id": "k", "scope": "read+write", "restricted": True, "created_at": T0,
                    "last_used_at": T0}),
    (ApiKeyLookup, {"uid": "u", "scope": "read", "key_id": None}),
    (ServerKeyRecord, {"name": "b", "scope": "read", "restricted": True, "created_at": T0, "last_used_at": None,
                       "revoked_at": None, "hash": "h"}),
    (ServerKeyRecord, {"revoked_at": T0, "note": "kept"}),
    (ServerKeyLookup, {"key_id": "srv_1", "scope": "read", "restricted": False, "created_at": T0}),
    (ServerKeyUser, {"uid": "u", "first_write_at": T0}),
])
def test_a_stored_key_document_reads_and_writes_back_unchanged(cls: Any, data: dict[str, Any]) -> None:
    assert cls.from_store(data).to_store() == data


def test_answers_from_odd_stored_keys_stay_as_they_were() -> None:
    w = world()
    w.store.put("users/u3/api_keys/key_bare", {})
    w.store.put("users/u3/api_keys/key_null", {"name": None, "restricted": "yes"})
    assert api_keys.list_keys(w.ctx, "u3") == [
        {"id": "key_bare", "name": "", "scope": None, "restricted": False, "created_at": None, "last_used_at": None},
        {"id": "key_null", "name": None, "scope": None, "restricted": False, "created_at": None, "last_used_at": None}]
    w.store.put("server_keys/srv_bare", {})
    assert server_keys.list_keys(w.ctx) == [{"id": "srv_bare", "name": "", "scope": None, "restricted": False,
                                             "created_at": None, "last_used_at": None, "revoked_at": None}]
    no_id, null_id = "strata_pk_" + "x" * 43, "strata_pk_" + "y" * 43
    w.store.put(f"api_key_hashes/{api_keys.digest(no_id)}", {"uid": "u3", "scope": "read", "last_used_at": T0})
    w.store.put(f"api_key_hashes/{api_keys.digest(null_id)}", {"uid": "u3", "scope": "read", "key_id": None,
                                                               "last_used_at": T0})
    assert api_keys.verify(w.ctx, no_id).key_id == ""
    assert api_keys.verify(w.ctx, null_id).key_id == "None"

"""`strata uid-hash`: a uid's keyed hash, and the user a hash names among those the store lists."""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import Any

import pytest

from core import logs
from core.domain import paths
from strata_dev.cli import uid_hash_cmd


class _Store:
    def __init__(self, collections: dict[str, list[str]]) -> None:
        self.collections = collections

    def children(self, collection: str) -> list[str]:
        return list(self.collections.get(collection, []))


def _ctx(**collections: list[str]) -> Any:
    return SimpleNamespace(store=_Store(collections))


def test_find_names_the_user_whose_keyed_hash_it_is() -> None:
    ctx = _ctx(users=["alice", "bob"], consolidation_schedule=["bob", "carol"], account_deletions=["dave"])
    for uid in ("alice", "carol", "dave"):
        matches, searched = uid_hash_cmd.find(ctx, logs.hash_uid(uid, "k"), key="k")
        assert matches == [uid] and searched == 4  # bob once
    assert uid_hash_cmd.find(ctx, logs.hash_uid("alice", "other"), key="k")[0] == []


def test_find_lists_the_apps_conversation_users_too() -> None:
    paths.configure("strata_users/{uid}", "chats/{uid}/threads")
    try:
        ctx = _ctx(strata_users=["a"], chats=["only-chatted"])
        assert uid_hash_cmd.find(ctx, logs.hash_uid("only-chatted", "k"), key="k")[0] == ["only-chatted"]
    finally:
        paths.configure()


def test_the_command_prints_hashes_and_exits_1_when_nobody_matches(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(uid_hash_cmd, "_context", lambda: _ctx(users=["alice"]))
    monkeypatch.setattr(uid_hash_cmd, "_warn_unkeyed", lambda: None)
    args = argparse.Namespace(uid=["alice"], find=None, json=False)
    assert uid_hash_cmd.cmd_uid_hash(args) == 0
    assert capsys.readouterr().out == f"alice  {logs.hash_uid('alice')}\n"
    assert uid_hash_cmd.cmd_uid_hash(argparse.Namespace(uid=[], find=logs.hash_uid("alice"), json=False)) == 0
    assert capsys.readouterr().out == "alice\n"
    assert uid_hash_cmd.cmd_uid_hash(argparse.Namespace(uid=[], find="uh_0000000000000000", json=False)) == 1

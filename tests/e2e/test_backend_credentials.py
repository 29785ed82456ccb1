"""The app's backend on ``/v1`` (issue 45; docs/api.md, *Server keys*, *Personal API keys*).

Over real HTTP on the stack, with the operator's command (``strata server-key``) run as a process:

* a server key acts for the user ``X-Strata-User`` names, within its scope; a missing or malformed
  header, an unknown or revoked key and a key on an ID-token-only route are 401, a ``read`` server
  key's write and an ID token naming another user are 403; only the secret's SHA-256 is stored;
* every write it makes records ``{"kind": "server_key", "key_id"}``, and ``strata server-key revoke``
  prints, per user it acted for, the memories its commits touched and the conversations it created;
* revoking a personal key answers what it wrote, and ``GET /v1/keys/{id}/writes`` answers it again;
* a key without ``restricted`` never receives a restricted memory (list, get, history, tool list);
  one made with ``restricted``, and the user's ID token, do.

The expectations come from the documented rules (which credential wrote what, which labels are
restricted: core/adapters/rules/sensitivity.py's documented health label), not from the code's listings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
REPO = Path(__file__).resolve().parents[2]
HEALTH = "I have type 1 diabetes"  # a health statement: stored, flagged restricted
PLAIN = "I cycle to work along the canal"


def _token(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def _uid() -> str:
    return f"backend-{uuid.uuid4().hex[:12]}"


def strata(*args: str) -> subprocess.CompletedProcess[str]:
    """``strata server-key …`` as an operator runs it, against the
    session's stack (this process's environment names its emulators)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "strata_dev.cli.main", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def _server_key(scope: str, *extra: str) -> dict[str, Any]:
    made = strata("server-key", "create", "--name", f"app backend {scope}", "--scope", scope, *extra, "--json")
    assert made.returncode == 0, made.stderr
    return dict(json.loads(made.stdout))


def _as(key: dict[str, Any], uid: str | None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key['secret']}"}
    if uid is not None:
        headers["X-Strata-User"] = uid
    return headers


def _commits(ctx: Context, uid: str) -> list[dict[str, Any]]:
    rows = [s.to_dict() for s in ctx.client.collection(f"users/{uid}/memory_commits").stream()]
    return sorted(rows, key=lambda c: c["sequence"])


def _create(http: httpx.Client, content: str, headers: dict[str, str]) -> str:
    made = http.post("/v1/memories", json={"content": content}, headers=headers)
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def test_a_server_key_acts_for_the_named_user_and_is_stored_hashed(http: httpx.Client) -> None:
    ctx, alice, bob = Context(), _uid(), _uid()
    key = _server_key("read+write")
    assert key["secret"].startswith("strata_sk_") and key["id"].startswith("srv_"), key
    stored = [d.to_dict() for name in ("server_keys", "server_key_hashes")
              for d in ctx.client.collection(name).stream()]
    assert stored and key["secret"] not in json.dumps(stored, default=str)

    first = _create(http, "I keep bees on the roof", _as(key, alice))
    second = _create(http, "I play the oboe on Sundays", _as(key, bob))
    # Each acts for its own user only: alice's memory is bob's 404, and the user's token sees it.
    listed = http.get("/v1/memories", headers=_as(key, alice)).json()["memories"]
    assert [m["id"] for m in listed] == [first]
    assert http.get(f"/v1/memories/{first}", headers=_as(key, bob)).status_code == 404
    assert [m["id"] for m in http.get("/v1/memories", headers=_token(bob)).json()["memories"]] == [second]
    # The ID token of the user it names, with the header, is that user; naming another is a 403.
    assert http.get("/v1/memories", headers={**_token(alice), "X-Strata-User": alice}).status_code == 200
    other = http.get("/v1/memories", headers={**_token(alice), "X-Strata-User": bob})
    assert other.status_code == 403 and other.json()["error"]["code"] == "acting_user", other.text


def test_a_server_key_is_refused_without_its_user_unknown_revoked_or_out_of_scope(http: httpx.Client) -> None:
    uid = _uid()
    writer, reader = _server_key("read+write"), _server_key("read")
    for headers, why in ((_as(writer, None), "no X-Strata-User"),
                         (_as(writer, ""), "an empty X-Strata-User"),
                         (_as(writer, "../etc"), "not a user id"),
                         ({**_as(writer, uid), "Authorization": "Bearer strata_sk_" + "x" * 43}, "unknown key")):
        answer = http.get("/v1/memories", headers=headers)
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized", (why, answer.text)
    assert "X-Strata-User" in http.get("/v1/memories", headers=_as(writer, None)).json()["error"]["message"]
    # A read key reads, and its write is a 403 that writes nothing.
    assert http.get("/v1/memories", headers=_as(reader, uid)).status_code == 200
    refused = http.post("/v1/memories", json={"content": "I own a red kayak"}, headers=_as(reader, uid))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "key_scope", refused.text
    assert http.get("/v1/memories", headers=_token(uid)).json()["memories"] == []
    # The routes that take the user's own ID token only refuse it.
    for method, path in (("GET", "/v1/keys"), ("GET", "/v1/memories/export"), ("DELETE", "/v1/users/delete-account")):
        answer = http.request(method, path, headers=_as(writer, uid))
        assert answer.status_code == 401, (path, answer.text)
    # Not /mcp (it names no user): a 401 that says where the key belongs.
    mcp = http.post("/mcp", headers={**_as(writer, uid), "Accept": "application/json, text/event-stream"},
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert mcp.status_code == 401 and "/v1" in mcp.json()["error"]["message"], mcp.text
    # Revoked: the next request is a 401.
    revoked = strata("server-key", "revoke", reader["id"], "--json")
    assert revoked.returncode == 0, revoked.stderr
    assert http.get("/v1/memories", headers=_as(reader, uid)).status_code == 401
    assert strata("server-key", "revoke", "srv_0000000000000000").returncode == 1  # unknown: says so


def test_every_server_key_write_records_it_and_its_revoke_lists_them(http: httpx.Client) -> None:
    ctx, alice, bob = Context(), _uid(), _uid()
    key = _server_key("read+write")
    own = _create(http, "I speak Portuguese", _token(alice))  # the user's own write: not the key's
    made = _create(http, "I grow tomatoes on the balcony", _as(key, alice))
    edited = http.patch(f"/v1/memories/{made}", json={"content": "I grow tomatoes and basil"},
                        headers=_as(key, alice))
    assert edited.status_code == 200, edited.text
    conversation = http.post("/v1/conversations", headers=_as(key, bob), json={
        "id": "c-backend", "transcript_segments": [{"id": "s1", "text": "I moved to Porto.", "is_user": True}]})
    assert conversation.status_code == 201, conversation.text
    by_key = {"kind": "server_key", "key_id": key["id"]}
    commits = [c for c in _commits(ctx, alice) if "credential" in c]
    assert {c["credential"]["kind"] for c in commits} == {"id_token", "server_key"}
    key_commits = [c for c in commits if c["credential"]["kind"] == "server_key"]
    assert len(key_commits) >= 2 and all(c["credential"] == by_key for c in key_commits), key_commits
    stored = ctx.client.document(f"users/{bob}/conversations/c-backend").get().to_dict()
    assert stored["created_by"] == by_key

    revoked = strata("server-key", "revoke", key["id"], "--json")
    assert revoked.returncode == 0, revoked.stderr
    answer = json.loads(revoked.stdout)
    assert answer["id"] == key["id"] and answer["status"] == "revoked"
    per_user = {row["uid"]: row for row in answer["written"]}
    assert set(per_user) == {alice, bob}
    assert per_user[alice]["memory_ids"] == [made] and per_user[alice]["commits"] == len(key_commits)
    assert own not in per_user[alice]["memory_ids"] and per_user[alice]["conversation_ids"] == []
    assert per_user[bob]["conversation_ids"] == ["c-backend"] and per_user[bob]["memory_ids"] == []
    assert http.get("/v1/memories", headers=_as(key, alice)).status_code == 401
    again = strata("server-key", "writes", key["id"], "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["written"] == answer["written"], again.stderr
    listed = json.loads(strata("server-key", "list", "--json").stdout)["keys"]
    mine = next(k for k in listed if k["id"] == key["id"])
    assert mine["revoked_at"] and "secret" not in mine and "hash" not in mine


def test_revoking_a_personal_key_answers_what_it_wrote(http: httpx.Client) -> None:
    uid = _uid()
    own = _create(http, "I collect vinyl records", _token(uid))
    key = http.post("/v1/keys", json={"name": "agent", "scope": "read+write"}, headers=_token(uid)).json()
    agent = {"Authorization": f"Bearer {key['secret']}"}
    made = _create(http, "I run every Tuesday evening", agent)
    assert http.delete(f"/v1/memories/{own}", headers=agent).status_code == 200
    conversation = http.post("/v1/conversations", headers=agent, json={
        "id": "c-agent", "transcript_segments": [{"id": "s1", "text": "I adopted a cat.", "is_user": True}]})
    assert conversation.status_code == 201, conversation.text

    revoked = http.delete(f"/v1/keys/{key['id']}", headers=_token(uid))
    assert revoked.status_code == 200, revoked.text
    body = revoked.json()
    assert body["id"] == key["id"] and body["status"] == "revoked"
    written = body["written"]
    assert written["memory_ids"] == sorted([made, own]) and written["conversation_ids"] == ["c-agent"]
    assert written["commits"] >= 2 and written["truncated"] is False
    assert http.get("/v1/memories", headers=agent).status_code == 401
    later = http.get(f"/v1/keys/{key['id']}/writes", headers=_token(uid))
    assert later.status_code == 200 and later.json() == written, later.text
    # Another user's listing of the same key id is their own account's: empty.
    assert http.get(f"/v1/keys/{key['id']}/writes", headers=_token(_uid())).json()["memory_ids"] == []
    assert http.get(f"/v1/keys/{key['id']}/writes", headers=agent).status_code == 401  # ID token only


def _listed(http: httpx.Client, headers: dict[str, str]) -> set[str]:
    answer = http.get("/v1/memories", headers=headers)
    assert answer.status_code == 200, answer.text
    return {m["id"] for m in answer.json()["memories"]}


def test_a_key_receives_restricted_memories_only_when_its_scope_says_so(http: httpx.Client) -> None:
    ctx, uid = Context(), _uid()
    health, plain = _create(http, HEALTH, _token(uid)), _create(http, PLAIN, _token(uid))
    assert ctx.client.document(f"users/{uid}/memory_items/{health}").get().to_dict()["restricted"] is True
    assert ctx.client.document(f"users/{uid}/memory_items/{plain}").get().to_dict()["restricted"] is False

    def key(scope: str, restricted: bool) -> dict[str, str]:
        made = http.post("/v1/keys", json={"name": "k", "scope": scope, "restricted": restricted}, headers=_token(uid))
        assert made.status_code == 201 and made.json()["restricted"] is restricted, made.text
        return {"Authorization": f"Bearer {made.json()['secret']}"}

    plain_reader, plain_writer, trusted = key("read", False), key("read+write", False), key("read", True)
    server, trusted_server = _server_key("read"), _server_key("read", "--restricted")
    for headers in (plain_reader, plain_writer, _as(server, uid)):
        assert _listed(http, headers) == {plain}
        for path in (f"/v1/memories/{health}", f"/v1/memories/{health}/history"):
            answer = http.get(path, headers=headers)
            assert answer.status_code == 404, (path, answer.text)
        assert http.get(f"/v1/memories/{plain}", headers=headers).status_code == 200
        tools = http.get("/v1/tools/memories", headers=headers).json()["result_text"]
        assert plain in tools and health not in tools and "diabetes" not in tools
    for headers in (trusted, _as(trusted_server, uid), _token(uid)):
        assert _listed(http, headers) == {plain, health}
        assert http.get(f"/v1/memories/{health}", headers=headers).json()["content"] == HEALTH
    keys = http.get("/v1/keys", headers=_token(uid)).json()["keys"]
    assert sorted(k["restricted"] for k in keys) == [False, False, True]



def test_a_browser_is_not_allowed_to_send_the_user_header(http: httpx.Client) -> None:
    """A server key is a server's secret: the CORS preflight does not allow ``X-Strata-User``."""
    answer = http.options("/v1/memories", headers={"Origin": "http://localhost:3000",
                                                   "Access-Control-Request-Method": "GET",
                                                   "Access-Control-Request-Headers": "authorization, x-strata-user"})
    assert answer.status_code == 204, answer.text
    allowed = {h.strip().lower() for h in answer.headers.get("access-control-allow-headers", "").split(",")}
    assert "authorization" in allowed and "x-strata-user" not in allowed, allowed

"""infra/firestore.rules, enforced by the Firestore emulator, over the REST API a client uses.

An app signed in as ``uid`` may write and read its own conversations; every other client write or
read is denied (403), whatever the collection: memory items included (their processing state,
receipts and rejected content are internals; clients read memories through the API).
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from strata_dev.localstack.tokens import emulator_token

pytestmark = pytest.mark.integration


def _uid() -> str:
    return "rules-" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="module")
def docs(stack: dict[str, Any]) -> str:
    return f"http://{stack['firestore_emulator_host']}/v1/projects/{stack['project_id']}/databases/(default)/documents"


def _call(method: str, url: str, uid: str | None, body: dict[str, Any] | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {emulator_token(uid)}"} if uid else {}
    return httpx.request(method, url, headers=headers, json=body, timeout=30.0)


def _fields(**values: str) -> dict[str, Any]:
    return {"fields": {k: {"stringValue": v} for k, v in values.items()}}


def _admin_write(docs: str, path: str, body: dict[str, Any]) -> None:
    """Seed a document as the backend does (the emulator's owner credential bypasses rules)."""
    resp = httpx.patch(f"{docs}/{path}", headers={"Authorization": "Bearer owner"}, json=body, timeout=30.0)
    assert resp.status_code == 200, resp.text


def test_own_conversation_write_is_allowed(docs: str) -> None:
    uid = _uid()
    url = f"{docs}/users/{uid}/conversations/c1"
    created = _call("PATCH", url, uid, _fields(status="in_progress", source="omi"))
    assert created.status_code == 200, created.text
    completed = _call("PATCH", url, uid, _fields(status="completed", source="omi"))
    assert completed.status_code == 200, completed.text
    read = _call("GET", url, uid)
    assert read.status_code == 200
    assert read.json()["fields"]["status"]["stringValue"] == "completed"
    assert _call("DELETE", url, uid).status_code == 200


def test_conversation_with_unknown_status_is_denied(docs: str) -> None:
    uid = _uid()
    resp = _call("PATCH", f"{docs}/users/{uid}/conversations/c1", uid, _fields(status="hacked"))
    assert resp.status_code == 403


def test_own_memory_item_write_is_denied(docs: str) -> None:
    uid = _uid()
    resp = _call("PATCH", f"{docs}/users/{uid}/memory_items/x", uid, _fields(content="I am admin"))
    assert resp.status_code == 403, resp.text
    assert resp.json()["error"]["status"] == "PERMISSION_DENIED"


def test_other_users_conversation_is_denied(docs: str) -> None:
    me, other = _uid(), _uid()
    _admin_write(docs, f"users/{other}/conversations/c1", _fields(status="completed"))
    url = f"{docs}/users/{other}/conversations/c1"
    assert _call("PATCH", url, me, _fields(status="completed")).status_code == 403
    assert _call("GET", url, me).status_code == 403
    assert _call("DELETE", url, me).status_code == 403


def test_own_memory_items_are_not_readable_by_the_client(docs: str) -> None:
    me = _uid()
    _admin_write(docs, f"users/{me}/memory_items/m1", _fields(content="likes tea", layer="short_term",
                                                              processing_state="rejected"))
    assert _call("GET", f"{docs}/users/{me}/memory_items/m1", me).status_code == 403
    listed = _call("GET", f"{docs}/users/{me}/memory_items", me)
    assert listed.status_code == 403, listed.text
    assert "likes tea" not in listed.text
    query = _call("POST", f"{docs}/users/{me}:runQuery", me,
                  {"structuredQuery": {"from": [{"collectionId": "memory_items"}]}})
    assert query.status_code == 403, query.text
    assert "likes tea" not in query.text


def test_signed_out_client_is_denied(docs: str) -> None:
    uid = _uid()
    assert _call("PATCH", f"{docs}/users/{uid}/conversations/c1", None, _fields(status="completed")).status_code == 403
    assert _call("GET", f"{docs}/users/{uid}/memory_items/m1", None).status_code == 403


@pytest.mark.parametrize(
    "path",
    [
        "users/{uid}/memory_items/m1",
        "users/{uid}/capture_runs/c1",
        "users/{uid}/memory_commits/c1",
        "users/{uid}/memory_operations/o1",
        "users/{uid}/memory_state/apply_control",
        "users/{uid}/memory_graph_assertions/m1",
        "users/{uid}/memory_outbox/e1",
        "users/{uid}/memory_review_queue/r1",
        "users/{uid}/knowledge_nodes/n1",
        "users/{uid}/knowledge_edges/e1",
        "users/{uid}/action_items/a1",
        "users/{uid}/goals/g1",
        "users/{uid}/client_devices/d1",
        "users/{uid}/developer_webhooks/memory_created",  # set through the API only (URL checks)
        "users/{uid}/webhook_deliveries/w1",
        "users/{uid}/memories/m1",
        "users/{uid}/short_term/s1",
        "users/{uid}/api_keys/key_0123456789abcdef",  # personal API keys: managed through /v1/keys only
        "api_key_hashes/" + "0" * 64,
        "server_keys/srv_0123456789abcdef",  # an operator's server keys: `strata server-key` only
        "server_key_hashes/" + "0" * 64,
        "server_keys/srv_0123456789abcdef/users/{uid}",
        "users/{uid}",
        "account_deletions/{uid}",
        "memory_controls/global",
    ],
)
def test_backend_owned_documents_are_closed_to_clients(docs: str, path: str) -> None:
    uid = _uid()
    url = f"{docs}/{path.format(uid=uid)}"
    assert _call("PATCH", url, uid, _fields(x="y")).status_code == 403
    assert _call("DELETE", url, uid).status_code == 403
    assert _call("GET", url, uid).status_code == 403

"""Strata's rules fragment merged into an app's own firestore.rules, enforced by the Firestore
emulator.

The existing-project mode never releases rules: the app merges ``infra/rules/strata.rules`` into
its file (``strata rules merge``) and releases the result. This test merges the sample app file
(examples/app-rules/firestore.rules: profiles, notes, a public catalogue), loads the merged file
into the stack's emulator under a project of its own (the shared stack's rules stay as they are)
and checks, over the REST API a client uses: the app's collections keep the app's rules (the owner
reads and writes their notes, another user cannot), Strata's conversations keep Strata's rules,
and every backend-owned document stays closed.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from strata_dev import rules
from strata_dev.localstack.tokens import emulator_token

pytestmark = pytest.mark.integration

APP_RULES = Path(__file__).resolve().parents[2] / "examples" / "app-rules" / "firestore.rules"
PROJECT = "demo-merged-rules"


@pytest.fixture(scope="module")
def docs(stack: dict[str, Any]) -> str:
    merged = rules.merge(APP_RULES.read_text(encoding="utf-8"))
    host = stack["firestore_emulator_host"]
    loaded = httpx.put(f"http://{host}/emulator/v1/projects/{PROJECT}:securityRules",
                       json={"rules": {"files": [{"name": "firestore.rules", "content": merged}]}}, timeout=60.0)
    assert loaded.status_code == 200, loaded.text
    return f"http://{host}/v1/projects/{PROJECT}/databases/(default)/documents"


def _uid() -> str:
    return "merged-" + uuid.uuid4().hex[:12]


def _call(method: str, url: str, uid: str | None, body: dict[str, Any] | None = None) -> int:
    headers = {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"} if uid else {}
    return httpx.request(method, url, headers=headers, json=body, timeout=30.0).status_code


def _fields(**values: str) -> dict[str, Any]:
    return {"fields": {k: {"stringValue": v} for k, v in values.items()}}


def _admin_write(docs: str, path: str, body: dict[str, Any]) -> None:
    resp = httpx.patch(f"{docs}/{path}", headers={"Authorization": "Bearer owner"}, json=body, timeout=30.0)
    assert resp.status_code == 200, resp.text


def test_the_apps_own_collections_keep_the_apps_rules(docs: str) -> None:
    me, other = _uid(), _uid()
    note = f"{docs}/users/{me}/notes/n1"
    assert _call("PATCH", note, me, _fields(text="buy milk")) == 200
    assert _call("GET", note, me) == 200
    assert _call("GET", f"{docs}/users/{me}/notes", me) == 200
    assert _call("GET", note, other) == 403
    assert _call("PATCH", note, other, _fields(text="mine now")) == 403
    assert _call("PATCH", f"{docs}/users/{me}", me, _fields(name="Ada")) == 200
    assert _call("GET", f"{docs}/users/{me}", me) == 200
    assert _call("GET", f"{docs}/users/{me}", other) == 403
    _admin_write(docs, "catalogue/c1", _fields(title="public"))
    assert _call("GET", f"{docs}/catalogue/c1", None) == 200
    assert _call("PATCH", f"{docs}/catalogue/c1", me, _fields(title="defaced")) == 403
    assert _call("DELETE", note, me) == 200


def test_strata_conversations_keep_stratas_rules(docs: str) -> None:
    me, other = _uid(), _uid()
    url = f"{docs}/users/{me}/conversations/c1"
    assert _call("PATCH", url, me, _fields(status="in_progress")) == 200
    assert _call("PATCH", url, me, _fields(status="completed")) == 200
    assert _call("GET", url, me) == 200
    assert _call("PATCH", url, me, _fields(status="hacked")) == 403
    assert _call("GET", url, other) == 403
    assert _call("DELETE", url, other) == 403
    assert _call("DELETE", url, me) == 200


@pytest.mark.parametrize("path", [
    "users/{uid}/memory_items/m1",
    "users/{uid}/memory_commits/c1",
    "users/{uid}/memory_outbox/e1",
    "users/{uid}/memory_state/apply_control",
    "users/{uid}/memory_review_queue/r1",
    "users/{uid}/capture_runs/c1",
    "users/{uid}/developer_webhooks/memory_created",
    "account_deletions/{uid}",
    "memory_controls/global",
    "consolidation_schedule/{uid}",
])
def test_stratas_internals_stay_closed_beside_the_app(docs: str, path: str) -> None:
    uid = _uid()
    url = f"{docs}/{path.format(uid=uid)}"
    _admin_write(docs, path.format(uid=uid), _fields(content="internal"))
    assert _call("GET", url, uid) == 403
    assert _call("PATCH", url, uid, _fields(content="forged")) == 403
    assert _call("DELETE", url, uid) == 403

"""Names an app chooses (issue 45), on a local stack of this module's own.

The stack's processes run with ``STRATA_DATA_ROOT=strata_users/{uid}`` and
``STRATA_CONVERSATIONS_PATH=chats/{uid}/threads`` (what Terraform's ``data_root`` and
``conversations_path`` set on the functions, the triggers registered on that path, the emulator's
rules merged for it). An app's own ``users/{uid}`` (its profile and its own ``conversations``) sits
beside them. A conversation created through the API and one written straight to the chosen path are
captured into the chosen root; deleting the second cascades; the account wipe removes Strata's data
there and the conversations, and leaves the app's ``users/{uid}`` exactly as it was.

The paths are written out here from the names given, never computed by the code under test.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.adapters.firestore.client import firestore_client
from core.config import load
from core.domain import paths
from strata_dev.localstack import stack as localstack
from strata_dev.localstack.tokens import emulator_token
from tests.support.firestore_checks import wait_for

pytestmark = pytest.mark.e2e

NAMES = {"STRATA_DATA_ROOT": "strata_users/{uid}", "STRATA_CONVERSATIONS_PATH": "chats/{uid}/threads"}
PROFILE = {"display_name": "Ana Lima", "plan": "pro"}
APP_CONVERSATION = {"title": "the app's own conversation, not Strata's", "status": "completed",
                    "transcript_segments": [{"id": "s1", "text": "I live in Porto.", "is_user": True}]}


def _segments(text: str) -> list[dict[str, Any]]:
    return [{"id": "s1", "text": text, "speaker": "SPEAKER_00", "is_user": True}]


@pytest.fixture(scope="module")
def named_stack() -> Iterator[dict[str, Any]]:
    """A stack whose processes take the app's names from the environment; the environment (and this
    process's layout) are restored after it."""
    state_dir = Path(tempfile.mkdtemp(prefix="strata-named-stack-"))
    saved = dict(os.environ)
    os.environ.update({"STRATA_TICK_SECONDS": "86400", "STRATA_CONSOLIDATION_ON_WRITE": "0",
                       "STRATA_EMBEDDER": "hashing", **NAMES})
    try:
        info = localstack.up(state_dir)
        os.environ.update(localstack.stack_env(info))
        yield info
    finally:
        os.environ.clear()
        os.environ.update(saved)
        localstack.down(state_dir)
        paths.configure()


@pytest.fixture(scope="module")
def db(named_stack: dict[str, Any]) -> Any:
    return firestore_client(load())


@pytest.fixture(scope="module")
def api(named_stack: dict[str, Any]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=named_stack["api_url"], timeout=30.0) as client:
        yield client


def _auth(info: dict[str, Any], uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, info['project_id'])}"}


def _collections(db: Any, document: str) -> set[str]:
    return {c.id for c in db.document(document).collections()}


def _contents(api: httpx.Client, info: dict[str, Any], uid: str) -> list[str]:
    listed = api.get("/v1/memories", headers=_auth(info, uid))
    assert listed.status_code == 200, listed.text
    return [m["content"] for m in listed.json()["memories"]]


def _wipe(api: httpx.Client, info: dict[str, Any], uid: str) -> None:
    deadline = time.monotonic() + 120  # a bound on the retries of a documented 503, not a measurement
    while (answer := api.delete("/v1/users/delete-account", headers=_auth(info, uid))).status_code == 503:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.2)
    assert answer.status_code == 200, answer.text


def test_capture_cascade_and_wipe_follow_the_chosen_names(named_stack: dict[str, Any], db: Any,
                                                          api: httpx.Client) -> None:
    info, uid = named_stack, f"named-{uuid.uuid4().hex[:12]}"
    root, threads = f"strata_users/{uid}", f"chats/{uid}/threads"
    db.document(f"users/{uid}").set(PROFILE)
    db.document(f"users/{uid}/conversations/app-c1").set(APP_CONVERSATION)

    # Through the API: the conversation is written at the chosen path and captured into the chosen root.
    created = api.post("/v1/conversations", headers=_auth(info, uid),
                       json={"id": "c1", "transcript_segments": _segments("I work as a nurse at the hospital.")})
    assert created.status_code == 201, created.text
    assert db.document(f"{threads}/c1").get().exists
    wait_for(lambda: db.document(f"{root}/capture_runs/c1").get().exists, timeout=90, what="c1's capture")
    # Written by the app straight to the chosen path: the capture trigger watches it.
    db.document(f"{threads}/c2").set({"status": "completed",
                                      "transcript_segments": _segments("I play the cello every Sunday.")})
    wait_for(lambda: any("cello" in c for c in _contents(api, info, uid)), timeout=90, what="c2's capture by trigger")
    assert any("nurse" in c for c in _contents(api, info, uid))
    assert {"memory_items", "memory_commits", "capture_runs"} <= _collections(db, root)
    assert _collections(db, f"users/{uid}") == {"conversations"}  # nothing of Strata's in the app's users/{uid}
    assert [d.id for d in db.collection(f"users/{uid}/conversations").stream()] == ["app-c1"]

    # Deleting the conversation document cascades (the delete trigger watches the chosen path too).
    db.document(f"{threads}/c2").delete()
    wait_for(lambda: not any("cello" in c for c in _contents(api, info, uid)), timeout=90, what="c2's cascade")
    assert any("nurse" in c for c in _contents(api, info, uid))

    _wipe(api, info, uid)
    assert _collections(db, root) == set(), _collections(db, root)
    assert list(db.collection(threads).stream()) == []  # the conversations go too (STRATA_WIPE_CONVERSATIONS)
    assert db.document(f"users/{uid}").get().to_dict() == PROFILE
    assert db.document(f"users/{uid}/conversations/app-c1").get().to_dict() == APP_CONVERSATION
    assert _collections(db, f"users/{uid}") == {"conversations"}
    assert _contents(api, info, uid) == []


def test_the_emulators_rules_guard_the_chosen_conversations_path(named_stack: dict[str, Any], db: Any) -> None:
    info, me, other = named_stack, f"named-{uuid.uuid4().hex[:12]}", f"named-{uuid.uuid4().hex[:12]}"
    docs = f"http://{info['firestore_emulator_host']}/v1/projects/{info['project_id']}/databases/(default)/documents"
    body = {"fields": {"status": {"stringValue": "in_progress"}}}

    def call(method: str, path: str, uid: str, json: dict[str, Any] | None = None) -> int:
        return httpx.request(method, f"{docs}/{path}", json=json, timeout=30.0,
                             headers={"Authorization": f"Bearer {emulator_token(uid, info['project_id'])}"}).status_code

    assert call("PATCH", f"chats/{me}/threads/t1", me, body) == 200
    assert call("GET", f"chats/{me}/threads/t1", me) == 200
    assert call("GET", f"chats/{me}/threads/t1", other) == 403
    db.document(f"strata_users/{me}/memory_items/m1").set({"content": "internal"})
    assert call("GET", f"strata_users/{me}/memory_items/m1", me) == 403
    # The default path is not Strata's here: no rule of Strata's opens it (rules deny by default).
    assert call("PATCH", f"users/{me}/conversations/t1", me, body) == 403

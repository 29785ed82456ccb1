"""The Python twin of client.mjs, on the Firebase Admin SDK (firebase-admin).

The Admin SDK writes as the backend would: service accounts bypass the security rules, so this
client creates its user on the Auth emulator, writes the completed conversation with admin
rights, signs the user in through the Auth emulator's REST API for an ID token, waits for the
memories through Strata's HTTP API, searches them, deletes the conversation and waits for the
cascade. Same environment as client.mjs; prints one JSON line; exits non-zero on a failed check.
Run it with ``.venv-firebase/bin/python`` (firebase-admin lives there).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import firebase_admin
import httpx
from firebase_admin import auth, credentials, firestore
from google.auth.credentials import AnonymousCredentials

T = TypeVar("T")
TIMEOUT_S = float(os.environ.get("STRATA_EXAMPLE_TIMEOUT_S", "180"))


class EmulatorCredential(credentials.Base):
    """The emulators take no credentials; firebase-admin's Firestore client still wants one."""

    def get_credential(self) -> Any:
        return AnonymousCredentials()


def env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        sys.exit(f"{name} is not set (start the suite: strata stack up --suite firebase)")
    return value


def check(ok: bool, message: str) -> None:
    if not ok:
        raise AssertionError(f"check failed: {message}")


def wait_for(what: str, probe: Callable[[], T | None]) -> T:
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.5)


def main() -> None:
    project = env("STRATA_PROJECT_ID")
    api_url = env("STRATA_API_URL").rstrip("/")
    auth_host = env("FIREBASE_AUTH_EMULATOR_HOST")
    env("FIRESTORE_EMULATOR_HOST")
    app = firebase_admin.initialize_app(EmulatorCredential(), {"projectId": project}, name=uuid.uuid4().hex)
    db = firestore.client(app)

    email = f"admin-{uuid.uuid4().hex[:8]}@example.test"
    password = "Tulip-2291"
    user = auth.create_user(email=email, password=password, app=app)
    # An ID token as the app would hold it: signed in through the Auth emulator's REST API.
    signed_in = httpx.post(
        f"http://{auth_host}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
        params={"key": "demo-api-key"}, json={"email": email, "password": password, "returnSecureToken": True},
        timeout=30)
    check(signed_in.status_code == 200, f"sign in: {signed_in.status_code} {signed_in.text[:200]}")
    token = signed_in.json()["idToken"]
    http = httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)

    conversation_id = f"admin-{uuid.uuid4().hex[:12]}"
    doc = json.loads((Path(__file__).parent / "conversation.json").read_text())
    now = dt.datetime.now(dt.UTC)
    ref = db.collection("users").document(user.uid).collection("conversations").document(conversation_id)
    ref.set({**doc, "created_at": now, "started_at": now, "finished_at": now})

    def mine() -> list[dict[str, Any]]:
        resp = http.get("/v1/memories", params={"limit": 100})
        check(resp.status_code == 200, f"GET /v1/memories: {resp.status_code} {resp.text[:200]}")
        return [m for m in resp.json()["memories"] if m["conversation_id"] == conversation_id]

    memories = wait_for("the conversation's memories", mine)
    check(any("nurse" in m["content"].lower() for m in memories), "a memory about Tom's work")

    def search() -> list[dict[str, Any]]:
        resp = http.get("/v1/memories/search", params={"q": "nurse", "limit": 5})
        check(resp.status_code == 200, f"search: {resp.status_code}")
        return [m for m in resp.json()["memories"] if m["conversation_id"] == conversation_id]

    hits = wait_for("a keyword search hit", search)
    # The API refuses a token that is not an ID token of this project's users.
    check(httpx.get(f"{api_url}/v1/memories", headers={"Authorization": "Bearer nope"}).status_code == 401,
          "a malformed token is refused")

    ref.delete()
    wait_for("the memories to be deleted", lambda: not mine())
    auth.delete_user(user.uid, app=app)
    firebase_admin.delete_app(app)
    print(json.dumps({"ok": True, "uid": user.uid, "conversation_id": conversation_id,
                      "memories": [m["content"] for m in memories], "search_hits": len(hits)}))


if __name__ == "__main__":
    main()

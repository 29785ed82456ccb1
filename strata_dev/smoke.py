"""``strata smoke``: one user's round trip through a deployment, checked from the outside.

The same steps against the local stack (``make test`` runs them: tests/e2e/test_smoke.py) and
against a project (``strata smoke --project P --api-url URL``, docs/deploy.md):

1. sign in a fresh test user: against a project, an anonymous Firebase Auth sign-up through the
   Identity Toolkit REST API (``--web-api-key`` or ``STRATA_WEB_API_KEY``; Anonymous sign-in
   enabled); locally, an emulator token;
2. write a completed conversation as that user through Firestore's REST API (the security rules
   apply, as they do to the app);
3. wait, through the API, until its memories are listed (``GET /v1/memories``), then until keyword
   search finds them (``GET /v1/memories/search``: the outbox drain has projected them);
4. delete the conversation (as the user, through Firestore), wait until no memory of it is listed
   or found;
5. wipe the test account (``DELETE /v1/users/delete-account``) and check the export is empty;
   against a project, delete the test user from Firebase Auth.

Prints one JSON line per step and exits 1 at the first failed one, naming what it waited for.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from core.adapters.firestore import codec
from core.domain import paths
from strata_dev.cli.output import Output

LINES = ("I moved to Porto in May.", "I'm vegetarian and stopped eating meat about two years ago.")
SEARCH_TERM = "Porto"
IDENTITY_TOOLKIT = "https://identitytoolkit.googleapis.com/v1"


class SmokeFailed(Exception):
    pass


@dataclass
class Target:
    project: str
    api_url: str
    firestore_url: str  # .../documents
    local: bool
    web_api_key: str = ""
    identity_url: str = IDENTITY_TOOLKIT


def conversation(conversation_id: str) -> dict[str, Any]:
    segments = [{"id": f"{conversation_id}-s{i}", "text": text, "speaker": "SPEAKER_00", "speaker_id": 0,
                 "is_user": True, "start": i * 5.0, "end": i * 5.0 + 4.0} for i, text in enumerate(LINES)]
    return {"status": "completed", "discarded": False, "source": "omi", "language": "en",
            "structured": {"title": "strata smoke", "overview": ""}, "transcript_segments": segments}


def _sign_in(target: Target, http: httpx.Client) -> tuple[str, str]:
    if target.local:
        from strata_dev.localstack.tokens import emulator_token

        uid = "smoke-" + uuid.uuid4().hex[:12]
        return uid, emulator_token(uid, target.project)
    if not target.web_api_key:
        raise SmokeFailed("a project needs --web-api-key (the app's Firebase web API key) to sign in a test user")
    answer = http.post(f"{target.identity_url}/accounts:signUp", params={"key": target.web_api_key},
                       json={"returnSecureToken": True})
    if answer.status_code != 200:
        raise SmokeFailed(f"anonymous sign-up failed ({answer.status_code}): {answer.text[:300]} "
                          "(enable the Anonymous provider in Firebase Auth for the smoke test)")
    body = answer.json()
    return str(body["localId"]), str(body["idToken"])


def _wait(what: str, check: Callable[[], Any], timeout_s: float, every: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise SmokeFailed(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(every)


def run(target: Target, *, timeout_s: float = 180.0, report: Callable[[dict[str, Any]], None] = print) -> dict[str, Any]:
    started = time.monotonic()
    timings: dict[str, float] = {}

    def step(name: str, **fields: Any) -> None:
        timings[name] = round(time.monotonic() - started, 2)
        report({"step": name, "seconds": timings[name], **fields})

    with httpx.Client(timeout=30.0) as http:
        uid, token = _sign_in(target, http)
        auth = {"Authorization": f"Bearer {token}"}
        step("signed_in", uid=uid)
        conversation_id = "smoke-" + uuid.uuid4().hex[:10]
        doc_url = f"{target.firestore_url}/{paths.conversation(uid, conversation_id)}"
        fields = codec.fields_to_rest(conversation(conversation_id))
        written = http.patch(doc_url, headers=auth, json={"fields": fields})
        if written.status_code != 200:
            raise SmokeFailed(f"writing the conversation as the user failed ({written.status_code}): {written.text[:300]}")
        step("conversation_written", conversation_id=conversation_id)

        def listed() -> list[dict[str, Any]]:
            answer = http.get(f"{target.api_url}/v1/memories", headers=auth, params={"limit": "100"})
            if answer.status_code != 200:
                raise SmokeFailed(f"GET /v1/memories answered {answer.status_code}: {answer.text[:300]}")
            return [m for m in answer.json()["memories"] if m.get("conversation_id") == conversation_id]

        def found() -> list[dict[str, Any]]:
            answer = http.get(f"{target.api_url}/v1/memories/search", headers=auth, params={"q": SEARCH_TERM})
            if answer.status_code != 200:
                raise SmokeFailed(f"GET /v1/memories/search answered {answer.status_code}: {answer.text[:300]}")
            return [m for m in answer.json()["memories"] if m.get("conversation_id") == conversation_id]

        memories = _wait("the conversation's memories in GET /v1/memories", listed, timeout_s)
        step("memories_listed", count=len(memories), contents=sorted(m["content"] for m in memories))
        hits = _wait(f"keyword search for {SEARCH_TERM!r} to find them", found, timeout_s)
        step("memories_found", count=len(hits))

        deleted = http.delete(doc_url, headers=auth)
        if deleted.status_code != 200:
            raise SmokeFailed(f"deleting the conversation as the user failed ({deleted.status_code}): {deleted.text[:300]}")
        _wait("no memory of the deleted conversation to be listed", lambda: not listed(), timeout_s)
        _wait("search to find nothing of the deleted conversation", lambda: not found(), timeout_s)
        step("conversation_deleted")

        def wiped() -> bool:
            answer = http.delete(f"{target.api_url}/v1/users/delete-account", headers=auth)
            return answer.status_code == 200

        _wait("the test account to be wiped", wiped, timeout_s, every=2.0)
        export = http.get(f"{target.api_url}/v1/memories/export", headers=auth)
        lines = [json.loads(line) for line in export.text.splitlines() if line.strip()]
        left = [line for line in lines if line.get("kind") != "summary"]
        if export.status_code != 200 or left or not lines:
            raise SmokeFailed(f"the wiped account's export ({export.status_code}) still holds {len(left)} records: "
                              f"{export.text[:300]}")
        if not target.local:
            http.post(f"{target.identity_url}/accounts:delete", params={"key": target.web_api_key},
                      json={"idToken": token})
        step("account_wiped")
    return {"uid": uid, "conversation_id": conversation_id, "seconds": timings}


def target_from_args(args: Any) -> Target:
    from core import config

    settings = config.load()
    # The conversations' path the deployment watches (STRATA_CONVERSATIONS_PATH, Terraform's
    # conversations_path): the test user writes there, as the app does.
    paths.configure(settings.data_root, settings.conversations_path)
    if args.project and not settings.firestore_emulator_host:
        if not args.api_url:
            raise SmokeFailed("--api-url is required for a project (terraform output -raw api_url)")
        return Target(project=args.project, api_url=args.api_url.rstrip("/"), local=False,
                      firestore_url=f"https://firestore.googleapis.com/v1/projects/{args.project}/databases/(default)/documents",
                      web_api_key=args.web_api_key or "")
    if not settings.firestore_emulator_host:
        raise SmokeFailed("no local stack is running (strata stack up) and no --project was given")
    from strata_dev.localstack import stack

    info = (stack.status() or {}).get("info") or {}
    api_url = args.api_url or info.get("api_url")
    if not api_url:
        raise SmokeFailed("the local stack's api URL is unknown: pass --api-url")
    project = args.project or settings.project_id
    return Target(project=project, api_url=str(api_url).rstrip("/"), local=True,
                  firestore_url=f"http://{settings.firestore_emulator_host}/v1/projects/{project}/databases/(default)/documents")


def main(args: Any) -> int:
    out = Output(bool(getattr(args, "json", False)))
    try:
        result = run(target_from_args(args), timeout_s=args.timeout,
                     report=lambda line: out.record(line, title="smoke stages"))
    except SmokeFailed as exc:
        out.result({"smoke": "failed", "error": str(exc)}, title="smoke")
        return 1
    out.result({"smoke": "passed", **result}, title="smoke")
    return 0


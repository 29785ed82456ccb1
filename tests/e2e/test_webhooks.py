"""Developer webhooks on the running stack, with real HTTP receivers on loopback.

A conversation written to Firestore fires the trigger; capture runs; one Cloud Task (the Tasks
emulator, queue ``strata-webhooks``) calls the deliver_webhook function, which POSTs the conversation
as JSON (ISO dates) to ``url?uid=``. Receivers that answer 500 or hang are retried a bounded number
of times and never hold capture up. Expectations come from the issue's contract.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.webhooks import MAX_ATTEMPTS, delivery_id
from core.ports import WebhookSender
from core.services import webhooks
from tests.support.firestore_checks import sample_conversations, snapshot_user, wait_for, write_conversation

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
ROUTE = "/v1/users/developer/webhooks/memory_created"
WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def _uid() -> str:
    return f"wh-{uuid.uuid4().hex[:12]}"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


class Receiver:
    """A threaded http.server: ``/ok`` answers 200, ``/fail`` 500, ``/hang`` holds the request
    until :meth:`release` (or 60 s). Every POST is recorded as (path, query, JSON body)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, list[str]], Any]] = []
        self.released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                parts = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.seen.append((parts.path, parse_qs(parts.query), json.loads(body)))
                if parts.path == "/hang":
                    receiver.released.wait(60)
                self.send_response(500 if parts.path == "/fail" else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def posts_for(self, uid: str) -> list[tuple[str, dict[str, list[str]], Any]]:
        return [p for p in list(self.seen) if p[1].get("uid") == [uid]]

    def release(self) -> None:
        self.released.set()

    def stop(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def receiver(stack: dict[str, Any]) -> Iterator[Receiver]:
    r = Receiver()
    try:
        yield r
    finally:
        r.stop()


def _conversation(conversation_id: str = "c-dinner-plans") -> dict[str, Any]:
    doc = dict(sample_conversations()[conversation_id])
    doc.update(created_at=WHEN, started_at=WHEN, finished_at=WHEN)
    return doc


def _expected_body(conversation_id: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The issue's payload, built independently: the conversation itself, dates as ISO strings."""
    out = json.loads(json.dumps({k: v for k, v in doc.items() if not isinstance(v, datetime)}))
    out.update({k: v.isoformat() for k, v in doc.items() if isinstance(v, datetime)})
    out["id"] = conversation_id
    return out


def _captured(ctx: Context, uid: str, conversation_id: str) -> bool:
    snap = ctx.paths.doc(uid, "capture_runs", conversation_id).get()
    return bool(snap.exists and (snap.to_dict() or {}).get("jobs", {}).get("memories") is True)


def _delivery(ctx: Context, uid: str, conversation_id: str) -> dict[str, Any]:
    snap = ctx.paths.doc(uid, "webhook_deliveries", delivery_id("memory_created", conversation_id)).get()
    return (snap.to_dict() or {}) if snap.exists else {}


def _configure(http: httpx.Client, uid: str, url: str, enabled: bool = True) -> None:
    response = http.put(ROUTE, json={"url": url, "enabled": enabled}, headers=_auth(uid))
    assert response.status_code == 200, response.text


# ------------------------------------------------------------------------------------------ routes
def test_put_get_delete(http: httpx.Client, receiver: Receiver) -> None:
    uid = _uid()
    assert http.get(ROUTE, headers=_auth(uid)).json() == {"type": "memory_created", "url": None, "enabled": False}
    url = receiver.url("/ok")
    response = http.put(ROUTE, json={"url": url, "enabled": True}, headers=_auth(uid))
    assert response.status_code == 200
    assert response.json() == {"type": "memory_created", "url": url, "enabled": True}
    assert http.get(ROUTE, headers=_auth(uid)).json() == {"type": "memory_created", "url": url, "enabled": True}
    _configure(http, uid, url, enabled=False)
    assert http.get(ROUTE, headers=_auth(uid)).json()["enabled"] is False
    assert http.put(ROUTE, json={"url": url}, headers=_auth(uid)).json()["enabled"] is True  # default on
    assert http.delete(ROUTE, headers=_auth(uid)).json() == {"type": "memory_created", "deleted": True}
    assert http.get(ROUTE, headers=_auth(uid)).json() == {"type": "memory_created", "url": None, "enabled": False}
    assert http.delete(ROUTE, headers=_auth(uid)).json() == {"type": "memory_created", "deleted": False}
    assert http.get(ROUTE).status_code == 401


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
@pytest.mark.parametrize(("webhook_type", "code"), [
    ("conversation_created", "unknown_webhook_type"), ("memory_created2", "unknown_webhook_type"),
    # Not even a possible document id: the API edge refuses it before any handler (issue 12).
    ("__x__", "not_found"), ("%2e%2e", "not_found"),
])
def test_unknown_type_is_404(http: httpx.Client, method: str, webhook_type: str, code: str) -> None:
    body = {"url": "http://127.0.0.1:9/x"} if method == "PUT" else None
    response = http.request(method, f"/v1/users/developer/webhooks/{webhook_type}", json=body,
                            headers=_auth(_uid()))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == code


@pytest.mark.parametrize("body", [
    {"url": "http://127.0.0.1:9/x", "enabled": True, "secret": "s"},  # unknown field
    {"url": "http://127.0.0.1:9/" + "a" * 2048},  # over 2048 characters
    {"url": ""}, {"enabled": True}, {"url": 5}, {"url": "http://127.0.0.1:9/x", "enabled": "yes"},
    {"url": "http://10.0.0.1/hook"}, {"url": "http://192.168.1.1/"}, {"url": "http://169.254.169.254/"},
    {"url": "http://metadata.google.internal/computeMetadata/v1/"}, {"url": "http://[fe80::1]/"},
    {"url": "ftp://127.0.0.1/"}, {"url": "http://user:pw@127.0.0.1/"}, {"url": "not a url"},
    {"url": "http://no-such-host.invalid/hook"}, [], "x", None,
])
def test_bad_input_is_400_and_writes_nothing(http: httpx.Client, ctx: Context, body: Any) -> None:
    uid = _uid()
    before = snapshot_user(ctx, uid)
    response = http.put(ROUTE, content=json.dumps(body), headers={**_auth(uid), "Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert set(response.json()["error"]) == {"code", "message", "request_id"}
    assert response.json()["error"]["request_id"] == response.headers["x-request-id"]
    assert snapshot_user(ctx, uid) == before


def test_malformed_json_is_400(http: httpx.Client) -> None:
    response = http.put(ROUTE, content=b'{"url": ', headers={**_auth(_uid()), "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"


def test_put_while_the_account_is_being_deleted_is_409_and_writes_nothing(http: httpx.Client, ctx: Context,
                                                                          receiver: Receiver) -> None:
    uid = _uid()
    ctx.paths.account_deletion(uid).set({"uid": uid, "state": "fenced"})
    try:
        before = snapshot_user(ctx, uid)
        response = http.put(ROUTE, json={"url": receiver.url("/ok")}, headers=_auth(uid))
        assert response.status_code == 409 and response.json()["error"]["code"] == "writes_blocked"
        assert snapshot_user(ctx, uid) == before
    finally:
        ctx.paths.account_deletion(uid).delete()


def test_openapi_documents_the_webhook_routes(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    ops = paths["/v1/users/developer/webhooks/{webhook_type}"]
    assert set(ops) == {"put", "get", "delete"}
    assert ops["put"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/WebhookPut"}
    assert {"200", "400", "401", "404", "409"} <= set(ops["put"]["responses"])


# ---------------------------------------------------------------------------------------- delivery
def test_conversation_is_posted_once_with_iso_dates(http: httpx.Client, ctx: Context, receiver: Receiver) -> None:
    """The issue's bug: with a webhook set, capture must still run and the POST must be sent."""
    uid, conversation_id = _uid(), "c-dinner-plans"
    _configure(http, uid, receiver.url("/ok"))
    doc = _conversation(conversation_id)
    write_conversation(ctx, uid, conversation_id, doc)
    posts = wait_for(lambda: receiver.posts_for(uid), timeout=60, what="the webhook POST")
    wait_for(lambda: _captured(ctx, uid, conversation_id), timeout=60, what="capture")
    path, query, body = posts[0]
    assert (path, query) == ("/ok", {"uid": [uid]})
    assert body == _expected_body(conversation_id, doc)
    record = wait_for(lambda: _delivery(ctx, uid, conversation_id).get("state") == "delivered"
                      and _delivery(ctx, uid, conversation_id), timeout=30, what="delivered record")
    assert record["attempts"] == 1 and record["last_status"] == 200
    assert (record["expire_at"] - record["enqueued_at"]).days == 30  # Firestore TTL removes it then
    # A duplicate trigger delivery and a second run of the task change nothing.
    assert webhooks.enqueue_delivery(ctx, uid, conversation_id, None, doc) is None
    assert webhooks.deliver_webhook(ctx, uid, "memory_created", conversation_id) == {"state": "delivered", "duplicate": True}
    assert len(receiver.posts_for(uid)) == 1


def test_switched_off_or_in_progress_enqueues_nothing(http: httpx.Client, ctx: Context, receiver: Receiver) -> None:
    uid = _uid()
    doc = _conversation()
    assert webhooks.enqueue_delivery(ctx, uid, "c1", None, doc) is None  # no webhook set
    _configure(http, uid, receiver.url("/ok"), enabled=False)
    assert webhooks.enqueue_delivery(ctx, uid, "c1", None, doc) is None
    _configure(http, uid, receiver.url("/ok"))
    assert webhooks.enqueue_delivery(ctx, uid, "c1", None, {**doc, "status": "in_progress"}) is None
    assert webhooks.enqueue_delivery(ctx, uid, "c1", {"status": "completed"}, doc) is None
    assert _delivery(ctx, uid, "c1") == {}


def test_receiver_answering_500_is_retried_a_bounded_number_of_times(
        http: httpx.Client, ctx: Context, receiver: Receiver) -> None:
    uid, conversation_id = _uid(), "c-dinner-plans"
    _configure(http, uid, receiver.url("/fail"))
    write_conversation(ctx, uid, conversation_id, _conversation(conversation_id))
    wait_for(lambda: _captured(ctx, uid, conversation_id), timeout=60, what="capture")
    record = wait_for(lambda: _delivery(ctx, uid, conversation_id).get("state") == "failed"
                      and _delivery(ctx, uid, conversation_id), timeout=120, what="the delivery to give up")
    assert record["attempts"] == MAX_ATTEMPTS and record["last_status"] == 500
    assert len(receiver.posts_for(uid)) == MAX_ATTEMPTS
    # Given up for good: running the task once more posts nothing.
    assert webhooks.deliver_webhook(ctx, uid, "memory_created", conversation_id)["duplicate"] is True
    assert len(receiver.posts_for(uid)) == MAX_ATTEMPTS


def test_hanging_receiver_is_cut_off_and_capture_is_unaffected(
        http: httpx.Client, ctx: Context, receiver: Receiver) -> None:
    uid, conversation_id = _uid(), "c-dinner-plans"
    _configure(http, uid, receiver.url("/hang"))
    write_conversation(ctx, uid, conversation_id, _conversation(conversation_id))
    wait_for(lambda: _captured(ctx, uid, conversation_id), timeout=60, what="capture")
    wait_for(lambda: receiver.posts_for(uid), timeout=60, what="the first (hanging) POST")
    # The receiver still holds the first request: a second one arrives only because the first
    # attempt was cut off by the sender's timeout and Cloud Tasks ran the task again.
    wait_for(lambda: len(receiver.posts_for(uid)) >= 2, timeout=90, what="a retry after the timeout")
    record = _delivery(ctx, uid, conversation_id)
    assert record["state"] in ("retrying", "failed") and "timed out" in record["last_error"]
    # Stop it: switched off, the next run cancels instead of posting again.
    assert http.delete(ROUTE, headers=_auth(uid)).status_code == 200
    wait_for(lambda: _delivery(ctx, uid, conversation_id).get("state") in ("cancelled", "failed"),
             timeout=120, what="the delivery to stop")
    assert len(receiver.posts_for(uid)) <= MAX_ATTEMPTS


# ----------------------------------------------------------------------------- delivery-time checks
class _Rebinding(WebhookSender):
    """Resolves every name to a public-looking loopback pair plus a private address."""

    def __init__(self) -> None:
        self.posts: list[str] = []

    def resolve(self, host: str, port: int) -> list[str]:
        return ["127.0.0.1", "10.0.0.7"]

    def post(self, url: str, address: str, body: bytes, *, timeout_s: float) -> int:
        self.posts.append(url)
        return 200


def test_delivery_checks_the_resolved_addresses_again(ctx: Context, receiver: Receiver) -> None:
    """A URL stored without the API's check (or whose DNS changed since) is refused at delivery."""
    uid, conversation_id = _uid(), "c1"
    ctx.paths.doc(uid, "conversations", conversation_id).set(_conversation())
    sender = _Rebinding()
    rebinding = Context(webhook_sender=sender)
    ctx.paths.doc(uid, "developer_webhooks", "memory_created").set(
        {"type": "memory_created", "url": "http://hooks.example.test/in", "enabled": True})
    outcome = webhooks.deliver_webhook(rebinding, uid, "memory_created", conversation_id)
    assert outcome["state"] == "refused" and "10.0.0.7" in outcome["reason"]
    uid2 = _uid()
    ctx.paths.doc(uid2, "conversations", conversation_id).set(_conversation())
    ctx.paths.doc(uid2, "developer_webhooks", "memory_created").set(
        {"type": "memory_created", "url": "http://169.254.169.254/computeMetadata/v1/", "enabled": True})
    assert webhooks.deliver_webhook(ctx, uid2, "memory_created", conversation_id)["state"] == "refused"
    assert sender.posts == [] and receiver.posts_for(uid) == [] and receiver.posts_for(uid2) == []


def test_the_delivery_endpoint_never_takes_a_url_from_its_caller(stack: dict[str, Any], ctx: Context,
                                                                  receiver: Receiver) -> None:
    """The task body names a user and a conversation only; the URL is always the user's own saved
    one, so a caller cannot make the server fetch an arbitrary address (production also restricts
    callers to the tasks' service account)."""
    uid, conversation_id = _uid(), "c1"
    ctx.paths.doc(uid, "conversations", conversation_id).set(_conversation())
    with httpx.Client(base_url=stack["webhook_url"], timeout=30) as client:
        response = client.post("/", json={"webhook": "memory_created", "uid": uid, "conversation_id": conversation_id,
                                          "url": receiver.url("/ok")})
        assert response.status_code == 200
        assert response.json()["state"] == "cancelled" and response.json()["reason"] == "webhook_disabled"
        malformed = client.post("/", json={"webhook": "memory_created", "uid": 5, "conversation_id": "c1"})
        assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "malformed_task"
    assert receiver.posts_for(uid) == []


def test_a_delivery_queued_for_consolidate_is_handed_over(stack: dict[str, Any], ctx: Context,
                                                           receiver: Receiver) -> None:
    """One job per function: a delivery task that still names consolidate (queued before
    deliver_webhook existed) is not run there; consolidate enqueues it again for deliver_webhook,
    which delivers it once however often the hand-over is retried. A malformed one is refused (400)
    and changes nothing."""
    uid, conversation_id = _uid(), "c1"
    before = snapshot_user(ctx, uid)
    malformed = httpx.post(stack["consolidate_url"], json={"webhook": "memory_created", "uid": 5,
                                                           "conversation_id": conversation_id}, timeout=30)
    assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "malformed_task"
    assert snapshot_user(ctx, uid) == before
    # The conversation is written before the webhook is configured, so its own trigger enqueues nothing.
    ctx.paths.doc(uid, "conversations", conversation_id).set(_conversation())
    wait_for(lambda: _captured(ctx, uid, conversation_id), timeout=60, what="capture")
    ctx.paths.doc(uid, "developer_webhooks", "memory_created").set(
        {"type": "memory_created", "url": receiver.url("/ok"), "enabled": True})
    task = {"webhook": "memory_created", "uid": uid, "conversation_id": conversation_id}
    for _ in range(2):  # Cloud Tasks may run the old task again
        response = httpx.post(stack["consolidate_url"], json=task, timeout=30)
        assert response.status_code == 200 and response.json()["state"] == "handed_over"
    record = wait_for(lambda: _delivery(ctx, uid, conversation_id).get("state") == "delivered"
                      and _delivery(ctx, uid, conversation_id), timeout=60, what="the handed-over delivery")
    assert record["attempts"] == 1 and len(receiver.posts_for(uid)) == 1

"""Developer webhooks, the pure policy and the HTTP sender: frozen name, target checks, the body.

Expectations come from the issue and from the IANA special-purpose address registries (an
independent reference list below), not from the code under test.
"""

from __future__ import annotations

import ipaddress
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.adapters.webhook_http import HttpWebhookSender, WebhookUnreachable
from core.domain import webhooks as policy
from core.domain.webhooks import TargetRefused

# Non-public ranges (IANA IPv4/IPv6 special-purpose registries, the metadata server, CGNAT).
NOT_PUBLIC = [ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
    "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "2001:db8::/32", "64:ff9b::/96",
    "64:ff9b:1::/48", "2002::/16",
)]


def test_frozen_type_name() -> None:
    assert policy.MEMORY_CREATED == "memory_created"
    assert policy.TYPES == ("memory_created",)


@pytest.mark.parametrize("url", [
    "http://example.com/hook",  # production: https only
    "https://127.0.0.1/hook", "https://[::1]/hook", "https://localhost/hook", "https://a.localhost/x",
    "https://10.1.2.3/", "https://192.168.0.10/", "https://172.16.5.4/", "https://100.64.0.1/",
    "https://169.254.169.254/computeMetadata/v1/", "https://metadata.google.internal/",
    "https://[::ffff:127.0.0.1]/", "https://[fe80::1]/", "https://[fd00:ec2::254]/", "https://0.0.0.0/",
    "https://user:pw@example.com/", "ftp://example.com/", "https://", "https://exa mple.com/",
    "https://example.com/" + "a" * 2048, "", "https://example.com:99999/",
])
def test_production_refuses(url: str) -> None:
    with pytest.raises(TargetRefused):
        policy.check_url(url, local=False)


def test_production_accepts_https_public() -> None:
    assert policy.check_url("https://hooks.example.com/in?x=1", local=False) == ("hooks.example.com", 443)
    assert policy.check_url("https://8.8.8.8:8443/in", local=False) == ("8.8.8.8", 8443)


def test_local_mode_also_allows_loopback_and_http_but_not_private() -> None:
    assert policy.check_url("http://127.0.0.1:8080/hook", local=True) == ("127.0.0.1", 8080)
    assert policy.check_url("http://localhost/hook", local=True) == ("localhost", 80)
    for url in ("http://10.0.0.1/", "http://169.254.169.254/", "http://metadata.google.internal/"):
        with pytest.raises(TargetRefused):
            policy.check_url(url, local=True)


def test_one_private_answer_refuses_the_host() -> None:
    """DNS rebinding: a host that resolves to a public and a private address is refused."""
    with pytest.raises(TargetRefused):
        policy.check_addresses(["93.184.216.34", "10.0.0.5"], local=False)
    with pytest.raises(TargetRefused):
        policy.check_addresses([], local=False)
    assert policy.check_addresses(["93.184.216.34", "93.184.216.34"], local=False) == ["93.184.216.34"]


_IN_RANGES = st.sampled_from(NOT_PUBLIC).flatmap(lambda n: st.ip_addresses(network=n))
_MAPPED = st.ip_addresses(v=4).map(lambda a: ipaddress.IPv6Address(f"::ffff:{a}"))


@given(st.one_of(st.ip_addresses(), _IN_RANGES, _MAPPED))
def test_address_policy_matches_the_registry(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    """Property: an address in a non-public registry range (or mapping to one) is always refused;
    loopback is allowed only in local mode."""
    plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
    listed = any(plain.version == n.version and plain in n for n in NOT_PUBLIC)
    if listed:
        with pytest.raises(TargetRefused):
            policy.check_address(str(ip), local=False)
    loopback = any(plain.version == n.version and plain in n
                   for n in (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")))
    if loopback:
        policy.check_address(str(ip), local=True)  # does not raise


def test_target_url_appends_uid() -> None:
    assert policy.target_url("https://h.example/in", "u 1") == "https://h.example/in?uid=u+1"
    assert policy.target_url("https://h.example/in?k=v", "u1") == "https://h.example/in?k=v&uid=u1"
    assert policy.target_url("https://h.example", "u1") == "https://h.example/?uid=u1"


def test_conversation_body_is_json_with_iso_dates() -> None:
    """The original bug: Firestore timestamps made the JSON encoder raise TypeError."""
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    conversation = {"status": "completed", "created_at": when, "finished_at": when,
                    "transcript_segments": [{"id": "s0", "text": "hi", "start": 0.0, "end": float("inf")}],
                    "structured": {"title": "t", "events": [{"start": when}]}, "blob": b"\x00\x01"}
    body = policy.conversation_body("c1", conversation)
    decoded = json.loads(json.dumps(body, allow_nan=False))
    assert decoded == {
        "id": "c1", "status": "completed", "created_at": "2026-01-02T03:04:05+00:00",
        "finished_at": "2026-01-02T03:04:05+00:00",
        "transcript_segments": [{"id": "s0", "text": "hi", "start": 0.0, "end": None}],
        "structured": {"title": "t", "events": [{"start": "2026-01-02T03:04:05+00:00"}]}, "blob": "AAE=",
    }


@pytest.mark.parametrize(("old", "new", "fires"), [
    (None, {"status": "completed"}, True),
    ({"status": "in_progress"}, {"status": "completed"}, True),
    ({"status": "completed"}, {"status": "completed", "x": 1}, False),
    (None, {"status": "in_progress"}, False),
    ({"status": "completed"}, None, False),
])
def test_fires_once_when_first_completed(old: dict | None, new: dict | None, fires: bool) -> None:
    assert policy.fires(old, new) is fires


def test_retry_worthy_answers() -> None:
    assert [s for s in (200, 301, 400, 404, 408, 410, 429, 500, 502, 503) if policy.retry_worthy(s)] == [
        408, 429, 500, 502, 503]


# ------------------------------------------------------------------------------ the HTTP sender
@pytest.fixture
def receiver() -> Iterator[tuple[int, list[tuple[str, str, bytes]], threading.Event]]:
    """A real HTTP server on loopback: records (path, Host, body); answers 204, or hangs on /hang."""
    seen: list[tuple[str, str, bytes]] = []
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            seen.append((self.path, self.headers["Host"], self.rfile.read(int(self.headers["Content-Length"]))))
            if self.path.startswith("/hang"):
                release.wait(30)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield server.server_port, seen, release
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def test_sender_posts_to_the_checked_address_with_the_original_host(receiver: tuple) -> None:
    port, seen, _ = receiver
    sender = HttpWebhookSender()
    assert "127.0.0.1" in sender.resolve("localhost", port)
    status = sender.post(f"http://localhost:{port}/in?uid=u1", "127.0.0.1", b'{"id": "c1"}', timeout_s=5)
    assert status == 204
    assert seen == [("/in?uid=u1", f"localhost:{port}", b'{"id": "c1"}')]


def test_sender_is_bounded_by_its_timeout(receiver: tuple) -> None:
    """A receiver that never answers makes the sender give up (retryably), not hang."""
    port, seen, _ = receiver
    with pytest.raises(WebhookUnreachable):
        HttpWebhookSender().post(f"http://127.0.0.1:{port}/hang", "127.0.0.1", b"{}", timeout_s=0.5)
    assert len(seen) == 1


def test_sender_unreachable_is_retryable() -> None:
    with pytest.raises(WebhookUnreachable) as info:
        HttpWebhookSender().post("http://127.0.0.1:9/x", "127.0.0.1", b"{}", timeout_s=2)
    assert info.value.retryable
    assert HttpWebhookSender().resolve("no-such-host.invalid", 443) == []

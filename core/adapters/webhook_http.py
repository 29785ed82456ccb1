"""Outbound developer-webhook POSTs (httpx), pinned to an address the service has already checked.

The URL's host is resolved once (:meth:`HttpWebhookSender.resolve`); the POST then connects to the
checked address itself, with the original ``Host`` header and, for https, the original name as TLS
SNI and certificate hostname. So a DNS answer that changes between check and connect (rebinding)
cannot point the request at an internal address. Redirects are never followed. Connect, write and
read are each bounded by ``timeout_s``; the body of the answer is never read.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit, urlunsplit

import httpx

from core import tracing
from core.errors import WebhookUnreachable
from core.ports import WebhookSender

USER_AGENT = "strata-webhooks/1"


@tracing.spanned("webhook", only=("post",))
class HttpWebhookSender(WebhookSender):
    def resolve(self, host: str, port: int) -> list[str]:
        try:
            infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            return []
        return list(dict.fromkeys(str(info[4][0]) for info in infos))

    def post(self, url: str, address: str, body: bytes, *, timeout_s: float) -> int:
        parts = urlsplit(url)
        host = parts.hostname or ""
        pinned = f"[{address}]" if isinstance(ipaddress.ip_address(address), ipaddress.IPv6Address) else address
        netloc = pinned + (f":{parts.port}" if parts.port else "")
        headers = {"Host": parts.netloc.rsplit("@", 1)[-1], "Content-Type": "application/json",
                   "User-Agent": USER_AGENT}
        extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
        request_url = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
        try:
            with httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False, trust_env=False) as client:
                request = client.build_request("POST", request_url, content=body, headers=headers,
                                               extensions=extensions)
                response = client.send(request, stream=True)
                response.close()
                return response.status_code
        except httpx.TimeoutException as exc:
            raise WebhookUnreachable(f"webhook timed out after {timeout_s:g}s") from exc
        except httpx.HTTPError as exc:
            raise WebhookUnreachable(f"webhook could not be reached: {type(exc).__name__}") from exc

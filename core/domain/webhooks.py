"""Developer webhooks, the pure part: the frozen type names, which target URLs and addresses are
acceptable, the delivery body and how a receiver's answer is judged.

``memory_created`` is a frozen legacy name (spec, "Frozen legacy names"): it fires when a
*conversation* is created (first seen completed) and ships that conversation. It is never renamed.

Target policy (server-side request forgery): in production only ``https`` URLs whose host resolves
to public addresses only; loopback, private, link-local (the metadata server at 169.254.169.254),
CGNAT, multicast, reserved and unspecified addresses are refused, IPv4-mapped IPv6 included. Local
mode (pointed at the emulators) also accepts ``http`` and loopback, so tests can run a receiver on
127.0.0.1. The check runs when a URL is saved and again on the resolved addresses at delivery.
"""

from __future__ import annotations

import base64
import ipaddress
import math
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from core.domain.ids import contract_hash
from core.errors import TargetRefused

MEMORY_CREATED = "memory_created"  # frozen: means "conversation created"
TYPES: tuple[str, ...] = (MEMORY_CREATED,)
MAX_URL_CHARS = 2048
MAX_ATTEMPTS = 5  # deliveries per conversation, first try included
BLOCKED_HOSTS = ("metadata.google.internal", "metadata", "metadata.goog")
# Refused on top of what ``ipaddress`` deems non-global (its tables vary across Python versions):
# IETF protocol assignments, CGNAT, and the IPv6 ranges that embed an IPv4 address (NAT64, 6to4).
NOT_PUBLIC = tuple(ipaddress.ip_network(n) for n in (
    "192.0.0.0/24", "100.64.0.0/10", "198.18.0.0/15", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16",
))


def check_url(url: str, *, local: bool) -> tuple[str, int]:
    """The URL's (host, port) if its form is acceptable; :class:`TargetRefused` otherwise.

    Addresses are checked separately (:func:`check_address`): a host name needs resolving first.
    """
    _check_text(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise TargetRefused(f"url is malformed: {exc}") from exc
    schemes = ("https", "http") if local else ("https",)
    if parts.scheme not in schemes:
        raise TargetRefused("url must use https" if not local else "url must use http or https")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("url must not carry credentials")
    host = (parts.hostname or "").rstrip(".")
    _check_host(host, local=local)
    return host, port or (443 if parts.scheme == "https" else 80)


def _check_text(url: str) -> None:
    """The URL's length and characters."""
    if not url or len(url) > MAX_URL_CHARS:
        raise TargetRefused(f"url must be 1 to {MAX_URL_CHARS} characters")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise TargetRefused("url must not contain whitespace or control characters")


def _check_host(host: str, *, local: bool) -> None:
    """The URL's host: present, not an internal name, not loopback (outside local mode), and a
    public address when it is an IP literal."""
    if not host:
        raise TargetRefused("url has no host")
    lowered = host.lower()
    if lowered in BLOCKED_HOSTS or lowered.endswith(".internal") or lowered.endswith(".local"):
        raise TargetRefused("url host is an internal name")
    if not local and (lowered == "localhost" or lowered.endswith(".localhost")):
        raise TargetRefused("url host is loopback")
    literal = _literal(host)
    if literal is not None:
        check_address(literal, local=local)


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def check_address(address: str, *, local: bool) -> None:
    """Refuse any address that is not public (loopback too, outside local mode)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError as exc:
        raise TargetRefused(f"{address!r} is not an IP address") from exc
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        if local:
            return
        raise TargetRefused(f"{ip} is a loopback address")
    if ip.is_link_local:
        raise TargetRefused(f"{ip} is a link-local address (metadata server range)")
    listed = any(ip.version == net.version and ip in net for net in NOT_PUBLIC)
    if listed or ip.is_multicast or ip.is_unspecified or ip.is_reserved or not ip.is_global:
        raise TargetRefused(f"{ip} is not a public address")


def check_addresses(addresses: Iterable[str], *, local: bool) -> list[str]:
    """Every resolved address must pass: one private answer refuses the host (DNS rebinding)."""
    found = list(dict.fromkeys(addresses))
    if not found:
        raise TargetRefused("url host does not resolve")
    for address in found:
        check_address(address, local=local)
    return found


def target_url(url: str, uid: str) -> str:
    """The URL with ``uid=`` appended to its query, as the original service posts it."""
    parts = urlsplit(url)
    extra = urlencode({"uid": uid})
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))


def conversation_body(conversation_id: str, conversation: dict[str, Any]) -> dict[str, Any]:
    """The conversation itself as JSON: dates as ISO-8601 strings, bytes as base64, the id included."""
    return {"id": conversation_id, **{str(k): _jsonable(v) for k, v in conversation.items() if k != "id"}}


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if hasattr(value, "latitude") and hasattr(value, "longitude"):  # a GeoPoint
        return {"latitude": value.latitude, "longitude": value.longitude}
    if hasattr(value, "path"):  # a DocumentReference
        return str(value.path)
    return str(value)


def fires(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """``memory_created`` fires when a conversation is first seen completed (created completed, or
    moved to completed); later writes of a completed conversation do not fire it again."""
    if new is None or new.get("status") != "completed":
        return False
    return old is None or old.get("status") != "completed"


def retry_worthy(status: int) -> bool:
    """A receiver's answer that may succeed later: 5xx, 408 and 429. Other 4xx and 3xx are final."""
    return status >= 500 or status in (408, 429)


def delivery_id(webhook_type: str, conversation_id: str) -> str:
    """One delivery per (type, conversation): its record's document id and its Cloud Task name."""
    return f"{webhook_type}-{contract_hash('webhook-delivery', [webhook_type, conversation_id])[:32]}"

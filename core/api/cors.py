"""Cross-origin requests from browsers (CORS), for the origins ``STRATA_CORS_ORIGINS`` names.

A browser app calls the API with ``Authorization: Bearer …`` and a JSON body, so before each such
call it sends a *preflight*: ``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``. The
preflight carries no token, so it is answered here, before dispatch and without auth: ``204`` with
``Allow`` (the methods the path takes), and for an allowed origin ``Access-Control-Allow-Origin``
(that origin), ``-Allow-Methods``, ``-Allow-Headers`` and ``-Max-Age``. Every other answer to an
allowed origin carries ``Access-Control-Allow-Origin`` and ``-Expose-Headers`` (so the app can read
``X-Request-Id`` and ``Retry-After``). A disallowed origin gets no ``Access-Control-Allow-*`` header
at all, so the browser refuses to hand the answer to its page. Credentials are bearer tokens, never
cookies, so ``Access-Control-Allow-Credentials`` is never sent.

An origin entry is exact (``https://app.example.com``) or names any port of a host
(``http://localhost:*``). In local mode (the emulators) ``http://localhost:*`` and
``http://127.0.0.1:*`` are allowed besides the configured ones.
"""

from __future__ import annotations

import re

from core.config import Settings

LOCAL_ORIGINS = ("http://localhost:*", "http://127.0.0.1:*")
ALLOW_HEADERS = ("Authorization", "Content-Type", "Idempotency-Key", "X-App-Platform", "X-Device-Id-Hash",
                 "X-App-Version", "Mcp-Protocol-Version", "Mcp-Session-Id")
EXPOSE_HEADERS = ("X-Request-Id", "Retry-After", "Allow", "WWW-Authenticate", "X-Omi-Memory-Device-Scope-Supported",
                  "Mcp-Session-Id")
MAX_AGE_S = 600
_ORIGIN = re.compile(r"^(https?)://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$")


def origins(settings: Settings) -> tuple[str, ...]:
    """The allowed origin entries: the configured ones, and in local mode the loopback hosts."""
    configured = tuple(o.strip().rstrip("/") for o in settings.cors_origins.split(",") if o.strip())
    return configured + (LOCAL_ORIGINS if settings.local else ())


def allowed(settings: Settings, origin: str | None) -> bool:
    """Whether ``origin`` (a request's ``Origin`` header) may read the API's answers."""
    if not origin or not _ORIGIN.match(origin):
        return False
    port = _ORIGIN.match(origin).group(3)  # type: ignore[union-attr]
    any_port = origin if port is None else origin[:-len(port) - 1]
    return any(entry in ("*", origin) or entry == any_port + ":*" for entry in origins(settings))


def answer_headers(settings: Settings, headers: dict[str, str]) -> dict[str, str]:
    """The CORS headers of any answer to a request with ``headers`` (lower-case names)."""
    origin = headers.get("origin")
    if origin is None:
        return {}
    if not allowed(settings, origin):
        return {"Vary": "Origin"}
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin",
            "Access-Control-Expose-Headers": ", ".join(EXPOSE_HEADERS)}


def preflight_headers(settings: Settings, headers: dict[str, str], methods: list[str]) -> dict[str, str]:
    """The headers of the ``204`` answering ``OPTIONS`` on a path that takes ``methods``."""
    out = {"Allow": ", ".join(methods), **answer_headers(settings, headers)}
    if "Access-Control-Allow-Origin" in out:
        out.update({"Access-Control-Allow-Methods": ", ".join(methods),
                    "Access-Control-Allow-Headers": ", ".join(ALLOW_HEADERS),
                    "Access-Control-Max-Age": str(MAX_AGE_S)})
        out.pop("Access-Control-Expose-Headers", None)
    return out

"""Firebase ID token authentication (and personal API keys and operators' server keys, where a route
takes them), and the check of Cloud Tasks callers.

Production verifies the token's RS256 signature against the Firebase securetoken certificates
(``STRATA_FIREBASE_CERTS_URL`` names another certificate source, as tests do), its expiry, its
audience (Strata's project or one ``STRATA_FIREBASE_AUDIENCES`` lists) and its issuer
(``https://securetoken.google.com/<that project>``), with google-auth's
``jwt.decode``. The certificates are fetched once per lifetime, not once per request: Google serves
them with ``Cache-Control: max-age=N`` (hours) and rotates keys well inside that, so
:class:`CertificateCache` keeps them until ``max-age`` minus ``Age`` has passed (an unknown ``kid``
refetches early, at most once per :data:`UNKNOWN_KID_REFETCH_S`, so random ``kid`` values cannot
make every request a fetch). ``strata bench auth`` measures both. In local mode
(``FIREBASE_AUTH_EMULATOR_HOST`` *and* ``FIRESTORE_EMULATOR_HOST`` set, as the stack does) unsigned
Auth-emulator tokens (``alg: none``) are accepted the way firebase-admin accepts them against the
Auth emulator, but their ``aud`` must still be an accepted project (:func:`audiences`: Strata's own
and the app's, ``STRATA_FIREBASE_AUDIENCES``) and ``sub`` must be present. The auth
emulator variable alone never switches verification off: :func:`core.config.load` refuses it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.api.edge import valid_id
from core.config import Settings
from core.domain import ids
from core.errors import Forbidden, Unauthorized

USER_ID = re.compile(r"^[A-Za-z0-9_\-:.@]{1,128}$")  # a user id (also X-Strata-User's OpenAPI pattern)
_UID = USER_ID


def _b64json(part: str) -> dict[str, Any]:
    raw = ids.from_token(part)
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


class NotGiven:
    """:func:`authenticate`'s ``acting_for`` when the caller has no ``X-Strata-User`` to give."""


NOT_GIVEN = NotGiven()


def authenticate(header: str | None, ctx: Any, key_scope: str | None,
                 acting_for: str | None | NotGiven = NOT_GIVEN) -> tuple[str, Any]:
    """The caller of a request: ``(uid, None)`` for a Firebase ID token, ``(uid, KeyCaller)`` for a
    personal API key (:mod:`core.services.api_keys`) or for an operator's server key acting for
    ``acting_for`` (the ``X-Strata-User`` header; :mod:`core.services.server_keys`). ``key_scope`` is
    what the route needs of a key (``read``, ``read+write``); None: the route takes an ID token
    only, and a key is a 401 there, refused before any read. A ``read`` key on a ``read+write``
    route is a 403. ``X-Strata-User`` with any other credential is a 403 unless it names the
    credential's own user. A caller that does not pass ``acting_for`` at all (``/mcp``) takes no
    server key."""
    token = _bearer(header)
    from core.services import api_keys, server_keys

    if server_keys.is_server_key(token):
        if isinstance(acting_for, NotGiven):
            raise Unauthorized("server keys are for the /v1 routes (with X-Strata-User); this one takes an ID token "
                               "or a personal key")
        return _server_caller(ctx, token, key_scope, acting_for)
    if not api_keys.is_key(token):
        uid, caller = uid_from_authorization(header, ctx.settings), None
    else:
        if key_scope is None:
            raise Unauthorized(_ID_TOKEN_ONLY)
        caller = api_keys.verify(ctx, token)
        api_keys.require(caller, write=key_scope == "read+write")
        uid = caller.uid
    if isinstance(acting_for, str) and acting_for != uid:
        raise Forbidden(f"{USER_HEADER} names another user: only a server key acts for the user it names",
                        code="acting_user")
    return uid, caller


_ID_TOKEN_ONLY = ("this route takes the user's Firebase ID token only (key management, webhooks, the export, the "
                  "account wipe and the compatibility routes); personal API keys and server keys are for the other "
                  "/v1 routes (personal keys also /mcp)")
USER_HEADER = "X-Strata-User"


def _server_caller(ctx: Any, token: str, key_scope: str | None, acting_for: str | None) -> tuple[str, Any]:
    """A server key acting for the user ``X-Strata-User`` names: that header is required and must be
    a user id (401 otherwise, like an incomplete credential); the key must be known and not revoked
    (401) and of the scope the route needs (403). Its first write for a user is recorded first, so
    revoking the key can list everything it wrote."""
    from core.services import api_keys, server_keys

    if key_scope is None:
        raise Unauthorized(_ID_TOKEN_ONLY)
    if acting_for is None or not acting_for.strip():
        raise Unauthorized(f"a server key acts for a user: name them in the {USER_HEADER} header")
    uid = acting_for.strip()
    if not _UID.match(uid) or not valid_id(uid):
        raise Unauthorized(f"{USER_HEADER} is not a user id")
    key = server_keys.verify(ctx, token)
    caller = api_keys.KeyCaller(uid, key.key_id, key.scope, key.restricted)
    write = key_scope == "read+write"
    api_keys.require(caller, write=write)
    if write:
        server_keys.record_user(ctx, key.key_id, uid)
    return uid, caller


def _bearer(header: str | None) -> str:
    if not header or not header.startswith("Bearer "):
        raise Unauthorized("missing bearer token")
    return header[len("Bearer "):].strip()


def uid_from_authorization(header: str | None, settings: Settings) -> str:
    token = _bearer(header)
    if settings.auth_emulator_host and settings.firestore_emulator_host:
        claims = _emulator_claims(token)
    else:
        claims = _verified_claims(token, settings)
    if claims.get("aud") not in audiences(settings):
        raise Unauthorized("token was issued for another project")
    uid = claims.get("sub") or claims.get("user_id")
    # The uid names the user's Firestore document: "." / ".." / "__x__" are not document ids.
    if not isinstance(uid, str) or not _UID.match(uid) or not valid_id(uid):
        raise Unauthorized("token has no valid subject")
    return uid


def audiences(settings: Settings) -> tuple[str, ...]:
    """The Firebase projects whose ID tokens are accepted: Strata's own (``STRATA_PROJECT_ID``) and
    those ``STRATA_FIREBASE_AUDIENCES`` lists (comma-separated project ids: an app whose users sign
    in to the app's own Firebase project). A token's ``aud`` must be one of them and its ``iss``
    ``https://securetoken.google.com/`` followed by that same ``aud``."""
    listed = (a.strip() for a in settings.firebase_audiences.split(","))
    return tuple(dict.fromkeys([settings.project_id, *(a for a in listed if a)]))


def _emulator_claims(token: str) -> dict[str, Any]:
    parts = token.split(".")
    if len(parts) < 2:
        raise Unauthorized("malformed token")
    try:
        _b64json(parts[0])
        return _b64json(parts[1])
    except (ValueError, UnicodeDecodeError) as exc:
        raise Unauthorized("malformed token") from exc


UNKNOWN_KID_REFETCH_S = 30.0
DEFAULT_MAX_AGE_S = 300.0  # a certificate answer without max-age is kept this long
_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*(\d+)", re.I)


def max_age_s(headers: Mapping[str, str]) -> float:
    """Seconds an answer stays fresh by its ``Cache-Control`` (minus ``Age``); 0 for no-store/no-cache."""
    control = headers.get("cache-control", "") or ""
    if re.search(r"\b(no-store|no-cache)\b", control, re.I):
        return 0.0
    m = _MAX_AGE.search(control)
    if not m:
        return DEFAULT_MAX_AGE_S
    try:
        age = float(headers.get("age", "0") or 0)
    except ValueError:
        age = 0.0
    return max(0.0, float(m.group(1)) - age)


def _fetch(url: str) -> tuple[dict[str, str], float]:
    import httpx

    answer = httpx.get(url, timeout=10.0)
    if answer.status_code != 200:
        raise ValueError(f"certificate endpoint answered {answer.status_code}")
    certs = answer.json()
    if not isinstance(certs, dict) or not all(isinstance(v, str) for v in certs.values()):
        raise ValueError("certificate endpoint did not answer {kid: PEM}")
    return certs, max_age_s({k.lower(): v for k, v in answer.headers.items()})


@dataclass
class CertificateCache:
    """``{kid: PEM}`` per certificate URL, kept for the answer's ``max-age``.

    ``honour_cache_control=False`` fetches on every call (the code before the cache, kept for
    ``strata bench auth``'s baseline). Thread-safe: one fetch at a time per cache."""

    honour_cache_control: bool = True
    fetch: Callable[[str], tuple[dict[str, str], float]] = _fetch
    clock: Callable[[], float] = time.monotonic
    _entries: dict[str, tuple[dict[str, str], float, float]] = field(default_factory=dict)  # certs, expires, fetched
    _lock: threading.Lock = field(default_factory=threading.Lock)
    fetches: int = 0

    def get(self, url: str, kid: str | None = None) -> dict[str, str]:
        with self._lock:
            now = self.clock()
            entry = self._entries.get(url)
            if entry and self.honour_cache_control:
                certs, expires, fetched = entry
                if now < expires and (kid is None or kid in certs or now - fetched < UNKNOWN_KID_REFETCH_S):
                    return certs
            certs, fresh_for = self.fetch(url)
            self.fetches += 1
            self._entries[url] = (certs, now + fresh_for, now)
            return certs


CERTIFICATES = CertificateCache()


def _header(token: str) -> dict[str, Any]:
    try:
        return _b64json(token.split(".", 1)[0])
    except (ValueError, UnicodeDecodeError, IndexError) as exc:
        raise Unauthorized("malformed token") from exc


def _verified_claims(token: str, settings: Settings) -> dict[str, Any]:
    """Signature (RS256, by ``kid`` among the certificates), ``exp``/``iat``, ``aud`` and ``iss``."""
    from google.auth import jwt

    header = _header(token)
    if header.get("alg") != "RS256":
        raise Unauthorized("invalid token")
    try:
        certs = CERTIFICATES.get(settings.firebase_certs_url, str(header.get("kid") or ""))
    except Exception as exc:  # noqa: BLE001 - certificates unreachable: refuse, never accept unverified
        raise Unauthorized("token could not be verified") from exc
    try:
        claims = dict(jwt.decode(token, certs=certs, audience=list(audiences(settings))))
    except Exception as exc:  # noqa: BLE001 - any verification failure (kid, signature, exp, aud) is a 401
        raise Unauthorized("invalid token") from exc
    if claims.get("iss") != f"https://securetoken.google.com/{claims.get('aud')}":
        raise Unauthorized("token was issued for another project")
    return claims


def check_task_caller(authorization: str | None, settings: Settings) -> None:
    """The consolidate function's own check of a Cloud Scheduler / Cloud Tasks call.

    Cloud Run has already verified the OIDC token's signature (the function admits only the
    invoker) and forwards it with the signature removed; this checks what the token says: it was
    minted for ``STRATA_TASKS_AUDIENCE`` (the run.app URL the tasks target) by the invoker account
    (``STRATA_TASKS_INVOKER``), by Google. Off when no audience is configured (the local stack)."""
    if not settings.tasks_audience:
        return
    if not authorization or not authorization.startswith("Bearer "):
        raise Unauthorized("missing bearer token")
    parts = authorization[len("Bearer "):].strip().split(".")
    if len(parts) < 2:
        raise Unauthorized("malformed token")
    try:
        claims = _b64json(parts[1])
    except (ValueError, UnicodeDecodeError) as exc:
        raise Unauthorized("malformed token") from exc
    audiences = claims.get("aud")
    audiences = audiences if isinstance(audiences, list) else [audiences]
    if settings.tasks_audience.rstrip("/") not in [str(a).rstrip("/") for a in audiences]:
        raise Unauthorized("token was minted for another audience")
    if claims.get("iss") not in ("https://accounts.google.com", "accounts.google.com"):
        raise Unauthorized("token was not issued by Google")
    if settings.tasks_invoker and claims.get("email") != settings.tasks_invoker:
        raise Unauthorized("token belongs to another caller")
    if float(claims.get("exp") or 0) < time.time():
        raise Unauthorized("token expired")


def emulator_token(uid: str, project_id: str) -> str:
    """An unsigned token of the kind the Auth emulator issues (tests, demo, CLI)."""
    def enc(obj: dict[str, Any]) -> str:
        return ids.to_token(json.dumps(obj).encode())

    claims = {"sub": uid, "user_id": uid, "aud": project_id, "iss": f"https://securetoken.google.com/{project_id}",
              "iat": 1_700_000_000, "exp": 4_000_000_000}
    return f"{enc({'alg': 'none', 'typ': 'JWT'})}.{enc(claims)}."

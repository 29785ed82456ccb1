"""Firebase ID token authentication.

Production verifies the token's RS256 signature against the Firebase securetoken certificates
(google-auth; ``STRATA_FIREBASE_CERTS_URL`` names another certificate source, as tests do), its
expiry, its audience and its issuer (``https://securetoken.google.com/<project>``). In local mode
(``FIREBASE_AUTH_EMULATOR_HOST`` *and* ``FIRESTORE_EMULATOR_HOST`` set, as the stack does) unsigned
Auth-emulator tokens (``alg: none``) are accepted the way firebase-admin accepts them against the
Auth emulator, but their ``aud`` must still be the project and ``sub`` must be present. The auth
emulator variable alone never switches verification off: :func:`core.config.load` refuses it.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from core.api.edge import valid_id
from core.config import Settings
from core.errors import Unauthorized

_UID = re.compile(r"^[A-Za-z0-9_\-:.@]{1,128}$")


def _b64json(part: str) -> dict[str, Any]:
    raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def uid_from_authorization(header: str | None, settings: Settings) -> str:
    if not header or not header.startswith("Bearer "):
        raise Unauthorized("missing bearer token")
    token = header[len("Bearer "):].strip()
    if settings.auth_emulator_host and settings.firestore_emulator_host:
        claims = _emulator_claims(token)
    else:
        claims = _verified_claims(token, settings)
    if claims.get("aud") != settings.project_id:
        raise Unauthorized("token was issued for another project")
    uid = claims.get("sub") or claims.get("user_id")
    # The uid names the user's Firestore document: "." / ".." / "__x__" are not document ids.
    if not isinstance(uid, str) or not _UID.match(uid) or not valid_id(uid):
        raise Unauthorized("token has no valid subject")
    return uid


def _emulator_claims(token: str) -> dict[str, Any]:
    parts = token.split(".")
    if len(parts) < 2:
        raise Unauthorized("malformed token")
    try:
        _b64json(parts[0])
        return _b64json(parts[1])
    except (ValueError, UnicodeDecodeError) as exc:
        raise Unauthorized("malformed token") from exc


def _verified_claims(token: str, settings: Settings) -> dict[str, Any]:
    """Signature (RS256, by ``kid`` among the certificates), ``exp``/``iat``, ``aud`` and ``iss``."""
    from google.auth.transport import requests as google_requests
    from google.oauth2 import id_token

    try:
        claims = dict(id_token.verify_token(token, google_requests.Request(), audience=settings.project_id,
                                            certs_url=settings.firebase_certs_url))
    except Exception as exc:  # noqa: BLE001 - any verification failure (alg, kid, signature, exp, aud) is a 401
        raise Unauthorized("invalid token") from exc
    if claims.get("iss") != f"https://securetoken.google.com/{settings.project_id}":
        raise Unauthorized("token was issued for another project")
    return claims


def emulator_token(uid: str, project_id: str) -> str:
    """An unsigned token of the kind the Auth emulator issues (tests, demo, CLI)."""
    def enc(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    claims = {"sub": uid, "user_id": uid, "aud": project_id, "iss": f"https://securetoken.google.com/{project_id}",
              "iat": 1_700_000_000, "exp": 4_000_000_000}
    return f"{enc({'alg': 'none', 'typ': 'JWT'})}.{enc(claims)}."

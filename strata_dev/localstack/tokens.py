"""Unsigned Firebase ID tokens for local mode (what the Auth emulator hands out).

The Firestore emulator evaluates security rules against them and the API accepts them while
``FIREBASE_AUTH_EMULATOR_HOST`` is set, exactly as ``firebase-admin`` does against the Auth
emulator. They carry no signature (``alg: none``) and are worthless against a real project.
"""

from __future__ import annotations

import base64
import json
import time

from strata_dev.localstack import catalog


def _b64(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def emulator_token(uid: str, project_id: str = catalog.PROJECT_ID, *, now: int | None = None,
                   ttl_s: int = 3600) -> str:
    """An unsigned ID token for ``uid`` (claims ``sub``, ``user_id``, ``aud``, ``iss``, ``iat``, ``exp``)."""
    issued = int(time.time()) if now is None else now
    claims: dict[str, object] = {
        "sub": uid,
        "user_id": uid,
        "aud": project_id,
        "iss": f"https://securetoken.google.com/{project_id}",
        "iat": issued,
        "auth_time": issued,
        "exp": issued + ttl_s,
        "firebase": {"sign_in_provider": "custom", "identities": {}},
    }
    return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims)}."

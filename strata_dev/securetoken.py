"""A local stand-in for Firebase's token signer and Google's securetoken certificate endpoint.

Production verifies every Firebase ID token (RS256) against the certificates Google serves as
``{kid: PEM}`` with a ``Cache-Control`` lifetime. Tests and ``strata bench auth`` need both ends
here: :func:`new_key` makes an RSA key and a self-signed certificate, :func:`sign` issues a token
with Firebase's claims (:func:`claims`), and :class:`CertServer` serves the certificates on
127.0.0.1 with the caching headers a test sets, counting its fetches in ``hits``.
"""

from __future__ import annotations

import base64
import datetime as dt
import http.server
import json
import threading
import time
from typing import Any, Self


def new_key(common_name: str = "securetoken.local") -> tuple[Any, str]:
    """An RSA-2048 private key and its self-signed certificate (PEM), valid from yesterday to tomorrow."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1)).sign(key, hashes.SHA256()))
    return key, cert.public_bytes(serialization.Encoding.PEM).decode()


def claims(uid: str, project: str, **over: Any) -> dict[str, Any]:
    """A Firebase ID token's claims for ``uid`` in ``project``, issued 10 s ago for an hour."""
    now = int(time.time())
    out: dict[str, Any] = {"sub": uid, "user_id": uid, "aud": project, "iat": now - 10, "auth_time": now - 10,
                           "exp": now + 3600, "iss": f"https://securetoken.google.com/{project}"}
    out.update(over)
    return out


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def sign(token_claims: dict[str, Any], key: Any, kid: str) -> str:
    """An RS256 JWT of ``token_claims`` whose header names ``kid``."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    head = _b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": kid}).encode())
    body = _b64(json.dumps(token_claims).encode())
    sig = key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{head}.{body}.{_b64(sig)}"


class CertServer:
    """Serves ``certs`` (``{kid: PEM}``, replaceable) at ``url`` with ``cache_control`` (none when
    None) and ``age`` headers, each answer after ``delay_s``; ``hits`` counts the fetches."""

    def __init__(self, certs: dict[str, str], *, cache_control: str | None = "public, max-age=600",
                 delay_s: float = 0.0) -> None:
        self.certs = dict(certs)
        self.cache_control = cache_control
        self.age: str | None = None
        self.delay_s = delay_s
        self.hits = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                with owner._lock:
                    owner.hits += 1
                if owner.delay_s:
                    time.sleep(owner.delay_s)
                payload = json.dumps(owner.certs).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if owner.cache_control is not None:
                    self.send_header("Cache-Control", owner.cache_control)
                if owner.age is not None:
                    self.send_header("Age", owner.age)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/certs"

    def start(self) -> Self:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["CertServer", "claims", "new_key", "sign"]

"""The production ID-token path: google-auth verifying RS256 tokens against served certificates.

The test makes its own RSA key and self-signed X.509 certificate, serves ``{kid: PEM}`` from a
local HTTP server (what Google's securetoken endpoint serves) and points
``STRATA_FIREBASE_CERTS_URL`` at it. Tokens are signed here with ``cryptography`` directly, so the
oracle is the JWT/Firebase rules (RFC 7519, the securetoken issuer and audience), not the code
under test. Without both emulator variables nothing unsigned gets through.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from core import config
from core.api.app import dispatch
from core.api.auth import uid_from_authorization
from core.bootstrap import Context
from core.errors import ConfigurationError, Unauthorized
from strata_dev import securetoken

PROJECT = "demo-strata-prod"
KID = "test-key-1"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _key_and_cert() -> tuple[Any, str]:
    return securetoken.new_key("securetoken.test")


KEY, CERT = _key_and_cert()
OTHER_KEY, _ = _key_and_cert()


def _claims(uid: str = "user-prod-1", project: str = PROJECT, **over: Any) -> dict[str, Any]:
    return securetoken.claims(uid, project, **over)


def _sign(claims: dict[str, Any], key: Any = KEY, kid: str = KID) -> str:
    return securetoken.sign(claims, key, kid)


@pytest.fixture(scope="module")
def certs_url() -> Iterator[str]:
    with securetoken.CertServer({KID: CERT}, cache_control=None) as server:
        yield server.url


@pytest.fixture()
def settings(certs_url: str) -> config.Settings:
    # A production process: no emulator at all. The test session's environment names the local
    # stack's emulators and Settings reads the environment, so the emulator hosts are cleared here.
    return config.load(project_id=PROJECT, firebase_certs_url=certs_url, firestore_emulator_host="",
                       pubsub_emulator_host="", tasks_emulator_host="", auth_emulator_host="")


def _status(settings: config.Settings, token: str) -> tuple[int, Any]:
    # `bogus` is an unknown query parameter: checked right after the token, so a request whose token
    # is accepted ends in 400 without touching Firestore, and a refused one ends in 401.
    status, body, _ = dispatch(Context(settings), "GET", "/v1/memories", {"authorization": f"Bearer {token}"},
                               {"bogus": ["1"]}, b"", None)
    return status, body


def test_valid_token_is_accepted(settings: config.Settings) -> None:
    assert uid_from_authorization(f"Bearer {_sign(_claims())}", settings) == "user-prod-1"
    status, body = _status(settings, _sign(_claims()))
    assert status == 400 and body["error"]["code"] == "validation_error", body


def _unsigned(claims: dict[str, Any]) -> str:
    return f"{_b64(json.dumps({'alg': 'none', 'typ': 'JWT', 'kid': KID}).encode())}.{_b64(json.dumps(claims).encode())}."


def _tampered() -> str:
    head, body, sig = _sign(_claims()).split(".")
    forged = _b64(json.dumps(_claims(uid="someone-else")).encode())
    return f"{head}.{forged}.{sig}"


@pytest.mark.parametrize("token", [
    pytest.param(lambda: _sign(_claims(project="another-project")), id="another-project"),
    pytest.param(lambda: _sign(_claims(aud=PROJECT, iss="https://securetoken.google.com/another-project")),
                 id="another-issuer"),
    pytest.param(lambda: _sign(_claims(iat=int(time.time()) - 7200, exp=int(time.time()) - 3600)), id="expired"),
    pytest.param(lambda: _unsigned(_claims()), id="alg-none"),
    pytest.param(_tampered, id="tampered-payload"),
    pytest.param(lambda: _sign(_claims(), key=OTHER_KEY), id="signed-by-another-key"),
    pytest.param(lambda: _sign(_claims(), kid="unknown-kid"), id="unknown-kid"),
])
def test_bad_tokens_are_refused_with_401(settings: config.Settings, token: Any) -> None:
    raw = token()
    with pytest.raises(Unauthorized):
        uid_from_authorization(f"Bearer {raw}", settings)
    status, body = _status(settings, raw)
    assert status == 401 and body["error"]["code"] == "unauthorized", body


def test_auth_emulator_alone_does_not_accept_unsigned_tokens(settings: config.Settings) -> None:
    # Settings that bypass validation (load() refuses them) with the Auth emulator but a real
    # Firestore still verify signatures: the token check does not rely on the startup check alone.
    mixed = config.Settings.unchecked(project_id=PROJECT, firebase_certs_url=settings.firebase_certs_url,
                            auth_emulator_host="127.0.0.1:9099")
    with pytest.raises(Unauthorized):
        uid_from_authorization(f"Bearer {_unsigned(_claims())}", mixed)


def test_auth_emulator_without_firestore_emulator_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIREBASE_AUTH_EMULATOR_HOST", "127.0.0.1:9099")
    monkeypatch.delenv("FIRESTORE_EMULATOR_HOST", raising=False)
    with pytest.raises(ConfigurationError, match="FIREBASE_AUTH_EMULATOR_HOST is set but FIRESTORE_EMULATOR_HOST is not"):
        config.load()
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:8080")
    assert config.load().auth_emulator_host == "127.0.0.1:9099"

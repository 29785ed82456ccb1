"""Production ID-token verification fetches the signing certificates once per lifetime.

A local certificate server (what Google's securetoken endpoint is) serves ``{kid: PEM}`` with a
``Cache-Control: max-age`` and counts its hits; tokens are signed here with ``cryptography``. The
expectations are HTTP caching's (RFC 9111: fresh for max-age minus Age, never stored under
no-store) and the Firebase token rules, read from the headers the test serves, not from the code.
The cache's clock is the test's, so lifetimes pass without waiting.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from core import config
from core.api import auth
from core.errors import Unauthorized
from strata_dev.securetoken import CertServer
from tests.integration.test_auth_production import CERT, KID, PROJECT, _claims, _key_and_cert, _sign


@pytest.fixture()
def server() -> Iterator[CertServer]:
    with CertServer({KID: CERT}) as srv:
        yield srv


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(auth, "CERTIFICATES", auth.CertificateCache(clock=c))
    return c


def _settings(url: str) -> config.Settings:
    return config.load(project_id=PROJECT, firebase_certs_url=url, firestore_emulator_host="",
                       pubsub_emulator_host="", tasks_emulator_host="", auth_emulator_host="")


def _verify(settings: config.Settings, token: str | None = None) -> str:
    return auth.uid_from_authorization(f"Bearer {token or _sign(_claims())}", settings)


def test_one_fetch_per_certificate_lifetime(server: CertServer, clock: Clock) -> None:
    settings = _settings(server.url)
    for _ in range(50):
        assert _verify(settings) == "user-prod-1"
    assert server.hits == 1
    clock.now += 599
    _verify(settings)
    assert server.hits == 1
    clock.now += 2  # past max-age=600
    _verify(settings)
    assert server.hits == 2
    for _ in range(20):
        _verify(settings)
    assert server.hits == 2


def test_age_shortens_the_lifetime(server: CertServer, clock: Clock) -> None:
    server.age = "500"  # a shared cache held the answer 500 s of its 600
    settings = _settings(server.url)
    _verify(settings)
    clock.now += 101
    _verify(settings)
    assert server.hits == 2


def test_no_store_fetches_every_time(server: CertServer, clock: Clock) -> None:
    server.cache_control = "no-store"
    settings = _settings(server.url)
    for _ in range(3):
        _verify(settings)
    assert server.hits == 3


def test_rotated_key_is_picked_up_and_random_kids_do_not_force_fetches(server: CertServer, clock: Clock) -> None:
    settings = _settings(server.url)
    _verify(settings)
    new_key, new_cert = _key_and_cert()
    server.certs = {KID: CERT, "rotated": new_cert}
    rotated = _sign(_claims(), key=new_key, kid="rotated")
    # Unknown kids within the refetch interval: refused without a fetch each.
    for n in range(5):
        with pytest.raises(Unauthorized):
            _verify(settings, _sign(_claims(), kid=f"random-{n}"))
    assert server.hits == 1
    clock.now += auth.UNKNOWN_KID_REFETCH_S + 1
    assert _verify(settings, rotated) == "user-prod-1"
    assert server.hits == 2
    assert _verify(settings, rotated) == "user-prod-1" and server.hits == 2


def test_certificates_unreachable_refuse_the_token(clock: Clock) -> None:
    with pytest.raises(Unauthorized):
        _verify(_settings("http://127.0.0.1:9/certs"))


def test_baseline_fetches_per_request(server: CertServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's "before": a cache that does not honour Cache-Control."""
    monkeypatch.setattr(auth, "CERTIFICATES", auth.CertificateCache(honour_cache_control=False))
    settings = _settings(server.url)
    for _ in range(4):
        _verify(settings)
    assert server.hits == 4


# -- the consolidate function's check of Cloud Tasks callers --------------------------------------

AUDIENCE = "https://consolidate-123456789.us-central1.run.app"
INVOKER = "strata-consolidation-invoker@p.iam.gserviceaccount.com"


def _oidc(**over: Any) -> str:
    claims = {"aud": AUDIENCE, "iss": "https://accounts.google.com", "email": INVOKER,
              "exp": int(time.time()) + 3600, "iat": int(time.time())}
    claims.update(over)
    enc = lambda obj: base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"Bearer {enc({'alg': 'RS256', 'kid': 'k'})}.{enc(claims)}.SIGNATURE_REMOVED_BY_GOOGLE"


def test_task_caller_audience_is_checked() -> None:
    settings = config.load(tasks_audience=AUDIENCE, tasks_invoker=INVOKER)
    auth.check_task_caller(_oidc(), settings)
    for bad in (_oidc(aud="https://us-central1-p.cloudfunctions.net/consolidate"), _oidc(email="someone@else"),
                _oidc(iss="https://evil.example"), _oidc(exp=int(time.time()) - 10), None, "Bearer x"):
        with pytest.raises(Unauthorized):
            auth.check_task_caller(bad, settings)
    # Locally (no audience configured) nothing is checked.
    auth.check_task_caller(None, config.load(tasks_audience=""))

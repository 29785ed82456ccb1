"""ID tokens of the app's own Firebase project (issue 45; docs/api.md, *Authentication*;
docs/configuration.md, ``STRATA_FIREBASE_AUDIENCES``).

An ``api`` function process of its own on the session's stack, with
``STRATA_FIREBASE_AUDIENCES=app-project-1,app-project-2``, in the two ways tokens are checked:

* local mode, the Auth emulator's unsigned tokens (the shape :func:`emulator_token` makes, as the
  emulator issues them for whichever project signs in): a token of a listed project is accepted
  and acts as its ``sub``; a token of an unlisted one is a 401, and the session's own ``api`` (no
  audiences configured) refuses the app's project;
* production verification (``FIREBASE_AUTH_EMULATOR_HOST`` unset, certificates served locally,
  tokens signed here with RS256 as Google's securetoken does): a token of a listed project and one
  of Strata's own are accepted; an unlisted project, and a listed ``aud`` whose issuer names
  another project, are 401.

The rule tested is Firebase's (``aud`` is the project id, ``iss`` is
``https://securetoken.google.com/<aud>``), not the code under test.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from strata_dev import securetoken
from strata_dev.localstack.processes import (
    free_ports,
    gunicorn_runtime,
    http_responds,
    log_tail,
    spawn,
    stop_group,
)
from tests.support.firestore_checks import wait_for

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
APP_PROJECTS = "app-project-1, app-project-2"
REPO = Path(__file__).resolve().parents[2]
KID = "app-test-key"
KEY, CERT = securetoken.new_key("securetoken.app-test")


@contextlib.contextmanager
def _api(tmp: Path, name: str, **env_over: str | None) -> Iterator[str]:
    """The api function in a process of its own on the session's stack, with ``env_over`` (None: unset)."""
    port = free_ports(1)[0]
    with gunicorn_runtime(name) as runtime:
        env = dict(os.environ, STRATA_FIREBASE_AUDIENCES=APP_PROJECTS, **runtime)
        for key, value in env_over.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        proc = spawn(f"fn:{name}", [
            sys.executable, "-m", "functions_framework", "--source", str(REPO / "functions" / "api" / "main.py"),
            "--target", "api", "--signature-type", "http", "--host", "127.0.0.1", "--port", str(port)],
            env=env, cwd=REPO, log=tmp / f"{name}.log", port=port)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: http_responds(url + "/healthz", want_2xx=True), timeout=120, interval=0.2,
                     what=f"the api with app audiences ({log_tail(proc.log)})")
            yield url
        finally:
            stop_group(proc)


def _status(url: str, token: str) -> tuple[int, Any]:
    answer = httpx.get(url + "/v1/memories", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return answer.status_code, answer.json()


def test_unsigned_emulator_tokens_of_a_listed_project_are_accepted(
        stack: dict[str, Any], http: httpx.Client, tmp_path: Path) -> None:
    uid = f"app-{uuid.uuid4().hex[:12]}"
    with _api(tmp_path, "api-app-audiences") as url:
        created = httpx.post(url + "/v1/memories", json={"content": "I sing in a choir"}, timeout=60,
                             headers={"Authorization": f"Bearer {emulator_token(uid, 'app-project-2')}"})
        assert created.status_code == 201, created.text
        status, body = _status(url, emulator_token(uid, "app-project-1"))
        assert status == 200 and [m["id"] for m in body["memories"]] == [created.json()["id"]], body
        assert _status(url, emulator_token(uid, PROJECT))[0] == 200  # Strata's own project still is
        status, body = _status(url, emulator_token(uid, "unlisted-project"))
        assert status == 401 and body["error"]["code"] == "unauthorized", body
    # The session's api has no audiences configured: the app's project is refused there.
    refused = http.get("/v1/memories", headers={"Authorization": f"Bearer {emulator_token(uid, 'app-project-1')}"})
    assert refused.status_code == 401, refused.text


def test_signed_tokens_of_a_listed_project_are_verified_and_accepted(stack: dict[str, Any], tmp_path: Path) -> None:
    uid = f"app-{uuid.uuid4().hex[:12]}"

    def signed(project: str, **over: Any) -> str:
        return securetoken.sign(securetoken.claims(uid, project, **over), KEY, KID)

    with securetoken.CertServer({KID: CERT}) as certs, \
            _api(tmp_path, "api-app-signed", FIREBASE_AUTH_EMULATOR_HOST=None, STRATA_FIREBASE_CERTS_URL=certs.url) as url:
        assert _status(url, signed("app-project-1"))[0] == 200
        assert _status(url, signed(PROJECT))[0] == 200
        for token, why in ((signed("unlisted-project"), "unlisted project"),
                           (signed("app-project-1", iss=f"https://securetoken.google.com/{PROJECT}"), "issuer mismatch"),
                           (emulator_token(uid, "app-project-1"), "unsigned outside local mode")):
            status, body = _status(url, token)
            assert status == 401 and body["error"]["code"] == "unauthorized", (why, body)

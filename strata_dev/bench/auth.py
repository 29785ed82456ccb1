"""auth: ``GET /v1/memories`` in production-token mode, certificates fetched per request vs cached.

Production verifies every request's Firebase ID token (RS256) against Google's securetoken
certificates. This benchmark runs that path against a local certificate server that serves
``{kid: PEM}`` with ``Cache-Control: max-age=M`` and counts its hits (optionally answering after a
fixed delay: a fetch from a function to googleapis.com is a TLS round trip, which no local server
has). Requests go through the API's dispatcher in this process (tokens verified, the page read from
the stack's Firestore emulator) on ``concurrency`` threads for ``seconds`` each phase:

* ``before``: the previous code, verbatim: ``id_token.verify_token(token, Request(), ...)`` with a
  new google-auth ``Request`` per call (one certificate download per request);
* ``after``: :data:`core.api.auth.CERTIFICATES`'s behaviour (one fetch per lifetime): over
  ``seconds`` the server sees ``ceil(seconds / M)`` fetches, whatever the request count.

Reported per phase: requests, requests/s, p50/p95 latency, certificate fetches, fetches expected.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from strata_dev import securetoken
from strata_dev.bench import harness, stats

PROJECT = "demo-strata-bench-auth"
KID = "bench-key"


def _token(key: Any, uid: str) -> str:
    return securetoken.sign(securetoken.claims(uid, PROJECT), key, KID)


def _previous_verified_claims(token: str, settings: Any) -> dict[str, Any]:
    """core.api.auth._verified_claims before the certificate cache (the baseline)."""
    from google.auth.transport import requests as google_requests
    from google.oauth2 import id_token

    from core.errors import Unauthorized

    try:
        claims = dict(id_token.verify_token(token, google_requests.Request(), audience=settings.project_id,
                                            certs_url=settings.firebase_certs_url))
    except Exception as exc:  # noqa: BLE001 - as the previous code
        raise Unauthorized("invalid token") from exc
    if claims.get("iss") != f"https://securetoken.google.com/{settings.project_id}":
        raise Unauthorized("token was issued for another project")
    return claims


def _phase(ctx: Any, token: str, seconds: float, concurrency: int) -> dict[str, Any]:
    from core.api.app import dispatch

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker() -> None:
        mine: list[float] = []
        seen: dict[int, int] = {}
        while time.monotonic() < deadline:
            started = time.perf_counter()
            status, _, _ = dispatch(ctx, "GET", "/v1/memories", {"authorization": f"Bearer {token}"},
                                    {"limit": ["20"]}, b"", None)
            mine.append(time.perf_counter() - started)
            seen[status] = seen.get(status, 0) + 1
        with lock:
            latencies.extend(mine)
            for k, v in seen.items():
                statuses[k] = statuses.get(k, 0) + v

    began = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - began
    return {"requests": len(latencies), "requests_per_s": stats.rate(len(latencies), elapsed),
            **stats.latency_ms(latencies), "statuses": {str(k): v for k, v in sorted(statuses.items())}}


def measure(seconds: float, max_age_s: int, delay_ms: float, concurrency: int) -> dict[str, Any]:
    from core import config
    from core.api import auth

    key, cert = securetoken.new_key("securetoken.bench")
    uid = harness.new_uid("auth")
    out: dict[str, Any] = {"seconds_per_phase": seconds, "max_age_s": max_age_s, "cert_delay_ms": delay_ms,
                           "concurrency": concurrency}
    saved = auth.CERTIFICATES, auth._verified_claims
    try:
        for phase in ("before", "after"):
            server = securetoken.CertServer(
                {KID: cert}, cache_control=f"public, max-age={max_age_s}, must-revalidate, no-transform",
                delay_s=delay_ms / 1000.0).start()
            try:
                # Production-token mode: no Auth emulator (signatures verified), the stack's Firestore.
                settings = config.load(project_id=PROJECT, firebase_certs_url=server.url, auth_emulator_host="")
                ctx = harness.context(settings=settings)
                auth._verified_claims = _previous_verified_claims if phase == "before" else saved[1]
                token = _token(key, uid)
                auth.CERTIFICATES = auth.CertificateCache()
                warm = _phase(ctx, token, 2.0, concurrency)  # channel set-up and first imports, not measured
                server.hits = 0
                auth.CERTIFICATES = auth.CertificateCache()
                result = _phase(ctx, token, seconds, concurrency)
                result["cert_fetches"] = server.hits
                result["cert_fetches_expected"] = (result["requests"] if phase == "before"
                                                   else math.ceil(seconds / max_age_s))
                result["warmup_requests"] = warm["requests"]
                out[phase] = result
            finally:
                server.close()
    finally:
        auth.CERTIFICATES, auth._verified_claims = saved
    before, after = out["before"], out["after"]
    out["requests_per_s_ratio"] = stats.ratio(after["requests_per_s"], before["requests_per_s"])
    out["p95_ratio"] = stats.ratio(before["p95_ms"], after["p95_ms"])
    return out


def run(args: Any) -> dict[str, Any]:
    seconds = 3.0 if args.quick else 20.0
    max_age = 1 if args.quick else 6
    runs = {}
    for delay in ((0.0,) if args.quick else (0.0, 50.0)):
        runs[f"cert_delay_{int(delay)}ms"] = measure(seconds, max_age, delay, concurrency=4)
    return runs

"""Which origins ``STRATA_CORS_ORIGINS`` lets in (docs/configuration.md): exact entries, a host on
any port (``:*``), ``*``, and the loopback hosts in local mode only. The expectations are the
setting's documented meaning, one origin at a time."""

from __future__ import annotations

from core.api import cors
from core.config import Settings


def _deployed(origins: str) -> Settings:
    return Settings.unchecked(cors_origins=origins, firestore_emulator_host="", auth_emulator_host="")


def test_a_deployment_allows_exactly_the_configured_origins() -> None:
    settings = _deployed("https://app.example.com, http://dev.example.com:*")
    for origin in ("https://app.example.com", "http://dev.example.com:3000", "http://dev.example.com"):
        assert cors.allowed(settings, origin), origin
    for origin in ("https://app.example.com:8443", "http://app.example.com", "https://app.example.com.evil.io",
                   "https://dev.example.com:3000", "http://localhost:5173", "null", "", None):
        assert not cors.allowed(settings, origin), origin
    assert not cors.allowed(_deployed(""), "https://app.example.com")  # none configured: no browser origin
    assert cors.allowed(_deployed("*"), "https://anything.example")


def test_local_mode_adds_the_loopback_hosts_on_any_port() -> None:
    local = Settings.unchecked(cors_origins="", firestore_emulator_host="127.0.0.1:8080")
    for origin in ("http://localhost:5173", "http://127.0.0.1:8080", "http://localhost"):
        assert cors.allowed(local, origin), origin
    for origin in ("https://localhost:5173", "http://localhost.evil.io:5173", "http://10.0.0.2:5173"):
        assert not cors.allowed(local, origin), origin


def test_answers_to_a_refused_origin_carry_no_allow_header() -> None:
    settings = _deployed("https://app.example.com")
    assert cors.answer_headers(settings, {"origin": "https://evil.example"}) == {"Vary": "Origin"}
    assert cors.answer_headers(settings, {}) == {}
    allowed = cors.preflight_headers(settings, {"origin": "https://app.example.com"}, ["GET", "POST", "OPTIONS"])
    assert allowed["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert allowed["Access-Control-Allow-Methods"] == "GET, POST, OPTIONS"
    refused = cors.preflight_headers(settings, {"origin": "https://evil.example"}, ["GET"])
    assert not [h for h in refused if h.startswith("Access-Control-")]

"""Settings: one declaration per setting, read from the variables the table of
``docs/configuration.md`` names; an empty variable is the default; a value that does not parse
is a clear error at startup; tests pass settings explicitly (``load(name=value)``, ``settings.replace``) instead of changing
``os.environ``.

The variables are set with pytest's ``monkeypatch`` (undone after each test): reading the
environment is what is under test here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core import config
from core.errors import ConfigurationError

CONFIG_DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _documented_variables() -> set[str]:
    section = CONFIG_DOC.read_text(encoding="utf-8")
    table = section[section.index("| variable"):].split("\n\n", 1)[0]
    return {name for row in table.splitlines() if row.startswith("| `")
            for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No variable of any setting set (the test session's stack sets some)."""
    for field in config.names():
        for name in config.env_names(field):
            monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_configuration_table_names_every_variable_and_only_those() -> None:
    read = {name for field in config.names() for name in config.env_names(field)}
    assert _documented_variables() == read


def test_defaults_as_the_configuration_doc_states_them(clean_env: pytest.MonkeyPatch) -> None:
    settings = config.load()
    assert (settings.project_id, settings.region, settings.embedding_dim, settings.max_body_bytes) == (
        "demo-strata", "us-central1", 384, 1_048_576)
    assert (settings.consolidation_interval_s, settings.walk_page_size, settings.walk_pages) == (600.0, 500, 4)
    assert settings.consolidation_on_write is True and settings.real_project is False
    assert settings.firestore_emulator_host == "" and not settings.local
    assert settings == config.Settings()  # the class itself reads the same environment


def test_values_come_from_their_variables(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("STRATA_EMBEDDING_DIM", " 128 ")
    clean_env.setenv("STRATA_CONSOLIDATION_ON_WRITE", "0")
    clean_env.setenv("STRATA_LLM_TIMEOUT_S", "2.5")
    clean_env.setenv("PINECONE_API_KEY", "key")
    clean_env.setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:8080")
    clean_env.setenv("STRATA_MAX_BODY_BYTES", "")  # empty: the default
    settings = config.load()
    assert (settings.embedding_dim, settings.consolidation_on_write, settings.llm_timeout_s) == (128, False, 2.5)
    assert settings.pinecone_api_key == "key" and settings.firestore_emulator_host == "127.0.0.1:8080"
    assert settings.local and settings.max_body_bytes == 1_048_576


@pytest.mark.parametrize(("value", "flag"), [("1", True), ("Yes", True), ("on", True), ("true", True), ("0", False),
                                              ("NO", False), ("off", False), ("false", False)])
def test_a_flag_reads_the_usual_words(clean_env: pytest.MonkeyPatch, value: str, flag: bool) -> None:
    clean_env.setenv("STRATA_CONSOLIDATION_ON_WRITE", value)
    assert config.load().consolidation_on_write is flag


def test_words_from_a_fixed_set_are_read_as_given(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("STRATA_PROVIDER_SETUP", "check")
    clean_env.setenv("STRATA_LLM_RESPONSE_FORMAT", " none ")
    settings = config.load()
    assert (settings.provider_setup, settings.llm_response_format) == ("check", "none")


def test_the_project_id_falls_back_to_googles_variables(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("GCLOUD_PROJECT", "older")
    assert config.load().project_id == "older"
    clean_env.setenv("GOOGLE_CLOUD_PROJECT", "google")
    assert config.load().project_id == "google"
    clean_env.setenv("STRATA_PROJECT_ID", "")
    assert config.load().project_id == "google"
    clean_env.setenv("STRATA_PROJECT_ID", "strata")
    assert config.load().project_id == "strata"


@pytest.mark.parametrize(("variable", "value"), [
    ("STRATA_EMBEDDING_DIM", "abc"), ("STRATA_EMBEDDING_DIM", "0"), ("STRATA_LLM_TIMEOUT_S", "soon"),
    ("STRATA_CONSOLIDATION_ON_WRITE", "perhaps"), ("STRATA_WALK_PAGES", "-1"), ("STRATA_MAX_BODY_BYTES", "1.5"),
    ("STRATA_ACCOUNT_PURGE_WAIT_S", "-0.5"), ("STRATA_PROVIDER_SETUP", "make"), ("STRATA_LLM_RESPONSE_FORMAT", "xml"),
])
def test_a_bad_value_is_a_clear_error_naming_its_variable(clean_env: pytest.MonkeyPatch, variable: str,
                                                          value: str) -> None:
    clean_env.setenv(variable, value)
    with pytest.raises(ConfigurationError) as caught:
        config.load()
    assert variable in caught.value.message and repr(value) in caught.value.message
    assert caught.value.code == "invalid_configuration"


def test_settings_are_passed_explicitly(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("STRATA_EMBEDDING_DIM", "128")
    settings = config.load(project_id="explicit", max_content_chars=50)
    assert (settings.project_id, settings.max_content_chars, settings.embedding_dim) == ("explicit", 50, 128)
    changed = settings.replace(embedding_dim=64)
    assert (changed.embedding_dim, changed.project_id, settings.embedding_dim) == (64, "explicit", 128)
    assert hash(changed) != hash(settings) and changed == settings.replace(embedding_dim=64)
    with pytest.raises(ConfigurationError, match="STRATA_WALK_PAGES"):
        settings.replace(walk_pages=0)
    with pytest.raises(ConfigurationError, match="walk_pagez"):
        config.load(walk_pagez=3)
    with pytest.raises(Exception):  # noqa: B017 - frozen: a Settings never changes after it is built
        settings.embedding_dim = 1  # type: ignore[misc]

"""Every setting Strata reads, from the environment, in one place.

:class:`Settings` declares each setting once: its type, its default and its environment variable
(``STRATA_<NAME>``, or the names given in ``validation_alias`` for the variables Google's tools and
emulators define, the first one set winning). Variable names are matched case-insensitively and
values have surrounding whitespace removed. Functions, the CLI and the local stack build one with
:func:`load`; tests and benchmarks pass settings explicitly with ``load(name=value, ...)`` (the
environment, then those values) or ``settings.replace(name=value, ...)``, never by changing
``os.environ``. Nothing else in the code base reads ``os.environ``. docs/configuration.md's
table mirrors this module.

An empty variable is the default; a value that does not parse (``STRATA_EMBEDDING_DIM=abc``) is a
:class:`~core.errors.ConfigurationError` naming the variable, raised when the settings are built
(a function's cold start, the CLI's first line).

The environment is read here rather than through pydantic-settings: every setting is a plain
string, number or flag, and importing that package (with the asyncio and dotenv modules it loads)
cost every function's cold start 30–40 ms of CPU on a 2-core machine, against about 5 ms for this
module now (the Firestore SDK still loads asyncio later, in the functions that use it).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.errors import ConfigurationError

FIREBASE_CERTS_URL = "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"


def _env(default: str, *names: str) -> Any:
    """A setting read from ``names`` (the first one set wins) instead of ``STRATA_<NAME>``."""
    return Field(default, validation_alias=AliasChoices(*names) if len(names) > 1 else names[0])


class Settings(BaseModel):
    """``Settings(name=value, ...)``: the environment, then those values (by field name)."""

    model_config = ConfigDict(str_strip_whitespace=True, frozen=True, extra="forbid", validate_by_name=True,
                              validate_by_alias=True)

    def __init__(self, **values: Any) -> None:
        super().__init__(**{**_environment(), **values})

    project_id: str = _env("demo-strata", "STRATA_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT")
    region: str = "us-central1"
    # Emulators (empty = talk to the real service).
    firestore_emulator_host: str = _env("", "FIRESTORE_EMULATOR_HOST")
    pubsub_emulator_host: str = _env("", "PUBSUB_EMULATOR_HOST")
    tasks_emulator_host: str = _env("", "CLOUD_TASKS_EMULATOR_HOST")
    auth_emulator_host: str = _env("", "FIREBASE_AUTH_EMULATOR_HOST")
    # Where production ID-token verification fetches the Firebase signing certificates.
    firebase_certs_url: str = FIREBASE_CERTS_URL
    # Messaging.
    projection_topic: str = "strata-projection"
    tasks_queue: str = "strata-consolidation"
    consolidate_url: str = ""  # the consolidate function: per-user pass tasks target it
    webhook_url: str = ""  # the deliver_webhook function: webhook delivery tasks target it
    tasks_invoker: str = ""  # service account whose OIDC token Cloud Tasks attaches (production)
    # The audience a task worker (consolidate, deliver_webhook) checks on those tokens: its own
    # run.app URL; empty: no check (local).
    tasks_audience: str = ""
    # The API's public URL (e.g. the function's URL, path prefix included): what the MCP server's
    # 401 and its protected-resource metadata name. Empty: the request's scheme and Host.
    public_url: str = ""
    # Provider schema at start: "create" makes a missing Typesense collection (the local stack);
    # "check" only checks and fails naming `strata setup` (deployed functions, Terraform sets it).
    provider_setup: str = Field("create", pattern="^(create|check)$")
    # Providers.
    typesense_url: str = ""
    typesense_api_key: str = ""
    typesense_collection: str = "memories"
    # Who purges the keyword index in an account wipe: "inline" (the calling process, which holds
    # the write key: operators, tests) or "drain" (the api function, whose search-only key cannot
    # delete: it asks the outbox drain over the projection topic and waits at most
    # ``account_purge_wait_s`` for the drain to record the purge, else answers a retryable 503).
    keyword_purge: str = Field("inline", pattern="^(inline|drain)$")
    account_purge_wait_s: float = Field(20.0, ge=0)
    pinecone_host: str = ""
    pinecone_api_key: str = _env("", "PINECONE_API_KEY")
    pinecone_namespace: str = "strata"
    # The original's namespace (its ``{uid}-{memory_id}`` vectors): deletes and purges clear it too.
    pinecone_legacy_namespace: str = "ns2"
    # Models.
    extractor: str = "rules"
    router: str = "rules"
    embedder: str = "hashing"
    embedding_dim: int = Field(384, gt=0)
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout_s: float = Field(20.0, gt=0)
    llm_max_tokens: int = Field(4096, gt=0)  # completion budget of one chat request
    # Compatibility: ``json_schema`` (strict structured output), ``json_object`` (JSON mode; the
    # reply is validated here against the same schema) or ``none`` (no response_format at all).
    llm_response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    llm_send_temperature: bool = True  # off for servers that refuse ``temperature``
    # A conversation revision's extraction calls the model at most this many times (each failed
    # call counted on the capture marker); then ``llm_on_failure`` decides: ``fall_back`` to the
    # rule extractor, or ``fail`` (recorded, acknowledged).
    llm_max_attempts: int = Field(3, gt=0)
    llm_on_failure: Literal["fall_back", "fail"] = "fall_back"
    # A long transcript is sent in windows of whole segments: at most this many segments / characters.
    llm_window_segments: int = Field(200, gt=0)
    llm_window_chars: int = Field(24_000, gt=0)
    embedding_model: str = ""
    # The OpenAI-compatible embedder's own endpoint (not the chat model's).
    embedding_base_url: str = ""
    embedding_api_key: str = ""
    # Vertex AI text embeddings: the API root (empty: https://{location}-aiplatform.googleapis.com)
    # and location (empty: ``region``); credentials are the process's Application Default Credentials.
    vertex_endpoint: str = ""
    vertex_location: str = ""
    # Behaviour.
    short_term_ttl_days: int = Field(30, ge=0)
    long_term_archive_after_days: int = Field(0, ge=0)  # 0 = never age out
    max_body_bytes: int = Field(1_048_576, gt=0)
    max_content_chars: int = Field(8_000, gt=0)
    # Developer webhooks: delivered by Cloud Tasks on their own queue, each POST bounded in time.
    webhook_queue: str = "strata-webhooks"
    webhook_timeout_s: float = Field(10.0, gt=0)
    # Consolidation scheduling: a user's pass runs one interval after the write that made an item
    # pending (the Terraform cron's period); a pass selects at most ``consolidation_pass_limit``
    # items; the safety-net walk reads at most ``walk_pages`` pages of ``walk_page_size`` users.
    consolidation_interval_s: float = Field(600.0, gt=0)
    consolidation_pass_limit: int = Field(500, gt=0)
    consolidation_on_write: bool = True  # off: writes only mark the user; the walk schedules it
    walk_page_size: int = Field(500, gt=0)
    walk_pages: int = Field(4, gt=0)
    # Local tooling (the stack, its scheduler stand-in, the CLI).
    state_dir: str = ""  # default <repo>/.strata/stack
    tick_seconds: float = Field(0.0, ge=0)  # 0 = follow the Terraform crons
    real_project: bool = False  # CLI: never look for a local stack

    @model_validator(mode="after")
    def _no_emulator_tokens_in_front_of_real_firestore(self) -> Settings:
        # Unsigned Auth-emulator tokens are accepted only when Firestore is an emulator too.
        if self.auth_emulator_host and not self.firestore_emulator_host:
            raise ValueError(
                "FIREBASE_AUTH_EMULATOR_HOST is set but FIRESTORE_EMULATOR_HOST is not: refusing to start, "
                "because unsigned Auth-emulator tokens would be accepted in front of a real Firestore. "
                "Unset FIREBASE_AUTH_EMULATOR_HOST in a deployment, or set both for the emulators.")
        return self

    @property
    def schedule_interval_s(self) -> float:
        """The consolidation window and task delay: ``STRATA_TICK_SECONDS`` when set (the local
        stack's tick), else the declared interval."""
        return self.tick_seconds or self.consolidation_interval_s

    @property
    def local(self) -> bool:
        """True when pointed at the emulators (unsigned auth tokens are then accepted)."""
        return bool(self.auth_emulator_host or self.firestore_emulator_host)

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied, validated like the environment's values."""
        return _build({**self.model_dump(), **changes})


def env_names(field: str) -> list[str]:
    """The environment variables a setting is read from, in order (the first one set wins)."""
    alias = Settings.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [str(alias)] if alias else [f"STRATA_{field.upper()}"]


def env_name(field: str) -> str:
    """The environment variable a setting is read from first (what docs/configuration.md's table names)."""
    return env_names(field)[0]


def _environment() -> dict[str, str]:
    """Field name -> the value of its first variable that is set and not blank."""
    variables = {name.upper(): value.strip() for name, value in os.environ.items()}
    found: dict[str, str] = {}
    for field in Settings.model_fields:
        value = next((v for name in env_names(field) if (v := variables.get(name.upper(), ""))), "")
        if value:
            found[field] = value
    return found


def _build(values: dict[str, Any]) -> Settings:
    try:
        return Settings(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = error.get("loc") or ("?",)
            field = str(loc[0])
            where = f"{env_name(field)} ({field})" if field in Settings.model_fields else field
            problems.append(f"{where} = {error.get('input')!r}: {error.get('msg')}")
        raise ConfigurationError("invalid settings: " + "; ".join(problems)) from None


def load(**overrides: Any) -> Settings:
    """The settings of this process: the environment, then ``overrides`` (by field name)."""
    return _build(overrides)


__all__ = ["Settings", "env_name", "env_names", "load"]

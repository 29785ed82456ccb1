"""Every setting Strata reads, from the environment, in one place.

:class:`Settings` declares each setting once: its type, its default and its environment variable
(``STRATA_<NAME>``, or the names given in ``env=`` for the variables Google's tools and emulators
define, the first one set winning), with its bounds (``gt``, ``ge``) or its allowed values
(``choices``, or a ``Literal`` type). Variable names are matched case-insensitively and values have
surrounding whitespace removed. Functions, the CLI and the local stack build one with :func:`load`;
tests and benchmarks pass settings explicitly with ``load(name=value, ...)`` (the environment, then
those values) or ``settings.replace(name=value, ...)``, never by changing ``os.environ``. Nothing
else in the code base reads ``os.environ``. docs/configuration.md's table mirrors this module.

An empty variable is the default; a value that does not parse (``STRATA_EMBEDDING_DIM=abc``) or is
out of range is a :class:`~core.errors.ConfigurationError` naming the variable, raised when the
settings are built (a function's cold start, the CLI's first line).

The settings are a frozen dataclass checked here rather than a pydantic model: every setting is a
plain string, number, flag or one of a few words, and building the pydantic model (its validator
for some sixty fields) cost every function's cold start about 25 ms of CPU on a 2-core machine,
importing pydantic itself 80-90 ms more where nothing else needs it yet (pydantic-settings, which
it replaced earlier, cost 30-40 ms on top).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import typing
from typing import Any, Literal

from core.domain import paths, states
from core.errors import ConfigurationError

FIREBASE_CERTS_URL = "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"

# The words a flag accepts (case-insensitive), as pydantic's lax booleans did.
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


def _setting(default: Any, *, env: tuple[str, ...] = (), gt: float | None = None, ge: float | None = None,
             choices: tuple[str, ...] = ()) -> Any:
    """A setting's default with what it is read from (``env``: instead of ``STRATA_<NAME>``) and
    what it must satisfy (``gt``, ``ge``, ``choices``)."""
    return dataclasses.field(default=default, metadata={"env": env, "gt": gt, "ge": ge, "choices": choices})


@dataclasses.dataclass(frozen=True, init=False)
class Settings:
    """``Settings(name=value, ...)``: the environment, then those values (by field name), checked."""

    def __init__(self, **values: Any) -> None:
        for name, value in _checked({**_environment(), **values}).items():
            object.__setattr__(self, name, value)

    @classmethod
    def unchecked(cls, **values: Any) -> Settings:
        """The defaults, then ``values``, neither read from the environment nor checked: for tests
        of what a component does with settings :func:`load` would refuse."""
        settings = object.__new__(cls)
        for name, default in _defaults().items():
            object.__setattr__(settings, name, values.get(name, default))
        return settings

    project_id: str = _setting("demo-strata", env=("STRATA_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"))
    region: str = "us-central1"
    # Emulators (empty = talk to the real service).
    firestore_emulator_host: str = _setting("", env=("FIRESTORE_EMULATOR_HOST",))
    pubsub_emulator_host: str = _setting("", env=("PUBSUB_EMULATOR_HOST",))
    tasks_emulator_host: str = _setting("", env=("CLOUD_TASKS_EMULATOR_HOST",))
    auth_emulator_host: str = _setting("", env=("FIREBASE_AUTH_EMULATOR_HOST",))
    # Where production ID-token verification fetches the Firebase signing certificates.
    firebase_certs_url: str = FIREBASE_CERTS_URL
    # Firebase projects besides ``project_id`` whose users' ID tokens are accepted, comma-separated
    # project ids (an app whose users sign in to the app's own project). Empty: Strata's own only.
    firebase_audiences: str = ""
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
    # Origins a browser app may call the API from (CORS), comma-separated: exact
    # (``https://app.example.com``) or any port of a host (``http://localhost:*``); ``*`` any.
    # Local mode adds ``http://localhost:*`` and ``http://127.0.0.1:*``. Empty: no browser origin.
    cors_origins: str = ""
    # Provider schema at start: "create" makes a missing Typesense collection (the local stack);
    # "check" only checks and fails naming `strata setup` (deployed functions, Terraform sets it).
    provider_setup: str = _setting("create", choices=("create", "check"))
    # Providers.
    typesense_url: str = ""
    typesense_api_key: str = ""
    typesense_collection: str = "memories"
    # Who purges the keyword index in an account wipe: "inline" (the calling process, which holds
    # the write key: operators, tests) or "drain" (the api function, whose search-only key cannot
    # delete: it asks the outbox drain over the projection topic and waits at most
    # ``account_purge_wait_s`` for the drain to record the purge, else answers a retryable 503).
    keyword_purge: str = _setting("inline", choices=("inline", "drain"))
    account_purge_wait_s: float = _setting(20.0, ge=0)
    # Whether an account wipe deletes ``users/{uid}/conversations`` too (true: Strata's new-project
    # mode, where the app writes them for Strata only); false leaves them to an app that keeps them
    # as its own records. The wipe never deletes the ``users/{uid}`` document or an app's collections.
    wipe_conversations: bool = True
    # Names an app chooses (core/domain/paths.py): the document Strata keeps a user's collections
    # under, and the collection the app writes conversations to (the capture trigger's source), each
    # with ``{uid}`` once in a document id's place. Terraform sets both with the trigger's path.
    data_root: str = paths.DEFAULT_DATA_ROOT
    conversations_path: str = paths.DEFAULT_CONVERSATIONS_PATH
    pinecone_host: str = ""
    pinecone_api_key: str = _setting("", env=("PINECONE_API_KEY",))
    pinecone_namespace: str = "strata"
    # The original's namespace (its ``{uid}-{memory_id}`` vectors): deletes and purges clear it too.
    pinecone_legacy_namespace: str = "ns2"
    # Models.
    # ``rules`` (deterministic, offline) or ``openai`` (a model behind an OpenAI-compatible chat
    # endpoint); the embedders of core/adapters/embeddings.py. Terraform validates the same lists.
    extractor: str = _setting("rules", choices=("rules", "openai"))
    router: str = _setting("rules", choices=("rules", "openai"))
    embedder: str = _setting("hashing", choices=("hashing", "minilm", "openai", "vertex"))
    embedding_dim: int = _setting(384, gt=0)
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    # How the chat client authenticates: ``none`` (no Authorization header), ``key`` (the key
    # above as a bearer token, when set) or ``google`` (the process's own service account: an
    # access token from Application Default Credentials, i.e. the metadata server on Cloud Run,
    # cached until shortly before it expires; for Vertex AI's OpenAI-compatible endpoint).
    llm_auth: Literal["none", "key", "google"] = "key"
    llm_timeout_s: float = _setting(20.0, gt=0)
    llm_max_tokens: int = _setting(4096, gt=0)  # completion budget of one chat request
    # Compatibility: ``json_schema`` (strict structured output), ``json_object`` (JSON mode; the
    # reply is validated here against the same schema) or ``none`` (no response_format at all).
    llm_response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    llm_send_temperature: bool = True  # off for servers that refuse ``temperature``
    # ``reasoning_effort`` sent with each chat request (empty: not sent). For Gemini 2.5 on Vertex AI
    # it bounds the thinking tokens, which count against ``llm_max_tokens`` and are billed as output.
    llm_reasoning_effort: str = _setting("", choices=("", "none", "minimal", "low", "medium", "high"))
    # A conversation revision's extraction calls the model at most this many times (each failed
    # call counted on the capture marker); then ``llm_on_failure`` decides: ``fall_back`` to the
    # rule extractor, or ``fail`` (recorded, acknowledged).
    llm_max_attempts: int = _setting(3, gt=0)
    llm_on_failure: Literal["fall_back", "fail"] = "fall_back"
    # A long transcript is sent in windows of whole segments: at most this many segments / characters.
    llm_window_segments: int = _setting(200, gt=0)
    llm_window_chars: int = _setting(24_000, gt=0)
    embedding_model: str = ""
    # The OpenAI-compatible embedder's own endpoint (not the chat model's).
    embedding_base_url: str = ""
    embedding_api_key: str = ""
    # Vertex AI text embeddings: the API root (empty: https://{location}-aiplatform.googleapis.com)
    # and location (empty: ``region``); credentials are the process's Application Default Credentials.
    vertex_endpoint: str = ""
    vertex_location: str = ""
    # Behaviour.
    short_term_ttl_days: int = _setting(states.SHORT_TERM_TTL_DAYS, ge=0)
    long_term_archive_after_days: int = _setting(0, ge=0)  # 0 = never age out
    max_body_bytes: int = _setting(1_048_576, gt=0)
    max_content_chars: int = _setting(8_000, gt=0)
    # Per-user rate limits (429 with Retry-After): requests per window of ``rate_window_s``
    # seconds, counted in Firestore across every api instance; 0 turns a kind off. ``writes``:
    # every create, edit and delete; ``extraction``: POST /v1/conversations and reprocess (each
    # drives extraction, with a model its cost); ``search``: the searches that embed the query.
    rate_window_s: int = _setting(60, gt=0)
    rate_limit_writes: int = _setting(120, ge=0)
    rate_limit_extraction: int = _setting(30, ge=0)
    rate_limit_search: int = _setting(300, ge=0)
    # Developer webhooks: delivered by Cloud Tasks on their own queue, each POST bounded in time.
    webhook_queue: str = "strata-webhooks"
    webhook_timeout_s: float = _setting(10.0, gt=0)
    # Consolidation scheduling: a user's pass runs one interval after the write that made an item
    # pending (the Terraform cron's period); a pass selects at most ``consolidation_pass_limit``
    # items; the safety-net walk reads at most ``walk_pages`` pages of ``walk_page_size`` users.
    consolidation_interval_s: float = _setting(600.0, gt=0)
    consolidation_pass_limit: int = _setting(500, gt=0)
    consolidation_on_write: bool = True  # off: writes only mark the user; the walk schedules it
    walk_page_size: int = _setting(500, gt=0)
    walk_pages: int = _setting(4, gt=0)
    # Observability (core/tracing.py, core/logs.py). Where spans go: ``cloud_trace`` (Cloud Trace),
    # ``file`` (JSON lines in ``trace_file``, empty: ``<state_dir>/traces.jsonl``; the local stack),
    # ``none``, or ``auto``: ``cloud_trace`` on Cloud Run (``K_SERVICE`` set, no emulator), else none.
    trace_exporter: str = _setting("auto", choices=("auto", "none", "file", "cloud_trace"))
    trace_file: str = ""
    # The share of traces recorded when the caller did not decide (a sampled parent is always kept).
    trace_sample_ratio: float = _setting(1.0, ge=0)
    # The Cloud Run service name (set by the platform): the traces' service name, and ``auto``'s cue.
    k_service: str = _setting("", env=("K_SERVICE",))
    # The HMAC-SHA256 key of ``uid_hash`` in log lines and spans (a secret in production: without it
    # anyone who reads the logs can hash candidate uids and compare). Empty: a fixed local key.
    log_hash_key: str = ""
    # Local tooling (the stack, its scheduler stand-in, the CLI).
    state_dir: str = ""  # default <repo>/.strata/stack
    tick_seconds: float = _setting(0.0, ge=0)  # 0 = follow the Terraform crons
    real_project: bool = False  # CLI: never look for a local stack

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
        """A copy with ``changes`` applied, checked like the environment's values."""
        return Settings(**{**{name: getattr(self, name) for name in names()}, **changes})


def names() -> tuple[str, ...]:
    """Every setting's name, in declaration order."""
    return tuple(_defaults())


def default(name: str) -> Any:
    """A setting's default (what an empty or unset variable gives)."""
    return _defaults()[name]


def env_names(field: str) -> list[str]:
    """The environment variables a setting is read from, in order (the first one set wins)."""
    return list(_fields()[field].metadata.get("env", ())) or [f"STRATA_{field.upper()}"]


def env_name(field: str) -> str:
    """The environment variable a setting is read from first (what docs/configuration.md's table names)."""
    return env_names(field)[0]


@functools.cache
def _fields() -> dict[str, dataclasses.Field[Any]]:
    return {field.name: field for field in dataclasses.fields(Settings)}


@functools.cache
def _defaults() -> dict[str, Any]:
    return {name: field.default for name, field in _fields().items()}


@functools.cache
def _types() -> dict[str, Any]:
    return typing.get_type_hints(Settings)


def _environment() -> dict[str, str]:
    """Field name -> the value of its first variable that is set and not blank."""
    variables = {name.upper(): value.strip() for name, value in os.environ.items()}
    found: dict[str, str] = {}
    for field in _fields():
        value = next((v for name in env_names(field) if (v := variables.get(name.upper(), ""))), "")
        if value:
            found[field] = value
    return found


def _parse(kind: Any, value: Any) -> Any:
    """``value`` as a ``kind`` (str, bool, int, float or a ``Literal``); ``ValueError`` saying why not."""
    if isinstance(value, str):
        value = value.strip()
    if typing.get_origin(kind) is Literal:
        kind = str
    if kind is str:
        if not isinstance(value, str):
            raise ValueError("not a string")
        return value
    if isinstance(value, bool) and kind in (int, float):
        raise ValueError(f"not {'an integer' if kind is int else 'a number'}")
    if kind is bool:
        if isinstance(value, bool):
            return value
        word = str(value).lower() if isinstance(value, str | int) else ""
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ValueError("not a flag (true/false, 1/0, yes/no, on/off)")
    if kind is int:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, int) or (isinstance(value, str) and value.lstrip("+-").isdigit()):
            return int(value)
        raise ValueError("not an integer")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("not a number") from None


def _check(field: dataclasses.Field[Any], value: Any) -> Any:
    value = _parse(_types()[field.name], value)
    gt, ge = field.metadata.get("gt"), field.metadata.get("ge")
    choices = field.metadata.get("choices") or typing.get_args(_types()[field.name])
    if gt is not None and not value > gt:
        raise ValueError(f"must be greater than {gt}")
    if ge is not None and not value >= ge:
        raise ValueError(f"must be at least {ge}")
    if choices and value not in choices:
        raise ValueError("must be one of " + ", ".join(map(repr, choices)))
    return value


def _checked(values: dict[str, Any]) -> dict[str, Any]:
    """Every setting's value: the given one parsed and checked, else its default; a
    :class:`ConfigurationError` naming each variable that does not parse or is out of range."""
    fields = _fields()
    checked: dict[str, Any] = {}
    problems = [f"{name} = {values[name]!r}: not a setting" for name in values if name not in fields]
    for name, field in fields.items():
        if name not in values:
            checked[name] = field.default
            continue
        try:
            checked[name] = _check(field, values[name])
        except ValueError as exc:
            problems.append(f"{env_name(name)} ({name}) = {values[name]!r}: {exc}")
    if not problems:
        problems = [f"{env_name(field)} ({field}) = {checked[field]!r}: {what}" for field, what in
                    paths.layout_problems(checked["data_root"], checked["conversations_path"])]
    if problems:
        raise ConfigurationError("invalid settings: " + "; ".join(problems))
    # Unsigned Auth-emulator tokens are accepted only when Firestore is an emulator too.
    if checked["auth_emulator_host"] and not checked["firestore_emulator_host"]:
        raise ConfigurationError(
            "FIREBASE_AUTH_EMULATOR_HOST is set but FIRESTORE_EMULATOR_HOST is not: refusing to start, "
            "because unsigned Auth-emulator tokens would be accepted in front of a real Firestore. "
            "Unset FIREBASE_AUTH_EMULATOR_HOST in a deployment, or set both for the emulators.")
    return checked


def load(**overrides: Any) -> Settings:
    """The settings of this process: the environment, then ``overrides`` (by field name)."""
    return Settings(**overrides)


__all__ = ["Settings", "default", "env_name", "env_names", "load", "names"]

"""Every setting Strata reads, from the environment, in one place.

Functions, the CLI and the local stack all build a :class:`Settings` with :func:`load`; nothing
else in the code base reads ``os.environ``. The README's configuration table mirrors this module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from core.errors import ConfigError


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def _int(name: str, default: int) -> int:
    raw = _env(name)
    return int(raw) if raw else default


def _float(name: str, default: float) -> float:
    raw = _env(name)
    return float(raw) if raw else default


def _bool(name: str, default: bool = False) -> bool:
    raw = _env(name).lower()
    if not raw:
        return default
    return raw in {"1", "true", "yes", "on"}


FIREBASE_CERTS_URL = "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"


@dataclass(frozen=True)
class Settings:
    project_id: str = "demo-strata"
    region: str = "us-central1"
    # Emulators (empty = talk to the real service).
    firestore_emulator_host: str = ""
    pubsub_emulator_host: str = ""
    tasks_emulator_host: str = ""
    auth_emulator_host: str = ""
    # Where production ID-token verification fetches the Firebase signing certificates.
    firebase_certs_url: str = FIREBASE_CERTS_URL
    # Messaging.
    projection_topic: str = "strata-projection"
    tasks_queue: str = "strata-consolidation"
    consolidate_url: str = ""
    tasks_invoker: str = ""  # service account whose OIDC token Cloud Tasks attaches (production)
    # Providers.
    typesense_url: str = ""
    typesense_api_key: str = ""
    typesense_collection: str = "memories"
    pinecone_host: str = ""
    pinecone_api_key: str = ""
    pinecone_namespace: str = "strata"
    # Models.
    extractor: str = "rules"
    router: str = "rules"
    embedder: str = "hashing"
    embedding_dim: int = 384
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout_s: float = 20.0
    embedding_model: str = ""
    # Behaviour.
    short_term_ttl_days: int = 30
    long_term_archive_after_days: int = 0  # 0 = never age out
    max_body_bytes: int = 1_048_576
    max_content_chars: int = 8_000
    # Developer webhooks: delivered by Cloud Tasks on their own queue, each POST bounded in time.
    webhook_queue: str = "strata-webhooks"
    webhook_timeout_s: float = 10.0
    # Consolidation scheduling: a user's pass runs one interval after the write that made an item
    # pending (the Terraform cron's period); a pass selects at most ``consolidation_pass_limit``
    # items; the safety-net walk reads at most ``walk_pages`` pages of ``walk_page_size`` users.
    consolidation_interval_s: float = 600.0
    consolidation_pass_limit: int = 500
    consolidation_on_write: bool = True  # off: writes only mark the user; the walk schedules it
    walk_page_size: int = 500
    walk_pages: int = 4
    # Local tooling (the stack, its scheduler stand-in, the CLI).
    state_dir: str = ""  # default <repo>/.strata/stack
    tick_seconds: float = 0.0  # 0 = follow the Terraform crons
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


def load() -> Settings:
    """The settings of this process; refuses an Auth-emulator variable without a Firestore emulator
    (that combination would accept unsigned tokens in front of a real database)."""
    auth_emulator = _env("FIREBASE_AUTH_EMULATOR_HOST")
    if auth_emulator and not _env("FIRESTORE_EMULATOR_HOST"):
        raise ConfigError(
            "FIREBASE_AUTH_EMULATOR_HOST is set but FIRESTORE_EMULATOR_HOST is not: refusing to start, "
            "because unsigned Auth-emulator tokens would be accepted in front of a real Firestore. "
            "Unset FIREBASE_AUTH_EMULATOR_HOST in a deployment, or set both for the emulators.")
    project = _env("STRATA_PROJECT_ID") or _env("GOOGLE_CLOUD_PROJECT") or _env("GCLOUD_PROJECT") or "demo-strata"
    return Settings(
        project_id=project,
        region=_env("STRATA_REGION", "us-central1"),
        firestore_emulator_host=_env("FIRESTORE_EMULATOR_HOST"),
        pubsub_emulator_host=_env("PUBSUB_EMULATOR_HOST"),
        tasks_emulator_host=_env("CLOUD_TASKS_EMULATOR_HOST"),
        auth_emulator_host=auth_emulator,
        firebase_certs_url=_env("STRATA_FIREBASE_CERTS_URL", FIREBASE_CERTS_URL),
        projection_topic=_env("STRATA_PROJECTION_TOPIC", "strata-projection"),
        tasks_queue=_env("STRATA_TASKS_QUEUE", "strata-consolidation"),
        consolidate_url=_env("STRATA_CONSOLIDATE_URL"),
        tasks_invoker=_env("STRATA_TASKS_INVOKER"),
        typesense_url=_env("STRATA_TYPESENSE_URL"),
        typesense_api_key=_env("STRATA_TYPESENSE_API_KEY"),
        typesense_collection=_env("STRATA_TYPESENSE_COLLECTION", "memories"),
        pinecone_host=_env("STRATA_PINECONE_HOST"),
        pinecone_api_key=_env("PINECONE_API_KEY"),
        pinecone_namespace=_env("STRATA_PINECONE_NAMESPACE", "strata"),
        extractor=_env("STRATA_EXTRACTOR", "rules"),
        router=_env("STRATA_ROUTER", "rules"),
        embedder=_env("STRATA_EMBEDDER", "hashing"),
        embedding_dim=_int("STRATA_EMBEDDING_DIM", 384),
        llm_base_url=_env("STRATA_LLM_BASE_URL"),
        llm_model=_env("STRATA_LLM_MODEL"),
        llm_api_key=_env("STRATA_LLM_API_KEY"),
        llm_timeout_s=_float("STRATA_LLM_TIMEOUT_S", 20.0),
        embedding_model=_env("STRATA_EMBEDDING_MODEL"),
        short_term_ttl_days=_int("STRATA_SHORT_TERM_TTL_DAYS", 30),
        long_term_archive_after_days=_int("STRATA_LONG_TERM_ARCHIVE_AFTER_DAYS", 0),
        max_body_bytes=_int("STRATA_MAX_BODY_BYTES", 1_048_576),
        max_content_chars=_int("STRATA_MAX_CONTENT_CHARS", 8_000),
        webhook_queue=_env("STRATA_WEBHOOK_QUEUE", "strata-webhooks"),
        webhook_timeout_s=_float("STRATA_WEBHOOK_TIMEOUT_S", 10.0),
        consolidation_interval_s=_float("STRATA_CONSOLIDATION_INTERVAL_S", 600.0),
        consolidation_pass_limit=_int("STRATA_CONSOLIDATION_PASS_LIMIT", 500),
        consolidation_on_write=_bool("STRATA_CONSOLIDATION_ON_WRITE", True),
        walk_page_size=_int("STRATA_WALK_PAGE_SIZE", 500),
        walk_pages=_int("STRATA_WALK_PAGES", 4),
        state_dir=_env("STRATA_STATE_DIR"),
        tick_seconds=_float("STRATA_TICK_SECONDS", 0.0),
        real_project=_bool("STRATA_REAL_PROJECT"),
    )


__all__ = ["Settings", "load"]

"""The deployed functions' start check of the provider schema (see :func:`start_check`).

Kept apart from :mod:`core.functions_entry` so the api function's import stays as small as it was.
"""

from __future__ import annotations

import logging

from core.bootstrap import default_context

log = logging.getLogger("strata")

# The providers each function's code reaches (infra/terraform/functions.tf mounts their keys).
PROVIDERS = {
    "api": ("typesense", "pinecone"),
    "on_conversation_complete": (),
    "delete_cascade": ("typesense", "pinecone"),
    "outbox_drain": ("typesense", "pinecone"),
    "consolidate": ("typesense", "pinecone"),
}


def start_check(function: str) -> None:
    """A deployed function's check at start (``STRATA_PROVIDER_SETUP=check``, set by Terraform): the
    Typesense collection and the Pinecone index it uses exist with Strata's schema and dimension,
    else the instance fails to start with a :class:`ConfigurationError` naming ``strata setup`` (the
    operator command that creates them; functions never do). An unreachable provider is not a setup
    problem: it is logged and the request that needs it retries later. Nothing is checked locally
    (``create``), where the stack makes the collection on first use."""
    from core import config
    from core.errors import ConfigurationError, PermanentError, ProviderUnavailable

    settings = config.load()
    if settings.provider_setup != "check":
        return
    ctx = default_context()
    for name in PROVIDERS[function]:
        index = ctx.keyword_index if name == "typesense" else ctx.vector_index
        try:
            index.ensure_ready()
        except ConfigurationError:
            raise
        except ProviderUnavailable as exc:
            log.warning("%s unreachable at start of %s (checked again on use): %s", name, function, exc.message)
            continue
        except PermanentError as exc:
            raise ConfigurationError(f"{name} is not set up for Strata ({exc.message}): run `strata setup`") from exc
        dimension = getattr(index, "dimension", None) if name == "pinecone" else None
        if dimension is not None and dimension != settings.embedding_dim:
            raise ConfigurationError(f"the pinecone index has dimension {dimension} but STRATA_EMBEDDING_DIM is "
                                     f"{settings.embedding_dim}: point STRATA_PINECONE_HOST at an index made by "
                                     "`strata setup`")

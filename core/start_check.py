"""The deployed functions' start check of the provider schema and of the embedder (see
:func:`start_check`).

Kept apart from :mod:`core.functions_entry` so the api function's import stays as small as it was.
"""

from __future__ import annotations

import logging
from typing import Any

from core.bootstrap import default_context

log = logging.getLogger("strata")

# The providers each function's code reaches (infra/terraform/functions.tf mounts their keys).
PROVIDERS = {
    "api": ("typesense", "pinecone"),
    "on_conversation_complete": (),
    "delete_cascade": ("typesense", "pinecone"),
    "outbox_drain": ("typesense", "pinecone"),
    "consolidate": ("typesense", "pinecone"),
    "deliver_webhook": (),  # Firestore and the receiver's URL only
}

# The functions whose code embeds (``ctx.embedder``): the api embeds each search query, the outbox
# drain the memories it projects, consolidate the same in its maintenance drains. They mount the
# embedding key (infra/terraform/functions.tf) and build their embedder at start.
EMBEDS = frozenset({"api", "outbox_drain", "consolidate"})


def start_check(function: str) -> None:
    """A deployed function's check at start (``STRATA_PROVIDER_SETUP=check``, set by Terraform): the
    Typesense collection and the Pinecone index it uses exist with Strata's schema and dimension,
    else the instance fails to start with a :class:`ConfigurationError` naming ``strata setup`` (the
    operator command that creates them; functions never do). An unreachable provider is not a setup
    problem: it is logged and the request that needs it retries later. Nothing is checked locally
    (``create``), where the stack makes the collection on first use.

    A function that embeds (:data:`EMBEDS`) then builds its embedder against the index's dimension
    (:func:`_check_embedder`): a remote model is asked for one probe vector, so one whose vectors do
    not have the index's dimension stops the instance here, naming both, instead of failing its first
    upsert or query."""
    from core import config
    from core.errors import ConfigurationError, PermanentError, ProviderUnavailable

    settings = config.load()
    if settings.provider_setup != "check":
        return
    ctx = default_context()
    index_dim: int | None = None
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
        if isinstance(dimension, int):
            index_dim = dimension
    if function in EMBEDS:
        _check_embedder(ctx, settings, function, index_dim)


def _check_embedder(ctx: Any, settings: Any, function: str, index_dim: int | None) -> None:
    """Build the function's embedder with ``index_dim`` (the Pinecone index's dimension; ``None``
    when the index was unreachable, then ``STRATA_EMBEDDING_DIM`` alone is checked), probing a
    remote one. A dimension that differs, a refused key or model, or a MiniLM build without its
    extra stops the instance (:class:`ConfigurationError`); an unreachable embedder is logged and
    the first request that needs it builds it again. A checked embedder is the context's from then
    on (no second probe)."""
    from core.adapters.embeddings import MiniLMEmbedder, build_embedder
    from core.errors import (
        BadRequest,
        ConfigurationError,
        DimensionMismatch,
        PermanentError,
        ProviderUnavailable,
    )

    kind = settings.embedder
    against = (f"the pinecone index ({index_dim}-dim)" if index_dim is not None
               else f"STRATA_EMBEDDING_DIM ({settings.embedding_dim}; the index was unreachable)")
    try:
        embedder = build_embedder(settings, index_dim=index_dim, probe=True)
        if isinstance(embedder, MiniLMEmbedder):
            embedder.files()  # the model and tokenizer ship in the package (the minilm build)
    except DimensionMismatch as exc:
        raise ConfigurationError(f"the {kind} embedder of {function} does not fit {against}: {exc.message}") from exc
    except ProviderUnavailable as exc:
        log.warning("%s embedder unreachable at start of %s (checked again on use): %s", kind, function, exc.message)
        return
    except (PermanentError, BadRequest) as exc:
        raise ConfigurationError(f"the {kind} embedder of {function} cannot start: {exc.message}") from exc
    ctx.provide("embedder", embedder)

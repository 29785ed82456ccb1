"""The project handler's provider calls: make Typesense and Pinecone match a projection plan
(:mod:`core.domain.projection`). Each index does its user purge first, then the deletes, then the
upserts (the vector index embeds them first); each call returns how many provider calls it made."""

from __future__ import annotations

from core.domain.projection import Projection, vector_text
from core.errors import DimensionMismatch
from core.ports import Embedder, KeywordIndex, VectorIndex


def _remove(index: KeywordIndex | VectorIndex, uid: str, plan: Projection, name: str) -> int:
    calls = 0
    if name in plan.purged:
        index.purge_user(uid)
        calls += 1
    if plan.deletes:
        index.delete(uid, plan.deletes)
        calls += 1
    return calls


def sync_keyword(index: KeywordIndex, uid: str, plan: Projection) -> int:
    """Typesense: purge, deletes, then upserts (each upsert clears legacy rows first)."""
    calls = _remove(index, uid, plan, "typesense")
    if plan.upserts:
        index.upsert(plan.upserts)
        calls += 1
    return calls


def sync_vector(index: VectorIndex, embedder: Embedder, uid: str, plan: Projection) -> int:
    """Pinecone: purge, deletes, then embeddings and upserts (embedding counts as one call)."""
    calls = _remove(index, uid, plan, "vector")
    if plan.upserts:
        index_dim = getattr(index, "dimension", None)
        if isinstance(index_dim, int) and index_dim != embedder.dim:
            raise DimensionMismatch(f"the {embedder.name} embedder makes {embedder.dim}-dimensional vectors "
                                    f"but the vector index has dimension {index_dim}; set STRATA_EMBEDDING_DIM")
        index.upsert(plan.upserts, embedder.embed([vector_text(d) for d in plan.upserts]))
        calls += 2
    return calls

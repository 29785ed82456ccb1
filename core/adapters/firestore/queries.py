"""The Firestore form of the named queries declared in :mod:`core.domain.queries`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.domain.queries import (
    QUERIES,
    Clause,
    CompositeIndex,
    IndexField,
    Order,
    QuerySpec,
    composite_indexes,
)

__all__ = ["QUERIES", "Clause", "CompositeIndex", "IndexField", "Order", "QuerySpec", "build", "composite_indexes"]


def build(base: Any, name: str, params: Mapping[str, Any], *, limit: int | None = None,
          start_after: Mapping[str, Any] | Any | None = None) -> Any:
    """Apply spec ``name`` to ``base`` (a CollectionReference or CollectionGroup).

    ``params`` maps each clause's field to its value. Import of the Firestore SDK stays in the
    caller; this function only chains the query methods.
    """
    from google.cloud.firestore_v1.base_query import FieldFilter

    spec = QUERIES[name]
    query = base
    for clause in spec.where:
        if clause.field not in params:
            raise KeyError(f"query {name} needs a value for {clause.field}")
        query = query.where(filter=FieldFilter(clause.field, clause.op, params[clause.field]))
    for order in spec.order_by:
        query = query.order_by(order.field, direction=order.direction)
    if start_after is not None:
        query = query.start_after(start_after)
    if limit is not None:
        query = query.limit(limit)
    return query

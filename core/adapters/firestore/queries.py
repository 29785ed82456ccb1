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
    caller; this function only chains the query methods. The spec's ``any_of`` clauses become one
    OR filter, ANDed with the ``where`` clauses.
    """
    from google.cloud.firestore_v1.base_query import FieldFilter, Or

    spec = QUERIES[name]

    def field_filter(clause: Clause) -> FieldFilter:
        if clause.field not in params:
            raise KeyError(f"query {name} needs a value for {clause.field}")
        return FieldFilter(clause.field, clause.op, params[clause.field])

    query = base
    for clause in spec.where:
        query = query.where(filter=field_filter(clause))
    if spec.any_of:
        query = query.where(filter=Or([field_filter(clause) for clause in spec.any_of]))
    for order in spec.order_by:
        query = query.order_by(order.field, direction=order.direction)
    if start_after is not None:
        query = query.start_after(start_after)
    if limit is not None:
        query = query.limit(limit)
    return query

"""Pinecone metadata filters for the local endpoint: ``$eq $ne $in $nin $gt $gte $lt $lte $exists
$and $or`` and implicit equality, compiled once and evaluated column by column over a namespace."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import ApiFailure

_COMPARISONS = {"$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"}
_NUMERIC = {
    "$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b,
}


class _Missing:
    """The value of a metadata field a record does not have."""


MISSING: Any = _Missing()


@dataclass(frozen=True)
class _Leaf:
    """One field condition, tested against that field's value in each record (``MISSING`` if absent)."""

    field: str
    test: Callable[[Any], bool]


@dataclass(frozen=True)
class _Group:
    """``$and`` / ``$or`` of parts; a filter object is the ``$and`` of its keys (none: everything)."""

    op: str
    parts: tuple[_Leaf | _Group, ...]


def _holds(stored: Any, operand: Any) -> bool:
    """``operand`` equals the stored value, or is one of a stored list of strings."""
    return operand in stored if isinstance(stored, list) else (operand is stored or operand == stored)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _predicate(field: str, op: str, operand: Any) -> Callable[[Any], bool]:
    if op not in _COMPARISONS:
        raise ApiFailure(400, f"unsupported filter operator {op!r} on field {field!r}")
    if op == "$exists":
        wanted = bool(operand)
        return lambda v: (v is not MISSING) is wanted
    if op in ("$in", "$nin"):
        if not isinstance(operand, list):
            raise ApiFailure(400, f"{op} on field {field!r} takes an array")
        try:
            choices: Any = frozenset(operand)  # same answers as list membership for hashable values
        except TypeError:
            choices = operand

        def hit(v: Any) -> bool:
            if v is MISSING:
                return False
            return any(s in choices for s in v) if isinstance(v, list) else v in choices

        return hit if op == "$in" else (lambda v: not hit(v))
    if op == "$eq":
        return lambda v: v is not MISSING and _holds(v, operand)
    if op == "$ne":
        return lambda v: v is MISSING or not _holds(v, operand)
    if not _is_number(operand):
        raise ApiFailure(400, f"{op} on field {field!r} takes a number")
    compare = _NUMERIC[op]
    return lambda v: _is_number(v) and compare(v, operand)


def compile_filter(flt: Any) -> _Group:
    """Check a Pinecone filter once and turn it into a tree of per-field tests."""
    if not isinstance(flt, Mapping):
        raise ApiFailure(400, "filter must be a JSON object")
    parts: list[_Leaf | _Group] = []
    for key, cond in flt.items():
        if key in ("$and", "$or"):
            if not isinstance(cond, list) or not cond:
                raise ApiFailure(400, f"{key} takes a non-empty array of filters")
            parts.append(_Group(key, tuple(compile_filter(sub) for sub in cond)))
        elif key.startswith("$"):
            raise ApiFailure(400, f"unsupported filter operator {key!r}")
        elif isinstance(cond, Mapping):
            parts.extend(_Leaf(key, _predicate(key, op, operand)) for op, operand in cond.items())
        else:
            parts.append(_Leaf(key, _predicate(key, "$eq", cond)))
    return _Group("$and", tuple(parts))


def evaluate(node: _Leaf | _Group, column: Callable[[str], Sequence[Any]], count: int) -> np.ndarray:
    """A boolean mask over ``count`` records; ``column(field)`` lists that field's values in record order."""
    if isinstance(node, _Leaf):
        return np.fromiter(map(node.test, column(node.field)), dtype=bool, count=count)
    if not node.parts:
        return np.ones(count, dtype=bool)
    masks = [evaluate(part, column, count) for part in node.parts]
    return np.logical_and.reduce(masks) if node.op == "$and" else np.logical_or.reduce(masks)


def matches(metadata: Mapping[str, Any] | None, flt: Mapping[str, Any] | None) -> bool:
    """True when ``metadata`` satisfies the Pinecone filter ``flt`` (empty filter = everything)."""
    if not flt:
        return True
    meta = metadata or {}
    return bool(evaluate(compile_filter(flt), lambda field: [meta.get(field, MISSING)], 1)[0])

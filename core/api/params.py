"""Declared query parameters: parsed and bounded by the dispatcher, typed in OpenAPI.

A route lists its parameters once (``@route(..., query=(Query("limit", "integer", 100, 1, 500),))``);
the dispatcher refuses any other parameter and any value that does not parse (400), and handlers
read the parsed value with ``req.value(name)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.errors import BadRequest


@dataclass(frozen=True)
class Query:
    """One declared query parameter: parsed and bounded by the dispatcher, documented by OpenAPI."""

    name: str
    kind: str = "string"  # string | integer | boolean | array (comma-separated strings, repeatable)
    default: Any = None
    low: int | None = None
    high: int | None = None
    enum: tuple[str, ...] = ()
    max_length: int = 8_000
    description: str = ""
    pattern: str = ""  # each value (each item of an array) must match it whole

    def _check_pattern(self, value: str) -> None:
        if self.pattern and not re.fullmatch(self.pattern, value):
            raise BadRequest(f"{self.name}: {value[:40]!r} is not a valid value", code="validation_error")

    def schema(self) -> dict[str, Any]:
        if self.kind == "integer":
            out: dict[str, Any] = {"type": "integer", "minimum": self.low, "maximum": self.high}
        elif self.kind == "boolean":
            out = {"type": "boolean"}
        elif self.kind == "array":
            out = {"type": "array", "items": {"type": "string", "maxLength": self.max_length}}
            if self.pattern:
                out["items"]["pattern"] = self.pattern
        else:
            out = {"type": "string", "maxLength": self.max_length}
            if self.enum:
                out["enum"] = list(self.enum)
            if self.pattern:
                out["pattern"] = self.pattern
        if self.default is not None:
            out["default"] = self.default
        return out

    def parse(self, values: list[str]) -> Any:
        """The parameter's value; its default when absent. Present but empty is a value like any
        other: a bad integer, boolean or enum value (400), an empty string."""
        if self.kind == "array":
            return self._parse_array(values)
        if not values:
            return self.default
        raw = values[-1]
        if self.kind == "integer":
            return self._parse_integer(raw)
        if self.kind == "boolean":
            return self._parse_boolean(raw)
        if len(raw) > self.max_length:
            raise BadRequest(f"{self.name} must be at most {self.max_length} characters", code="validation_error")
        if self.enum and raw not in self.enum:
            raise BadRequest(f"{self.name} must be one of {', '.join(self.enum)}", code="validation_error")
        self._check_pattern(raw)
        return raw

    def _parse_array(self, values: list[str]) -> list[str]:
        parts = [part for raw in values for part in raw.split(",") if part]
        if any(len(part) > self.max_length for part in parts):
            raise BadRequest(f"{self.name}: each value must be at most {self.max_length} characters",
                             code="validation_error")
        for part in parts:
            self._check_pattern(part)
        return parts

    def _parse_integer(self, raw: str) -> int:
        try:
            value = int(raw)
        except ValueError as exc:
            raise BadRequest(f"{self.name} must be an integer", code="validation_error") from exc
        if not (self.low is None or value >= self.low) or not (self.high is None or value <= self.high):
            raise BadRequest(f"{self.name} must be between {self.low} and {self.high}", code="validation_error")
        return value

    def _parse_boolean(self, raw: str) -> bool:
        lowered = raw.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise BadRequest(f"{self.name} must be true or false", code="validation_error")

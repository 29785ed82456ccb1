from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.review_resolve_decision import ReviewResolveDecision
from ..types import UNSET, Unset

T = TypeVar("T", bound="ReviewResolve")


@_attrs_define
class ReviewResolve:
    """
    Attributes:
        decision (ReviewResolveDecision): accept: admit it and end the facts it would end; keep_both: admit it beside
            them, never asked again; correct: admit the corrected text; reject: hide it
        correction (None | str | Unset):
    """

    decision: ReviewResolveDecision
    correction: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        decision = self.decision.value

        correction: None | str | Unset
        if isinstance(self.correction, Unset):
            correction = UNSET
        else:
            correction = self.correction

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "decision": decision,
            }
        )
        if correction is not UNSET:
            field_dict["correction"] = correction

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        decision = ReviewResolveDecision(d.pop("decision"))

        def _parse_correction(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        correction = _parse_correction(d.pop("correction", UNSET))

        review_resolve = cls(
            decision=decision,
            correction=correction,
        )

        return review_resolve

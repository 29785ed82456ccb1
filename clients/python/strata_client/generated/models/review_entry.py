from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.would_end import WouldEnd


T = TypeVar("T", bound="ReviewEntry")


@_attrs_define
class ReviewEntry:
    """
    Attributes:
        review_id (str):
        memory_id (str):
        content (str):
        conflicting (list[str]):
        reason (str):
        created_at (str):
        expires_at (str):
        would_end (list[WouldEnd] | Unset): the current facts accepting this entry would end
    """

    review_id: str
    memory_id: str
    content: str
    conflicting: list[str]
    reason: str
    created_at: str
    expires_at: str
    would_end: list[WouldEnd] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        review_id = self.review_id

        memory_id = self.memory_id

        content = self.content

        conflicting = self.conflicting

        reason = self.reason

        created_at = self.created_at

        expires_at = self.expires_at

        would_end: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.would_end, Unset):
            would_end = []
            for would_end_item_data in self.would_end:
                would_end_item = would_end_item_data.to_dict()
                would_end.append(would_end_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "review_id": review_id,
                "memory_id": memory_id,
                "content": content,
                "conflicting": conflicting,
                "reason": reason,
                "created_at": created_at,
                "expires_at": expires_at,
            }
        )
        if would_end is not UNSET:
            field_dict["would_end"] = would_end

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.would_end import WouldEnd  # noqa: PLC0415

        d = dict(src_dict)
        review_id = d.pop("review_id")

        memory_id = d.pop("memory_id")

        content = d.pop("content")

        conflicting = cast(list[str], d.pop("conflicting"))

        reason = d.pop("reason")

        created_at = d.pop("created_at")

        expires_at = d.pop("expires_at")

        _would_end = d.pop("would_end", UNSET)
        would_end: list[WouldEnd] | Unset = UNSET
        if _would_end is not UNSET:
            would_end = []
            for would_end_item_data in _would_end:
                would_end_item = WouldEnd.from_dict(would_end_item_data)

                would_end.append(would_end_item)

        review_entry = cls(
            review_id=review_id,
            memory_id=memory_id,
            content=content,
            conflicting=conflicting,
            reason=reason,
            created_at=created_at,
            expires_at=expires_at,
            would_end=would_end,
        )

        review_entry.additional_properties = d
        return review_entry

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties

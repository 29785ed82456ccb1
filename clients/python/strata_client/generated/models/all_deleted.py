from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AllDeleted")


@_attrs_define
class AllDeleted:
    """
    Attributes:
        deleted (int):
        stable_at_sequence (int):
        receipt_id (str): the deletion receipt: GET /v1/deletions/{receipt_id}
    """

    deleted: int
    stable_at_sequence: int
    receipt_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        deleted = self.deleted

        stable_at_sequence = self.stable_at_sequence

        receipt_id = self.receipt_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deleted": deleted,
                "stable_at_sequence": stable_at_sequence,
                "receipt_id": receipt_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        deleted = d.pop("deleted")

        stable_at_sequence = d.pop("stable_at_sequence")

        receipt_id = d.pop("receipt_id")

        all_deleted = cls(
            deleted=deleted,
            stable_at_sequence=stable_at_sequence,
            receipt_id=receipt_id,
        )

        all_deleted.additional_properties = d
        return all_deleted

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

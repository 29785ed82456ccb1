from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MemoryDeleted")


@_attrs_define
class MemoryDeleted:
    """
    Attributes:
        deleted (list[str]):
        receipt_id (str): the deletion receipt: GET /v1/deletions/{receipt_id}
        commit_id (None | str | Unset):
    """

    deleted: list[str]
    receipt_id: str
    commit_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        deleted = self.deleted

        receipt_id = self.receipt_id

        commit_id: None | str | Unset
        if isinstance(self.commit_id, Unset):
            commit_id = UNSET
        else:
            commit_id = self.commit_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deleted": deleted,
                "receipt_id": receipt_id,
            }
        )
        if commit_id is not UNSET:
            field_dict["commit_id"] = commit_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        deleted = cast(list[str], d.pop("deleted"))

        receipt_id = d.pop("receipt_id")

        def _parse_commit_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        commit_id = _parse_commit_id(d.pop("commit_id", UNSET))

        memory_deleted = cls(
            deleted=deleted,
            receipt_id=receipt_id,
            commit_id=commit_id,
        )

        memory_deleted.additional_properties = d
        return memory_deleted

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

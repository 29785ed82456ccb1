from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AccountDeleted")


@_attrs_define
class AccountDeleted:
    """
    Attributes:
        state (Literal['completed']):
        uid (str):
        receipt_id (str): the deletion receipt: GET /v1/deletions/{receipt_id}
    """

    state: Literal["completed"]
    uid: str
    receipt_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        state = self.state

        uid = self.uid

        receipt_id = self.receipt_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "state": state,
                "uid": uid,
                "receipt_id": receipt_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = cast(Literal["completed"], d.pop("state"))
        if state != "completed":
            raise ValueError(f"state must match const 'completed', got '{state}'")

        uid = d.pop("uid")

        receipt_id = d.pop("receipt_id")

        account_deleted = cls(
            state=state,
            uid=uid,
            receipt_id=receipt_id,
        )

        account_deleted.additional_properties = d
        return account_deleted

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

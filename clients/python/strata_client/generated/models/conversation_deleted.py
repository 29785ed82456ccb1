from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.conversation_deleted_cascade_type_1 import ConversationDeletedCascadeType1


T = TypeVar("T", bound="ConversationDeleted")


@_attrs_define
class ConversationDeleted:
    """
    Attributes:
        deleted (bool):
        cascade (bool | ConversationDeletedCascadeType1):
        receipt_id (None | str | Unset): the deletion receipt of a cascade: GET /v1/deletions/{receipt_id} (none with
            cascade=false)
    """

    deleted: bool
    cascade: bool | ConversationDeletedCascadeType1
    receipt_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.conversation_deleted_cascade_type_1 import ConversationDeletedCascadeType1  # noqa: PLC0415

        deleted = self.deleted

        cascade: bool | dict[str, Any]
        if isinstance(self.cascade, ConversationDeletedCascadeType1):
            cascade = self.cascade.to_dict()
        else:
            cascade = self.cascade

        receipt_id: None | str | Unset
        if isinstance(self.receipt_id, Unset):
            receipt_id = UNSET
        else:
            receipt_id = self.receipt_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deleted": deleted,
                "cascade": cascade,
            }
        )
        if receipt_id is not UNSET:
            field_dict["receipt_id"] = receipt_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.conversation_deleted_cascade_type_1 import ConversationDeletedCascadeType1  # noqa: PLC0415

        d = dict(src_dict)
        deleted = d.pop("deleted")

        def _parse_cascade(data: object) -> bool | ConversationDeletedCascadeType1:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cascade_type_1 = ConversationDeletedCascadeType1.from_dict(data)

                return cascade_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(bool | ConversationDeletedCascadeType1, data)

        cascade = _parse_cascade(d.pop("cascade"))

        def _parse_receipt_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        receipt_id = _parse_receipt_id(d.pop("receipt_id", UNSET))

        conversation_deleted = cls(
            deleted=deleted,
            cascade=cascade,
            receipt_id=receipt_id,
        )

        conversation_deleted.additional_properties = d
        return conversation_deleted

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

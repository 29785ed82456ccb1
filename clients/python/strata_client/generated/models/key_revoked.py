from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.key_writes import KeyWrites


T = TypeVar("T", bound="KeyRevoked")


@_attrs_define
class KeyRevoked:
    """
    Attributes:
        id (str):
        status (Literal['revoked']):
        written (KeyWrites):
    """

    id: str
    status: Literal["revoked"]
    written: KeyWrites
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        status = self.status

        written = self.written.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "status": status,
                "written": written,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.key_writes import KeyWrites  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        status = cast(Literal["revoked"], d.pop("status"))
        if status != "revoked":
            raise ValueError(f"status must match const 'revoked', got '{status}'")

        written = KeyWrites.from_dict(d.pop("written"))

        key_revoked = cls(
            id=id,
            status=status,
            written=written,
        )

        key_revoked.additional_properties = d
        return key_revoked

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

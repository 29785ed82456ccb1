from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.key_scope import KeyScope

T = TypeVar("T", bound="Key")


@_attrs_define
class Key:
    """
    Attributes:
        id (str):
        name (str):
        scope (KeyScope):
        restricted (bool): whether its reads show restricted memories
        created_at (str): ISO 8601
        last_used_at (None | str): ISO 8601, recorded at most once a minute; null: never used
    """

    id: str
    name: str
    scope: KeyScope
    restricted: bool
    created_at: str
    last_used_at: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        scope = self.scope.value

        restricted = self.restricted

        created_at = self.created_at

        last_used_at: None | str
        last_used_at = self.last_used_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "scope": scope,
                "restricted": restricted,
                "created_at": created_at,
                "last_used_at": last_used_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        scope = KeyScope(d.pop("scope"))

        restricted = d.pop("restricted")

        created_at = d.pop("created_at")

        def _parse_last_used_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_used_at = _parse_last_used_at(d.pop("last_used_at"))

        key = cls(
            id=id,
            name=name,
            scope=scope,
            restricted=restricted,
            created_at=created_at,
            last_used_at=last_used_at,
        )

        key.additional_properties = d
        return key

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

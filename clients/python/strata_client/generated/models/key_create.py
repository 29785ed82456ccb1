from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.key_create_scope import KeyCreateScope
from ..types import UNSET, Unset

T = TypeVar("T", bound="KeyCreate")


@_attrs_define
class KeyCreate:
    """
    Attributes:
        name (str): what the key is for, e.g. the agent's name
        scope (KeyCreateScope): read: list, search and read; read+write: also create and delete
        restricted (bool | Unset): its reads also show the user's restricted memories (health, finances, ...); without
            it a key never receives one Default: False.
    """

    name: str
    scope: KeyCreateScope
    restricted: bool | Unset = False

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        scope = self.scope.value

        restricted = self.restricted

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "scope": scope,
            }
        )
        if restricted is not UNSET:
            field_dict["restricted"] = restricted

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        scope = KeyCreateScope(d.pop("scope"))

        restricted = d.pop("restricted", UNSET)

        key_create = cls(
            name=name,
            scope=scope,
            restricted=restricted,
        )

        return key_create

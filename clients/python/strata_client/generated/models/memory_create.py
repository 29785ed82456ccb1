from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.memory_create_visibility import MemoryCreateVisibility
from ..types import UNSET, Unset

T = TypeVar("T", bound="MemoryCreate")


@_attrs_define
class MemoryCreate:
    """
    Attributes:
        content (str): The fact, in the user's words.
        category (None | str | Unset):
        visibility (MemoryCreateVisibility | Unset):  Default: MemoryCreateVisibility.PRIVATE.
    """

    content: str
    category: None | str | Unset = UNSET
    visibility: MemoryCreateVisibility | Unset = MemoryCreateVisibility.PRIVATE

    def to_dict(self) -> dict[str, Any]:
        content = self.content

        category: None | str | Unset
        if isinstance(self.category, Unset):
            category = UNSET
        else:
            category = self.category

        visibility: str | Unset = UNSET
        if not isinstance(self.visibility, Unset):
            visibility = self.visibility.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "content": content,
            }
        )
        if category is not UNSET:
            field_dict["category"] = category
        if visibility is not UNSET:
            field_dict["visibility"] = visibility

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        content = d.pop("content")

        def _parse_category(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        category = _parse_category(d.pop("category", UNSET))

        _visibility = d.pop("visibility", UNSET)
        visibility: MemoryCreateVisibility | Unset
        if isinstance(_visibility, Unset):
            visibility = UNSET
        else:
            visibility = MemoryCreateVisibility(_visibility)

        memory_create = cls(
            content=content,
            category=category,
            visibility=visibility,
        )

        return memory_create

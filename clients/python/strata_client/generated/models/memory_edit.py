from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.memory_edit_visibility_type_0 import MemoryEditVisibilityType0
from ..types import UNSET, Unset

T = TypeVar("T", bound="MemoryEdit")


@_attrs_define
class MemoryEdit:
    """``PATCH /v1/memories/{memory_id}``: any of the fields, at least one. A content edit is a new
    revision back in Short-term; visibility, category and the review flag are metadata edits.

        Attributes:
            content (None | str | Unset): the new content (whitespace-collapsed, at most STRATA_MAX_CONTENT_CHARS
                characters)
            visibility (MemoryEditVisibilityType0 | None | Unset):
            category (None | str | Unset): a category name (interesting, system, manual, workflow, or an older name)
            reviewed (bool | None | Unset): the user's own verdict on the memory: true (right) or false (wrong); sets
                user_review
    """

    content: None | str | Unset = UNSET
    visibility: MemoryEditVisibilityType0 | None | Unset = UNSET
    category: None | str | Unset = UNSET
    reviewed: bool | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        content: None | str | Unset
        if isinstance(self.content, Unset):
            content = UNSET
        else:
            content = self.content

        visibility: None | str | Unset
        if isinstance(self.visibility, Unset):
            visibility = UNSET
        elif isinstance(self.visibility, MemoryEditVisibilityType0):
            visibility = self.visibility.value
        else:
            visibility = self.visibility

        category: None | str | Unset
        if isinstance(self.category, Unset):
            category = UNSET
        else:
            category = self.category

        reviewed: bool | None | Unset
        if isinstance(self.reviewed, Unset):
            reviewed = UNSET
        else:
            reviewed = self.reviewed

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if content is not UNSET:
            field_dict["content"] = content
        if visibility is not UNSET:
            field_dict["visibility"] = visibility
        if category is not UNSET:
            field_dict["category"] = category
        if reviewed is not UNSET:
            field_dict["reviewed"] = reviewed

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_content(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        content = _parse_content(d.pop("content", UNSET))

        def _parse_visibility(data: object) -> MemoryEditVisibilityType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                visibility_type_0 = MemoryEditVisibilityType0(data)

                return visibility_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MemoryEditVisibilityType0 | None | Unset, data)

        visibility = _parse_visibility(d.pop("visibility", UNSET))

        def _parse_category(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        category = _parse_category(d.pop("category", UNSET))

        def _parse_reviewed(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        reviewed = _parse_reviewed(d.pop("reviewed", UNSET))

        memory_edit = cls(
            content=content,
            visibility=visibility,
            category=category,
            reviewed=reviewed,
        )

        return memory_edit

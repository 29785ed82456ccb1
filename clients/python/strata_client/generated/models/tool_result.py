from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ToolResult")


@_attrs_define
class ToolResult:
    """The original's tool envelope: the result as text for an agent.

    Attributes:
        tool_name (str):
        result_text (str):
        is_error (bool):
    """

    tool_name: str
    result_text: str
    is_error: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        tool_name = self.tool_name

        result_text = self.result_text

        is_error = self.is_error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "tool_name": tool_name,
                "result_text": result_text,
                "is_error": is_error,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        tool_name = d.pop("tool_name")

        result_text = d.pop("result_text")

        is_error = d.pop("is_error")

        tool_result = cls(
            tool_name=tool_name,
            result_text=result_text,
            is_error=is_error,
        )

        tool_result.additional_properties = d
        return tool_result

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

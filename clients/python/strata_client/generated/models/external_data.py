from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ExternalData")


@_attrs_define
class ExternalData:
    """
    Attributes:
        text (str):
        text_source (str | Unset):  Default: 'other'.
    """

    text: str
    text_source: str | Unset = "other"

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        text_source = self.text_source

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "text": text,
            }
        )
        if text_source is not UNSET:
            field_dict["text_source"] = text_source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        text = d.pop("text")

        text_source = d.pop("text_source", UNSET)

        external_data = cls(
            text=text,
            text_source=text_source,
        )

        return external_data

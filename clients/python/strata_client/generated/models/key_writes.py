from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="KeyWrites")


@_attrs_define
class KeyWrites:
    """
    Attributes:
        commits (int): ledger commits its requests made
        memory_ids (list[str]): memories those commits created, edited, deleted or restored
        conversation_ids (list[str]): conversations it created (POST /v1/conversations)
        truncated (bool): more than 1000 commits or conversations: the first ones are listed
    """

    commits: int
    memory_ids: list[str]
    conversation_ids: list[str]
    truncated: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        commits = self.commits

        memory_ids = self.memory_ids

        conversation_ids = self.conversation_ids

        truncated = self.truncated

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "commits": commits,
                "memory_ids": memory_ids,
                "conversation_ids": conversation_ids,
                "truncated": truncated,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        commits = d.pop("commits")

        memory_ids = cast(list[str], d.pop("memory_ids"))

        conversation_ids = cast(list[str], d.pop("conversation_ids"))

        truncated = d.pop("truncated")

        key_writes = cls(
            commits=commits,
            memory_ids=memory_ids,
            conversation_ids=conversation_ids,
            truncated=truncated,
        )

        key_writes.additional_properties = d
        return key_writes

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

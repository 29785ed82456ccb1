from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Reprocessed")


@_attrs_define
class Reprocessed:
    """
    Attributes:
        conversation_id (str):
        created (int):
        kept (int):
        retracted (int):
        action_items (int):
        goals (int):
    """

    conversation_id: str
    created: int
    kept: int
    retracted: int
    action_items: int
    goals: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        conversation_id = self.conversation_id

        created = self.created

        kept = self.kept

        retracted = self.retracted

        action_items = self.action_items

        goals = self.goals

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "conversation_id": conversation_id,
                "created": created,
                "kept": kept,
                "retracted": retracted,
                "action_items": action_items,
                "goals": goals,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        conversation_id = d.pop("conversation_id")

        created = d.pop("created")

        kept = d.pop("kept")

        retracted = d.pop("retracted")

        action_items = d.pop("action_items")

        goals = d.pop("goals")

        reprocessed = cls(
            conversation_id=conversation_id,
            created=created,
            kept=kept,
            retracted=retracted,
            action_items=action_items,
            goals=goals,
        )

        reprocessed.additional_properties = d
        return reprocessed

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

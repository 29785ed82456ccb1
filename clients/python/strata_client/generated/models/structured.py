from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.structured_action_items_item import StructuredActionItemsItem
    from ..models.structured_events_item import StructuredEventsItem


T = TypeVar("T", bound="Structured")


@_attrs_define
class Structured:
    """
    Attributes:
        title (str | Unset):  Default: ''.
        overview (str | Unset):  Default: ''.
        action_items (list[StructuredActionItemsItem] | Unset):
        events (list[StructuredEventsItem] | Unset):
        category (str | Unset):  Default: 'other'.
    """

    title: str | Unset = ""
    overview: str | Unset = ""
    action_items: list[StructuredActionItemsItem] | Unset = UNSET
    events: list[StructuredEventsItem] | Unset = UNSET
    category: str | Unset = "other"
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        title = self.title

        overview = self.overview

        action_items: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.action_items, Unset):
            action_items = []
            for action_items_item_data in self.action_items:
                action_items_item = action_items_item_data.to_dict()
                action_items.append(action_items_item)

        events: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.events, Unset):
            events = []
            for events_item_data in self.events:
                events_item = events_item_data.to_dict()
                events.append(events_item)

        category = self.category

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if title is not UNSET:
            field_dict["title"] = title
        if overview is not UNSET:
            field_dict["overview"] = overview
        if action_items is not UNSET:
            field_dict["action_items"] = action_items
        if events is not UNSET:
            field_dict["events"] = events
        if category is not UNSET:
            field_dict["category"] = category

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.structured_action_items_item import StructuredActionItemsItem  # noqa: PLC0415
        from ..models.structured_events_item import StructuredEventsItem  # noqa: PLC0415

        d = dict(src_dict)
        title = d.pop("title", UNSET)

        overview = d.pop("overview", UNSET)

        _action_items = d.pop("action_items", UNSET)
        action_items: list[StructuredActionItemsItem] | Unset = UNSET
        if _action_items is not UNSET:
            action_items = []
            for action_items_item_data in _action_items:
                action_items_item = StructuredActionItemsItem.from_dict(action_items_item_data)

                action_items.append(action_items_item)

        _events = d.pop("events", UNSET)
        events: list[StructuredEventsItem] | Unset = UNSET
        if _events is not UNSET:
            events = []
            for events_item_data in _events:
                events_item = StructuredEventsItem.from_dict(events_item_data)

                events.append(events_item)

        category = d.pop("category", UNSET)

        structured = cls(
            title=title,
            overview=overview,
            action_items=action_items,
            events=events,
            category=category,
        )

        structured.additional_properties = d
        return structured

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

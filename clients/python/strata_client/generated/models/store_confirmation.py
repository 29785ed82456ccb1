from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.store_confirmation_state import StoreConfirmationState

T = TypeVar("T", bound="StoreConfirmation")


@_attrs_define
class StoreConfirmation:
    """
    Attributes:
        state (StoreConfirmationState): confirmed once the removal from this store was confirmed (its commit, the
            drain's acknowledgement)
        confirmed_at (None | str): ISO 8601; null while pending
    """

    state: StoreConfirmationState
    confirmed_at: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        confirmed_at: None | str
        confirmed_at = self.confirmed_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "state": state,
                "confirmed_at": confirmed_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = StoreConfirmationState(d.pop("state"))

        def _parse_confirmed_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        confirmed_at = _parse_confirmed_at(d.pop("confirmed_at"))

        store_confirmation = cls(
            state=state,
            confirmed_at=confirmed_at,
        )

        store_confirmation.additional_properties = d
        return store_confirmation

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

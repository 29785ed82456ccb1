from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="WebhookPut")


@_attrs_define
class WebhookPut:
    """
    Attributes:
        url (str): https URL on a public host (local mode: http and loopback too); deliveries append ?uid=
        enabled (bool | Unset): deliver (true) or keep the URL but send nothing (false) Default: True.
    """

    url: str
    enabled: bool | Unset = True

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        enabled = self.enabled

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
            }
        )
        if enabled is not UNSET:
            field_dict["enabled"] = enabled

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        enabled = d.pop("enabled", UNSET)

        webhook_put = cls(
            url=url,
            enabled=enabled,
        )

        return webhook_put

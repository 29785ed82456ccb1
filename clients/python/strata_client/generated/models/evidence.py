from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.evidence_quote_refs_item import EvidenceQuoteRefsItem


T = TypeVar("T", bound="Evidence")


@_attrs_define
class Evidence:
    """
    Attributes:
        evidence_id (str):
        source_type (str):
        source_id (str):
        quote_refs (list[EvidenceQuoteRefsItem]):
        client_device_id (None | str):
    """

    evidence_id: str
    source_type: str
    source_id: str
    quote_refs: list[EvidenceQuoteRefsItem]
    client_device_id: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        evidence_id = self.evidence_id

        source_type = self.source_type

        source_id = self.source_id

        quote_refs = []
        for quote_refs_item_data in self.quote_refs:
            quote_refs_item = quote_refs_item_data.to_dict()
            quote_refs.append(quote_refs_item)

        client_device_id: None | str
        client_device_id = self.client_device_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "evidence_id": evidence_id,
                "source_type": source_type,
                "source_id": source_id,
                "quote_refs": quote_refs,
                "client_device_id": client_device_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.evidence_quote_refs_item import EvidenceQuoteRefsItem  # noqa: PLC0415

        d = dict(src_dict)
        evidence_id = d.pop("evidence_id")

        source_type = d.pop("source_type")

        source_id = d.pop("source_id")

        quote_refs = []
        _quote_refs = d.pop("quote_refs")
        for quote_refs_item_data in _quote_refs:
            quote_refs_item = EvidenceQuoteRefsItem.from_dict(quote_refs_item_data)

            quote_refs.append(quote_refs_item)

        def _parse_client_device_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        client_device_id = _parse_client_device_id(d.pop("client_device_id"))

        evidence = cls(
            evidence_id=evidence_id,
            source_type=source_type,
            source_id=source_id,
            quote_refs=quote_refs,
            client_device_id=client_device_id,
        )

        evidence.additional_properties = d
        return evidence

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

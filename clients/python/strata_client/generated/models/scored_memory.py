from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.scored_memory_layer import ScoredMemoryLayer
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.evidence import Evidence
    from ..models.memory_slot import MemorySlot


T = TypeVar("T", bound="ScoredMemory")


@_attrs_define
class ScoredMemory:
    """
    Attributes:
        id (str):
        content (str):
        layer (ScoredMemoryLayer):
        category (str):
        visibility (str):
        created_at (None | str):
        updated_at (None | str):
        conversation_id (None | str):
        source_ids (list[str]):
        evidence (list[Evidence]):
        canonical_memory_id (None | str):
        expires_at (None | str):
        expired (bool):
        reviewed (bool):
        user_review (bool | None):
        manually_added (bool):
        edited (bool):
        capture_device_ids (list[str]):
        subject_attribution (str):
        restricted (bool):
        score (float):
        valid_from (None | str | Unset):
        valid_to (None | str | Unset):
        superseded_by (None | str | Unset):
        slot (MemorySlot | None | Unset):
    """

    id: str
    content: str
    layer: ScoredMemoryLayer
    category: str
    visibility: str
    created_at: None | str
    updated_at: None | str
    conversation_id: None | str
    source_ids: list[str]
    evidence: list[Evidence]
    canonical_memory_id: None | str
    expires_at: None | str
    expired: bool
    reviewed: bool
    user_review: bool | None
    manually_added: bool
    edited: bool
    capture_device_ids: list[str]
    subject_attribution: str
    restricted: bool
    score: float
    valid_from: None | str | Unset = UNSET
    valid_to: None | str | Unset = UNSET
    superseded_by: None | str | Unset = UNSET
    slot: MemorySlot | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.memory_slot import MemorySlot  # noqa: PLC0415

        id = self.id

        content = self.content

        layer = self.layer.value

        category = self.category

        visibility = self.visibility

        created_at: None | str
        created_at = self.created_at

        updated_at: None | str
        updated_at = self.updated_at

        conversation_id: None | str
        conversation_id = self.conversation_id

        source_ids = self.source_ids

        evidence = []
        for evidence_item_data in self.evidence:
            evidence_item = evidence_item_data.to_dict()
            evidence.append(evidence_item)

        canonical_memory_id: None | str
        canonical_memory_id = self.canonical_memory_id

        expires_at: None | str
        expires_at = self.expires_at

        expired = self.expired

        reviewed = self.reviewed

        user_review: bool | None
        user_review = self.user_review

        manually_added = self.manually_added

        edited = self.edited

        capture_device_ids = self.capture_device_ids

        subject_attribution = self.subject_attribution

        restricted = self.restricted

        score = self.score

        valid_from: None | str | Unset
        if isinstance(self.valid_from, Unset):
            valid_from = UNSET
        else:
            valid_from = self.valid_from

        valid_to: None | str | Unset
        if isinstance(self.valid_to, Unset):
            valid_to = UNSET
        else:
            valid_to = self.valid_to

        superseded_by: None | str | Unset
        if isinstance(self.superseded_by, Unset):
            superseded_by = UNSET
        else:
            superseded_by = self.superseded_by

        slot: dict[str, Any] | None | Unset
        if isinstance(self.slot, Unset):
            slot = UNSET
        elif isinstance(self.slot, MemorySlot):
            slot = self.slot.to_dict()
        else:
            slot = self.slot

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "content": content,
                "layer": layer,
                "category": category,
                "visibility": visibility,
                "created_at": created_at,
                "updated_at": updated_at,
                "conversation_id": conversation_id,
                "source_ids": source_ids,
                "evidence": evidence,
                "canonical_memory_id": canonical_memory_id,
                "expires_at": expires_at,
                "expired": expired,
                "reviewed": reviewed,
                "user_review": user_review,
                "manually_added": manually_added,
                "edited": edited,
                "capture_device_ids": capture_device_ids,
                "subject_attribution": subject_attribution,
                "restricted": restricted,
                "score": score,
            }
        )
        if valid_from is not UNSET:
            field_dict["valid_from"] = valid_from
        if valid_to is not UNSET:
            field_dict["valid_to"] = valid_to
        if superseded_by is not UNSET:
            field_dict["superseded_by"] = superseded_by
        if slot is not UNSET:
            field_dict["slot"] = slot

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.evidence import Evidence  # noqa: PLC0415
        from ..models.memory_slot import MemorySlot  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        content = d.pop("content")

        layer = ScoredMemoryLayer(d.pop("layer"))

        category = d.pop("category")

        visibility = d.pop("visibility")

        def _parse_created_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        created_at = _parse_created_at(d.pop("created_at"))

        def _parse_updated_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        updated_at = _parse_updated_at(d.pop("updated_at"))

        def _parse_conversation_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        conversation_id = _parse_conversation_id(d.pop("conversation_id"))

        source_ids = cast(list[str], d.pop("source_ids"))

        evidence = []
        _evidence = d.pop("evidence")
        for evidence_item_data in _evidence:
            evidence_item = Evidence.from_dict(evidence_item_data)

            evidence.append(evidence_item)

        def _parse_canonical_memory_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        canonical_memory_id = _parse_canonical_memory_id(d.pop("canonical_memory_id"))

        def _parse_expires_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        expires_at = _parse_expires_at(d.pop("expires_at"))

        expired = d.pop("expired")

        reviewed = d.pop("reviewed")

        def _parse_user_review(data: object) -> bool | None:
            if data is None:
                return data
            return cast(bool | None, data)

        user_review = _parse_user_review(d.pop("user_review"))

        manually_added = d.pop("manually_added")

        edited = d.pop("edited")

        capture_device_ids = cast(list[str], d.pop("capture_device_ids"))

        subject_attribution = d.pop("subject_attribution")

        restricted = d.pop("restricted")

        score = d.pop("score")

        def _parse_valid_from(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        valid_from = _parse_valid_from(d.pop("valid_from", UNSET))

        def _parse_valid_to(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        valid_to = _parse_valid_to(d.pop("valid_to", UNSET))

        def _parse_superseded_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        superseded_by = _parse_superseded_by(d.pop("superseded_by", UNSET))

        def _parse_slot(data: object) -> MemorySlot | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                slot_type_0 = MemorySlot.from_dict(data)

                return slot_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MemorySlot | None | Unset, data)

        slot = _parse_slot(d.pop("slot", UNSET))

        scored_memory = cls(
            id=id,
            content=content,
            layer=layer,
            category=category,
            visibility=visibility,
            created_at=created_at,
            updated_at=updated_at,
            conversation_id=conversation_id,
            source_ids=source_ids,
            evidence=evidence,
            canonical_memory_id=canonical_memory_id,
            expires_at=expires_at,
            expired=expired,
            reviewed=reviewed,
            user_review=user_review,
            manually_added=manually_added,
            edited=edited,
            capture_device_ids=capture_device_ids,
            subject_attribution=subject_attribution,
            restricted=restricted,
            score=score,
            valid_from=valid_from,
            valid_to=valid_to,
            superseded_by=superseded_by,
            slot=slot,
        )

        scored_memory.additional_properties = d
        return scored_memory

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.capture_status_state import CaptureStatusState

if TYPE_CHECKING:
    from ..models.extractor_used import ExtractorUsed


T = TypeVar("T", bound="CaptureStatus")


@_attrs_define
class CaptureStatus:
    """
    Attributes:
        conversation_id (str):
        state (CaptureStatusState): capture of the conversation's current revision: pending (not yet, or retrying),
            captured, failed (recorded; earlier memories kept), fell_back (the model failed; the rule extractor captured it)
        conversation_status (str): the conversation document's own status (completed, ...)
        revision (str): the revision (segments, integration text, reprocess token) the state is of
        extractor (ExtractorUsed | None): the extractor whose memories this revision holds; null while pending
        memory_count (int): memories this conversation currently supports
        last_error_code (None | str): why the model's last attempt failed, why it fell back, or why the capture failed
            (e.g. llm_malformed_reply)
        attempts (int): model calls made for this revision
        max_attempts (int): the bound on model calls per revision
        created_at (None | str): ISO 8601 timestamps, null when unknown
        captured_at (None | str):
        first_attempt_at (None | str):
        last_attempt_at (None | str):
        last_error_at (None | str):
    """

    conversation_id: str
    state: CaptureStatusState
    conversation_status: str
    revision: str
    extractor: ExtractorUsed | None
    memory_count: int
    last_error_code: None | str
    attempts: int
    max_attempts: int
    created_at: None | str
    captured_at: None | str
    first_attempt_at: None | str
    last_attempt_at: None | str
    last_error_at: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.extractor_used import ExtractorUsed  # noqa: PLC0415

        conversation_id = self.conversation_id

        state = self.state.value

        conversation_status = self.conversation_status

        revision = self.revision

        extractor: dict[str, Any] | None
        if isinstance(self.extractor, ExtractorUsed):
            extractor = self.extractor.to_dict()
        else:
            extractor = self.extractor

        memory_count = self.memory_count

        last_error_code: None | str
        last_error_code = self.last_error_code

        attempts = self.attempts

        max_attempts = self.max_attempts

        created_at: None | str
        created_at = self.created_at

        captured_at: None | str
        captured_at = self.captured_at

        first_attempt_at: None | str
        first_attempt_at = self.first_attempt_at

        last_attempt_at: None | str
        last_attempt_at = self.last_attempt_at

        last_error_at: None | str
        last_error_at = self.last_error_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "conversation_id": conversation_id,
                "state": state,
                "conversation_status": conversation_status,
                "revision": revision,
                "extractor": extractor,
                "memory_count": memory_count,
                "last_error_code": last_error_code,
                "attempts": attempts,
                "max_attempts": max_attempts,
                "created_at": created_at,
                "captured_at": captured_at,
                "first_attempt_at": first_attempt_at,
                "last_attempt_at": last_attempt_at,
                "last_error_at": last_error_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.extractor_used import ExtractorUsed  # noqa: PLC0415

        d = dict(src_dict)
        conversation_id = d.pop("conversation_id")

        state = CaptureStatusState(d.pop("state"))

        conversation_status = d.pop("conversation_status")

        revision = d.pop("revision")

        def _parse_extractor(data: object) -> ExtractorUsed | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                extractor_type_0 = ExtractorUsed.from_dict(data)

                return extractor_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ExtractorUsed | None, data)

        extractor = _parse_extractor(d.pop("extractor"))

        memory_count = d.pop("memory_count")

        def _parse_last_error_code(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_error_code = _parse_last_error_code(d.pop("last_error_code"))

        attempts = d.pop("attempts")

        max_attempts = d.pop("max_attempts")

        def _parse_created_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        created_at = _parse_created_at(d.pop("created_at"))

        def _parse_captured_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        captured_at = _parse_captured_at(d.pop("captured_at"))

        def _parse_first_attempt_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        first_attempt_at = _parse_first_attempt_at(d.pop("first_attempt_at"))

        def _parse_last_attempt_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_attempt_at = _parse_last_attempt_at(d.pop("last_attempt_at"))

        def _parse_last_error_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_error_at = _parse_last_error_at(d.pop("last_error_at"))

        capture_status = cls(
            conversation_id=conversation_id,
            state=state,
            conversation_status=conversation_status,
            revision=revision,
            extractor=extractor,
            memory_count=memory_count,
            last_error_code=last_error_code,
            attempts=attempts,
            max_attempts=max_attempts,
            created_at=created_at,
            captured_at=captured_at,
            first_attempt_at=first_attempt_at,
            last_attempt_at=last_attempt_at,
            last_error_at=last_error_at,
        )

        capture_status.additional_properties = d
        return capture_status

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

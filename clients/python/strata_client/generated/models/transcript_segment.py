from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TranscriptSegment")


@_attrs_define
class TranscriptSegment:
    """
    Attributes:
        id (str):
        text (str):
        speaker (str | Unset):  Default: 'SPEAKER_00'.
        speaker_id (int | Unset):  Default: 0.
        is_user (bool | Unset):  Default: False.
        start (float | Unset):  Default: 0.0.
        end (float | Unset):  Default: 0.0.
    """

    id: str
    text: str
    speaker: str | Unset = "SPEAKER_00"
    speaker_id: int | Unset = 0
    is_user: bool | Unset = False
    start: float | Unset = 0.0
    end: float | Unset = 0.0

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        text = self.text

        speaker = self.speaker

        speaker_id = self.speaker_id

        is_user = self.is_user

        start = self.start

        end = self.end

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "text": text,
            }
        )
        if speaker is not UNSET:
            field_dict["speaker"] = speaker
        if speaker_id is not UNSET:
            field_dict["speaker_id"] = speaker_id
        if is_user is not UNSET:
            field_dict["is_user"] = is_user
        if start is not UNSET:
            field_dict["start"] = start
        if end is not UNSET:
            field_dict["end"] = end

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        text = d.pop("text")

        speaker = d.pop("speaker", UNSET)

        speaker_id = d.pop("speaker_id", UNSET)

        is_user = d.pop("is_user", UNSET)

        start = d.pop("start", UNSET)

        end = d.pop("end", UNSET)

        transcript_segment = cls(
            id=id,
            text=text,
            speaker=speaker,
            speaker_id=speaker_id,
            is_user=is_user,
            start=start,
            end=end,
        )

        return transcript_segment

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="HistoryCommit")


@_attrs_define
class HistoryCommit:
    """
    Attributes:
        commit_id (str):
        sequence (int):
        kind (str):
        created_at (None | str):
        revision (int | None):
        layer (None | str):
        status (None | str):
    """

    commit_id: str
    sequence: int
    kind: str
    created_at: None | str
    revision: int | None
    layer: None | str
    status: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        commit_id = self.commit_id

        sequence = self.sequence

        kind = self.kind

        created_at: None | str
        created_at = self.created_at

        revision: int | None
        revision = self.revision

        layer: None | str
        layer = self.layer

        status: None | str
        status = self.status

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "commit_id": commit_id,
                "sequence": sequence,
                "kind": kind,
                "created_at": created_at,
                "revision": revision,
                "layer": layer,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        commit_id = d.pop("commit_id")

        sequence = d.pop("sequence")

        kind = d.pop("kind")

        def _parse_created_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        created_at = _parse_created_at(d.pop("created_at"))

        def _parse_revision(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        revision = _parse_revision(d.pop("revision"))

        def _parse_layer(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        layer = _parse_layer(d.pop("layer"))

        def _parse_status(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        status = _parse_status(d.pop("status"))

        history_commit = cls(
            commit_id=commit_id,
            sequence=sequence,
            kind=kind,
            created_at=created_at,
            revision=revision,
            layer=layer,
            status=status,
        )

        history_commit.additional_properties = d
        return history_commit

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

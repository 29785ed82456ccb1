from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.memory_create import MemoryCreate


T = TypeVar("T", bound="MemoryBatch")


@_attrs_define
class MemoryBatch:
    """
    Attributes:
        memories (list[MemoryCreate]):
    """

    memories: list[MemoryCreate]

    def to_dict(self) -> dict[str, Any]:
        memories = []
        for memories_item_data in self.memories:
            memories_item = memories_item_data.to_dict()
            memories.append(memories_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "memories": memories,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.memory_create import MemoryCreate  # noqa: PLC0415

        d = dict(src_dict)
        memories = []
        _memories = d.pop("memories")
        for memories_item_data in _memories:
            memories_item = MemoryCreate.from_dict(memories_item_data)

            memories.append(memories_item)

        memory_batch = cls(
            memories=memories,
        )

        return memory_batch

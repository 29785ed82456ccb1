from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.store_confirmation import StoreConfirmation


T = TypeVar("T", bound="DeletionStores")


@_attrs_define
class DeletionStores:
    """
    Attributes:
        memory_items (StoreConfirmation):
        review_queue (StoreConfirmation):
        graph (StoreConfirmation):
        keyword_index (StoreConfirmation):
        vector_index (StoreConfirmation):
    """

    memory_items: StoreConfirmation
    review_queue: StoreConfirmation
    graph: StoreConfirmation
    keyword_index: StoreConfirmation
    vector_index: StoreConfirmation
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        memory_items = self.memory_items.to_dict()

        review_queue = self.review_queue.to_dict()

        graph = self.graph.to_dict()

        keyword_index = self.keyword_index.to_dict()

        vector_index = self.vector_index.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "memory_items": memory_items,
                "review_queue": review_queue,
                "graph": graph,
                "keyword_index": keyword_index,
                "vector_index": vector_index,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.store_confirmation import StoreConfirmation  # noqa: PLC0415

        d = dict(src_dict)
        memory_items = StoreConfirmation.from_dict(d.pop("memory_items"))

        review_queue = StoreConfirmation.from_dict(d.pop("review_queue"))

        graph = StoreConfirmation.from_dict(d.pop("graph"))

        keyword_index = StoreConfirmation.from_dict(d.pop("keyword_index"))

        vector_index = StoreConfirmation.from_dict(d.pop("vector_index"))

        deletion_stores = cls(
            memory_items=memory_items,
            review_queue=review_queue,
            graph=graph,
            keyword_index=keyword_index,
            vector_index=vector_index,
        )

        deletion_stores.additional_properties = d
        return deletion_stores

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

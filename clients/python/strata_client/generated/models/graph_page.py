from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.graph_page_edges_item import GraphPageEdgesItem
    from ..models.graph_page_nodes_item import GraphPageNodesItem


T = TypeVar("T", bound="GraphPage")


@_attrs_define
class GraphPage:
    """
    Attributes:
        nodes (list[GraphPageNodesItem]): the nodes this page's edges end at (a node shared by edges of two pages is on
            both)
        edges (list[GraphPageEdgesItem]): a page of the edges, in id order
        truncated (bool): true when more pages follow (next_cursor is set); kept for older clients
        next_cursor (None | str | Unset): the next page's cursor; null on the last page
    """

    nodes: list[GraphPageNodesItem]
    edges: list[GraphPageEdgesItem]
    truncated: bool
    next_cursor: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        nodes = []
        for nodes_item_data in self.nodes:
            nodes_item = nodes_item_data.to_dict()
            nodes.append(nodes_item)

        edges = []
        for edges_item_data in self.edges:
            edges_item = edges_item_data.to_dict()
            edges.append(edges_item)

        truncated = self.truncated

        next_cursor: None | str | Unset
        if isinstance(self.next_cursor, Unset):
            next_cursor = UNSET
        else:
            next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "nodes": nodes,
                "edges": edges,
                "truncated": truncated,
            }
        )
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.graph_page_edges_item import GraphPageEdgesItem  # noqa: PLC0415
        from ..models.graph_page_nodes_item import GraphPageNodesItem  # noqa: PLC0415

        d = dict(src_dict)
        nodes = []
        _nodes = d.pop("nodes")
        for nodes_item_data in _nodes:
            nodes_item = GraphPageNodesItem.from_dict(nodes_item_data)

            nodes.append(nodes_item)

        edges = []
        _edges = d.pop("edges")
        for edges_item_data in _edges:
            edges_item = GraphPageEdgesItem.from_dict(edges_item_data)

            edges.append(edges_item)

        truncated = d.pop("truncated")

        def _parse_next_cursor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor", UNSET))

        graph_page = cls(
            nodes=nodes,
            edges=edges,
            truncated=truncated,
            next_cursor=next_cursor,
        )

        graph_page.additional_properties = d
        return graph_page

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.review_entry import ReviewEntry


T = TypeVar("T", bound="ReviewPage")


@_attrs_define
class ReviewPage:
    """
    Attributes:
        reviews (list[ReviewEntry]):
        next_cursor (None | str): the next page's cursor; null at the end or at the depth limit
        depth_limited (bool): true when paging stopped at the queue's depth limit (500 entries)
    """

    reviews: list[ReviewEntry]
    next_cursor: None | str
    depth_limited: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        reviews = []
        for reviews_item_data in self.reviews:
            reviews_item = reviews_item_data.to_dict()
            reviews.append(reviews_item)

        next_cursor: None | str
        next_cursor = self.next_cursor

        depth_limited = self.depth_limited

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "reviews": reviews,
                "next_cursor": next_cursor,
                "depth_limited": depth_limited,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.review_entry import ReviewEntry  # noqa: PLC0415

        d = dict(src_dict)
        reviews = []
        _reviews = d.pop("reviews")
        for reviews_item_data in _reviews:
            reviews_item = ReviewEntry.from_dict(reviews_item_data)

            reviews.append(reviews_item)

        def _parse_next_cursor(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor"))

        depth_limited = d.pop("depth_limited")

        review_page = cls(
            reviews=reviews,
            next_cursor=next_cursor,
            depth_limited=depth_limited,
        )

        review_page.additional_properties = d
        return review_page

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

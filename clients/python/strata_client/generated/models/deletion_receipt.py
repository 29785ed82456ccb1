from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.deletion_receipt_kind import DeletionReceiptKind
from ..models.deletion_receipt_state import DeletionReceiptState

if TYPE_CHECKING:
    from ..models.deletion_stores import DeletionStores


T = TypeVar("T", bound="DeletionReceipt")


@_attrs_define
class DeletionReceipt:
    """
    Attributes:
        receipt_id (str):
        kind (DeletionReceiptKind): what was deleted: one memory's lineage, every memory, a conversation's contribution,
            the account
        state (DeletionReceiptState): confirmed once every store is
        created_at (None | str): ISO 8601: when the delete committed (the wipe: when it began)
        expires_at (None | str): ISO 8601: the receipt is kept 30 days, then removed
        conversation_id (None | str): the deleted conversation (kind conversation)
        memory_ids (list[str]): the memories the delete removed or withdrew the conversation from (ids only; empty for
            delete-all and the account wipe)
        memory_count (int): how many memories the delete covered (0 for the account wipe)
        up_to_sequence (int | None): delete-all: the ledger sequence it found stable at; every memory written up to it
            was deleted
        stores (DeletionStores):
    """

    receipt_id: str
    kind: DeletionReceiptKind
    state: DeletionReceiptState
    created_at: None | str
    expires_at: None | str
    conversation_id: None | str
    memory_ids: list[str]
    memory_count: int
    up_to_sequence: int | None
    stores: DeletionStores
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        receipt_id = self.receipt_id

        kind = self.kind.value

        state = self.state.value

        created_at: None | str
        created_at = self.created_at

        expires_at: None | str
        expires_at = self.expires_at

        conversation_id: None | str
        conversation_id = self.conversation_id

        memory_ids = self.memory_ids

        memory_count = self.memory_count

        up_to_sequence: int | None
        up_to_sequence = self.up_to_sequence

        stores = self.stores.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "receipt_id": receipt_id,
                "kind": kind,
                "state": state,
                "created_at": created_at,
                "expires_at": expires_at,
                "conversation_id": conversation_id,
                "memory_ids": memory_ids,
                "memory_count": memory_count,
                "up_to_sequence": up_to_sequence,
                "stores": stores,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.deletion_stores import DeletionStores  # noqa: PLC0415

        d = dict(src_dict)
        receipt_id = d.pop("receipt_id")

        kind = DeletionReceiptKind(d.pop("kind"))

        state = DeletionReceiptState(d.pop("state"))

        def _parse_created_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        created_at = _parse_created_at(d.pop("created_at"))

        def _parse_expires_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        expires_at = _parse_expires_at(d.pop("expires_at"))

        def _parse_conversation_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        conversation_id = _parse_conversation_id(d.pop("conversation_id"))

        memory_ids = cast(list[str], d.pop("memory_ids"))

        memory_count = d.pop("memory_count")

        def _parse_up_to_sequence(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        up_to_sequence = _parse_up_to_sequence(d.pop("up_to_sequence"))

        stores = DeletionStores.from_dict(d.pop("stores"))

        deletion_receipt = cls(
            receipt_id=receipt_id,
            kind=kind,
            state=state,
            created_at=created_at,
            expires_at=expires_at,
            conversation_id=conversation_id,
            memory_ids=memory_ids,
            memory_count=memory_count,
            up_to_sequence=up_to_sequence,
            stores=stores,
        )

        deletion_receipt.additional_properties = d
        return deletion_receipt

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

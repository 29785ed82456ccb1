"""``GET /v1/deletions/{receipt_id}``: a deletion receipt, store by store (see
:mod:`core.services.receipts`). Every delete answers the id of one. Kept apart from
:mod:`core.api.routes` as a self-contained module, like the webhook and key routes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.api.declare import Request, Response, route
from core.api.schemas import Schema
from core.services import receipts


class StoreConfirmation(Schema):
    state: Literal["pending", "confirmed"] = Field(description="confirmed once the removal from this store was "
                                                               "confirmed (its commit, the drain's acknowledgement)")
    confirmed_at: str | None = Field(description="ISO 8601; null while pending")


class DeletionStores(Schema):
    memory_items: StoreConfirmation = Field(description="the memories tombstoned, content cleared")
    review_queue: StoreConfirmation = Field(description="their review rows redacted")
    graph: StoreConfirmation = Field(description="their graph assertions and knowledge-graph edges removed")
    keyword_index: StoreConfirmation = Field(description="their Typesense documents removed")
    vector_index: StoreConfirmation = Field(description="their vectors removed")


class DeletionReceipt(Schema):
    receipt_id: str
    kind: Literal["memory", "all", "conversation", "account"] = Field(
        description="what was deleted: one memory's lineage, every memory, a conversation's contribution, "
                    "the account")
    state: Literal["pending", "confirmed"] = Field(description="confirmed once every store is")
    created_at: str | None = Field(description="ISO 8601: when the delete committed (the wipe: when it began)")
    expires_at: str | None = Field(description="ISO 8601: the receipt is kept 30 days, then removed")
    conversation_id: str | None = Field(description="the deleted conversation (kind conversation)")
    memory_ids: list[str] = Field(description="the memories the delete removed or withdrew the conversation from "
                                              "(ids only; empty for delete-all and the account wipe)")
    memory_count: int = Field(ge=0, description="how many memories the delete covered (0 for the account wipe)")
    up_to_sequence: int | None = Field(description="delete-all: the ledger sequence it found stable at; every "
                                                   "memory written up to it was deleted")
    stores: DeletionStores


@route("GET", "/v1/deletions/{receipt_id}", "A deletion receipt: when each store confirmed the removal "
       "(only the owner's; kept 30 days; an ID token or a personal key, read scope)", response=DeletionReceipt,
       key_scope="read", operation_id="getDeletionReceipt")
def v1_deletion_receipt(req: Request) -> Response:
    return 200, receipts.read(req.ctx, req.uid, req.params["receipt_id"])

"""``Strata``: the API by resource (``memories``, ``conversations``, ``keys``, ``review``), each method
one call of a generated operation, its answer the generated model (or :class:`StrataError`).

Arguments are plain values (``visibility="public"``, ``scope="read"``); the facade turns them into
the generated models and enums, sends the request with :func:`connect`'s client (the credential,
the timeout, the retries of a 429 or 503 after ``Retry-After``) and unwraps the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal

from strata_client import connect, paginate, unwrap
from strata_client.generated.api.default import (
    create_conversation,
    create_key,
    create_memories,
    create_memory,
    delete_all_memories,
    delete_conversation,
    delete_memory,
    get_conversation,
    get_memory,
    hybrid_search_memories,
    list_keys,
    list_memories,
    list_reviews,
    resolve_review,
    restore_memory,
    revoke_key,
    search_archive,
    search_memories,
    update_memory,
    vector_search_memories,
)
from strata_client.generated.client import AuthenticatedClient
from strata_client.generated.models import (
    AllDeleted,
    CaptureStatus,
    ConversationCreate,
    ConversationCreated,
    ConversationDeleted,
    HybridSearchMemoriesDeviceScope,
    Key,
    KeyCreate,
    KeyCreated,
    KeyCreateScope,
    KeyRevoked,
    ListMemoriesDeviceScope,
    ListMemoriesLayer,
    Memory,
    MemoryBatch,
    MemoryCreate,
    MemoryCreateVisibility,
    MemoryDeleted,
    MemoryEdit,
    MemoryEditVisibilityType0,
    MemoryList,
    ReviewPage,
    ReviewResolve,
    ReviewResolved,
    ReviewResolveDecision,
    SearchArchiveDeviceScope,
    SearchMemoriesDeviceScope,
    SearchPage,
    TranscriptSegment,
    VectorSearchMemoriesDeviceScope,
)
from strata_client.generated.types import UNSET

__all__ = ["Conversations", "Keys", "Memories", "Review", "Strata"]

Visibility = Literal["public", "private"]
Layer = Literal["short_term", "long_term", "archive"]
DeviceScope = Literal["current", "all", "explicit"]
SearchKind = Literal["hybrid", "keyword", "vector", "archive"]
Decision = Literal["accept", "keep_both", "reject", "correct"]

# Each search route and the enum its generated operation takes for device_scope.
_SEARCHES: dict[str, tuple[Any, Any]] = {
    "hybrid": (hybrid_search_memories, HybridSearchMemoriesDeviceScope),
    "keyword": (search_memories, SearchMemoriesDeviceScope),
    "vector": (vector_search_memories, VectorSearchMemoriesDeviceScope),
    "archive": (search_archive, SearchArchiveDeviceScope),
}


def _given(value: Any) -> Any:
    """``UNSET`` for ``None``: the generated operations leave an unset parameter out of the request."""
    return UNSET if value is None else value


class Memories:
    """``/v1/memories``: add, list, get, search, update, delete, restore."""

    def __init__(self, client: AuthenticatedClient) -> None:
        self._client = client

    def add(self, content: str, *, category: str | None = None, visibility: Visibility = "private") -> Memory:
        """``POST /v1/memories``: an explicit memory; it enters Short-term."""
        body = MemoryCreate(content=content, category=_given(category), visibility=MemoryCreateVisibility(visibility))
        answer: Memory = unwrap(create_memory.sync_detailed(client=self._client, body=body))
        return answer

    def add_many(self, contents: Sequence[str], *, category: str | None = None,
                 visibility: Visibility = "private") -> list[Memory]:
        """``POST /v1/memories/batch``: up to 100 memories, all checked before any is written."""
        body = MemoryBatch(memories=[MemoryCreate(content=c, category=_given(category),
                                                  visibility=MemoryCreateVisibility(visibility)) for c in contents])
        return list(unwrap(create_memories.sync_detailed(client=self._client, body=body)).memories)

    def list(self, *, layer: Layer | None = None, include_archive: bool = False, limit: int = 100,
             cursor: str | None = None, device_scope: DeviceScope = "all", device_ids: Sequence[str] | None = None,
             as_of: str | None = None) -> MemoryList:
        """``GET /v1/memories``: one page, newest first; ``next_cursor`` asks for the next."""
        answer: MemoryList = unwrap(list_memories.sync_detailed(
            client=self._client, layer=ListMemoriesLayer(layer) if layer else UNSET, include_archive=include_archive,
            limit=limit, cursor=_given(cursor), device_scope=ListMemoriesDeviceScope(device_scope),
            device_ids=list(device_ids) if device_ids is not None else UNSET, as_of=_given(as_of)))
        return answer

    def all(self, *, layer: Layer | None = None, include_archive: bool = False, limit: int = 100,
            device_scope: DeviceScope = "all", device_ids: Sequence[str] | None = None,
            as_of: str | None = None) -> Iterator[Memory]:
        """Every memory :meth:`list` pages through, walking its cursor."""
        def page(cursor: str | None) -> Any:
            return list_memories.sync_detailed(
                client=self._client, layer=ListMemoriesLayer(layer) if layer else UNSET,
                include_archive=include_archive, limit=limit, cursor=_given(cursor),
                device_scope=ListMemoriesDeviceScope(device_scope),
                device_ids=list(device_ids) if device_ids is not None else UNSET, as_of=_given(as_of))

        return paginate(page, lambda answer: list(answer.memories))

    def get(self, memory_id: str) -> Memory:
        """``GET /v1/memories/{id}``."""
        answer: Memory = unwrap(get_memory.sync_detailed(memory_id, client=self._client))
        return answer

    def search(self, query: str, *, kind: SearchKind = "hybrid", limit: int = 10, cursor: str | None = None,
               device_scope: DeviceScope = "all", device_ids: Sequence[str] | None = None,
               as_of: str | None = None) -> SearchPage:
        """A page of ranked hits (``memories``, each with its ``score``; ``next_cursor``): ``hybrid``
        (``GET /v1/memories/hybrid-search``, keyword and vector fused), ``keyword``
        (``/v1/memories/search``), ``vector`` or ``archive`` (the Archive layer only)."""
        operation, scopes = _SEARCHES[kind]
        answer: SearchPage = unwrap(operation.sync_detailed(
            client=self._client, q=query, limit=limit, cursor=_given(cursor), device_scope=scopes(device_scope),
            device_ids=list(device_ids) if device_ids is not None else UNSET, as_of=_given(as_of)))
        return answer

    def update(self, memory_id: str, *, content: str | None = None, visibility: Visibility | None = None,
               category: str | None = None, reviewed: bool | None = None) -> Memory:
        """``PATCH /v1/memories/{id}``: any of the fields, at least one (a new content is a new
        revision, back in Short-term)."""
        body = MemoryEdit(content=_given(content), category=_given(category), reviewed=_given(reviewed),
                          visibility=MemoryEditVisibilityType0(visibility) if visibility else UNSET)
        answer: Memory = unwrap(update_memory.sync_detailed(memory_id, client=self._client, body=body))
        return answer

    def delete(self, memory_id: str) -> MemoryDeleted:
        """``DELETE /v1/memories/{id}``: the memory and its whole lineage; the answer names what was
        deleted and the deletion receipt."""
        answer: MemoryDeleted = unwrap(delete_memory.sync_detailed(memory_id, client=self._client))
        return answer

    def delete_all(self) -> AllDeleted:
        """``DELETE /v1/memories``: every memory of the user."""
        answer: AllDeleted = unwrap(delete_all_memories.sync_detailed(client=self._client))
        return answer

    def restore(self, memory_id: str) -> Memory:
        """``POST /v1/memories/{id}/restore``: a fact a later statement ended is current again
        (409 ``not_ended`` for one that was not ended)."""
        answer: Memory = unwrap(restore_memory.sync_detailed(memory_id, client=self._client))
        return answer


class Conversations:
    """``/v1/conversations``: add a chat as a conversation, read its capture status, delete it."""

    def __init__(self, client: AuthenticatedClient) -> None:
        self._client = client

    def add(self, messages: Sequence[Mapping[str, str]], *, id: str | None = None,  # noqa: A002 - the API's name
            language: str = "en", source: str = "api") -> ConversationCreated:
        """``POST /v1/conversations`` from chat messages ``{"role": …, "content": …}``: each message
        a transcript segment in order, the ``user`` role's marked as the user's (``SPEAKER_00``),
        every other role a speaker of its own (``SPEAKER_01``, … in order of appearance)."""
        speakers: dict[str, int] = {"user": 0}
        segments = []
        for n, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            if not isinstance(role, str) or not role or not isinstance(content, str):
                raise ValueError(f"message {n} needs a role and a content string: {dict(message)!r}")
            speaker = speakers.setdefault(role, len(speakers))
            segments.append(TranscriptSegment(id=f"m{n}", text=content, speaker=f"SPEAKER_{speaker:02d}",
                                              speaker_id=speaker, is_user=role == "user"))
        body = ConversationCreate(id=_given(id), transcript_segments=segments, language=language, source=source)
        answer: ConversationCreated = unwrap(create_conversation.sync_detailed(client=self._client, body=body))
        return answer

    def get(self, conversation_id: str) -> CaptureStatus:
        """``GET /v1/conversations/{id}``: its capture status (``state``: pending, captured,
        failed, fell_back), extractor and memory count."""
        answer: CaptureStatus = unwrap(get_conversation.sync_detailed(conversation_id, client=self._client))
        return answer

    def delete(self, conversation_id: str, *, cascade: bool = True) -> ConversationDeleted:
        """``DELETE /v1/conversations/{id}``: with ``cascade``, the memories only it supports too."""
        answer: ConversationDeleted = unwrap(delete_conversation.sync_detailed(
            conversation_id, client=self._client, cascade=cascade))
        return answer


class Keys:
    """``/v1/keys``: personal API keys (managed with an ID token only; a key cannot manage keys)."""

    def __init__(self, client: AuthenticatedClient) -> None:
        self._client = client

    def create(self, name: str, *, scope: Literal["read", "read+write"] = "read") -> KeyCreated:
        """A new key; its ``secret`` (``strata_pk_…``) is in this answer only."""
        answer: KeyCreated = unwrap(create_key.sync_detailed(
            client=self._client, body=KeyCreate(name=name, scope=KeyCreateScope(scope))))
        return answer

    def list(self) -> list[Key]:
        """The caller's keys, never their secrets."""
        return list(unwrap(list_keys.sync_detailed(client=self._client)).keys)

    def revoke(self, key_id: str) -> KeyRevoked:
        """Revoke a key: its next call is a 401."""
        answer: KeyRevoked = unwrap(revoke_key.sync_detailed(key_id, client=self._client))
        return answer


class Review:
    """``/v1/review-queue``: the open review entries and their resolution."""

    def __init__(self, client: AuthenticatedClient) -> None:
        self._client = client

    def list(self, *, limit: int = 100, cursor: str | None = None) -> ReviewPage:
        """One page of open entries, newest first (``reviews``, ``next_cursor``)."""
        answer: ReviewPage = unwrap(list_reviews.sync_detailed(client=self._client, limit=limit,
                                                                cursor=_given(cursor)))
        return answer

    def resolve(self, review_id: str, decision: Decision, *, correction: str | None = None) -> ReviewResolved:
        """``accept``, ``keep_both``, ``reject``, or ``correct`` with the ``correction`` text."""
        body = ReviewResolve(decision=ReviewResolveDecision(decision), correction=_given(correction))
        answer: ReviewResolved = unwrap(resolve_review.sync_detailed(review_id, client=self._client, body=body))
        return answer


class Strata:
    """The Strata API at ``base_url`` with exactly one credential (``id_token``: a function returning
    the signed-in user's current Firebase ID token, asked for per request; ``key``: a personal API
    key ``strata_pk_…``; ``token``: a fixed bearer token; ``server_key``: an operator's server key
    ``strata_sk_…`` for an app's backend, acting for the user whose id ``acting_for`` gives, sent
    as ``X-Strata-User``).

    ``timeout``: seconds for each attempt of a request (connect, read, write and pool); a 429 or
    503 is sent again after its ``Retry-After``, at most ``retries`` times, each wait at most
    ``max_retry_wait_s``. ``client`` is the generated client underneath, for the operations the
    facade does not cover (``strata_client.generated.api.default``). Close it when done, or use
    it as a context manager."""

    def __init__(self, base_url: str, *, id_token: Callable[[], str] | None = None, key: str | None = None, token: str | None = None,
                 server_key: str | None = None, acting_for: str | None = None,
                 headers: dict[str, str] | None = None, timeout: float = 30.0, retries: int = 3,
                 max_retry_wait_s: float = 60.0) -> None:
        self.client: AuthenticatedClient = connect(base_url, id_token=id_token, key=key, token=token,
                                                   server_key=server_key, acting_for=acting_for, headers=headers,
                                                   timeout=timeout, retries=retries, max_retry_wait_s=max_retry_wait_s)
        self.memories = Memories(self.client)
        self.conversations = Conversations(self.client)
        self.keys = Keys(self.client)
        self.review = Review(self.client)

    def close(self) -> None:
        self.client.get_httpx_client().close()

    def __enter__(self) -> Strata:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


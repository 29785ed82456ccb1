"""Explicit intake (API, import, plugin): every new memory enters Short-term, pending.

Required processing (normalisation, sensitivity labelling) then settles it ``processed`` through a
second apply — its own ledger commit, in the creation's transaction — so the ledger shows both steps. Secrets are refused before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.domain import ids, paths
from core.domain.plan import ApplyResult, ApplyView, Plan
from core.domain.records import Evidence, MemoryItem, QuoteRef, short_term_deadline
from core.domain.states import Layer, ProcessingState, Status
from core.errors import BadRequest, Conflict, StrataError
from core.ports import Ports, Step


@dataclass(frozen=True)
class ExplicitMemory:
    content: str
    category: str = "manual"
    visibility: str = "private"
    source_type: str = "explicit"
    client_device_id: str | None = None
    idempotency_key: str = ""


def _sensitivity(text: str) -> tuple[list[str], bool]:
    from core.domain.sensitivity import contains_secret, label_sensitivity

    return sorted(label_sensitivity(text)), contains_secret(text)


def checked_content(ctx: Ports, text: str | None, name: str = "content") -> str:
    """``text`` as it would be stored (whitespace collapsed), or a 400 that writes nothing: empty, or
    longer than the one content limit (``Settings.max_content_chars``, ``STRATA_MAX_CONTENT_CHARS``).
    Every path that writes user content (explicit create and batch, edit, review correction) calls it."""
    content = " ".join((text or "").split())
    if not content:
        raise BadRequest(f"{name} must not be empty", code="validation_error")
    limit = ctx.settings.max_content_chars
    if len(content) > limit:
        raise BadRequest(f"{name} must be at most {limit} characters", code="validation_error")
    return content


def refuse_secrets(content: str) -> None:
    _, secret = _sensitivity(content)
    if secret:
        raise BadRequest("memories may not contain passwords, keys or other secrets", code="secret_content")


# An explicit memory's first id names a deleted memory: its id needs the salted search (caught here).
_READDED = "explicit_readded"


def create_explicit(ctx: Ports, uid: str, requests: list[ExplicitMemory]) -> list[MemoryItem]:
    """Create each request as a Short-term pending item, then process it. Returns the processed items.
    Every request is checked (content limit, secrets) before anything is written.

    The creation and its processing are two applies — two ledger commits, as the ledger shows them —
    in one transaction (:meth:`core.ports.Store.apply_steps`), which also reads back what they left.
    The ids are the unsalted ones, checked in that transaction; only when one names a deleted memory
    is each id searched for first (:func:`_free_id`) and the transaction run again with those."""
    for request in requests:
        refuse_secrets(checked_content(ctx, request.content))
    try:
        return _create(ctx, uid, requests, [ids.explicit_memory_id(uid, r.content, r.idempotency_key, 0)
                                             for r in requests], first=True)
    except Conflict as exc:
        if exc.code != _READDED:
            raise
        return _create(ctx, uid, requests, [_free_id(ctx, uid, r) for r in requests], first=False)


def _create(ctx: Ports, uid: str, requests: list[ExplicitMemory], memory_ids: list[str], *,
            first: bool) -> list[MemoryItem]:
    def plan(view: ApplyView) -> Plan:
        out = Plan(summary={"created": 0})
        for request, memory_id in zip(requests, memory_ids, strict=True):
            current = view.items.get(memory_id)
            if first and current is not None and current.record_status == Status.TOMBSTONED:
                raise Conflict("this memory was deleted; it gets a new id", code=_READDED)
            if current is not None:
                continue  # the same explicit memory already exists: a replay, not a new fact
            content = " ".join(request.content.split())
            evidence = Evidence(
                evidence_id=ids.evidence_id(memory_id, request.source_type, "user_submission", "api", "1",
                                            {"content_hash": ids.content_hash(content)}),
                source_type=request.source_type, source_id=memory_id, source_signal="user_submission",
                extractor_id="api", extractor_version="1",
                quote_refs=[QuoteRef(segment_id="explicit", quote=content)],
                client_device_id=request.client_device_id, captured_at=view.now,
            )
            out.items.append(MemoryItem(
                id=memory_id, uid=uid, content=content, layer=Layer.SHORT_TERM, status=Status.ACTIVE,
                processing_state=ProcessingState.PENDING, category=request.category or "manual",
                visibility=request.visibility, evidence=[evidence], manually_added=True, kind="fact",
                subject_attribution="user", expires_at=short_term_deadline(view.now, ctx.settings.short_term_ttl_days),
            ))
            out.summary["created"] += 1
        return out

    item_paths = [paths.memory_item(uid, mid) for mid in memory_ids]
    _, docs = ctx.store.apply_steps(uid, [
        ctx.store.step(uid, "intake.explicit", {"ids": memory_ids}, plan, item_ids=memory_ids, actor="user"),
        process_step(ctx, uid, memory_ids),
    ], read_back=item_paths)
    items = [MemoryItem.from_store(data) for path in item_paths if (data := docs.get(path)) is not None]
    if first and any(item.record_status == Status.TOMBSTONED for item in items):
        raise Conflict("this memory was deleted; it gets a new id", code=_READDED)  # the journaled creation replayed (nothing written): deleted since
    return items


def _free_id(ctx: Ports, uid: str, request: ExplicitMemory) -> str:
    """The deterministic id of this explicit memory; re-adding content the user deleted earlier gets
    the next salted id instead of reviving (or silently matching) the tombstone."""
    for salt in range(0, 50):
        memory_id = ids.explicit_memory_id(uid, request.content, request.idempotency_key, salt)
        current = get_item(ctx, uid, memory_id)
        if current is None or current.record_status != Status.TOMBSTONED:
            return memory_id
    raise BadRequest("this memory was deleted too many times to be added again", code="too_many_readds")


def processed(item: MemoryItem) -> MemoryItem:
    """A copy of a pending item after required processing (normalised, labelled, ``processed``);
    content that turns out to hold a secret is hidden and cleared instead of stored."""
    labels, secret = _sensitivity(item.content)
    item = item.model_copy(deep=True)
    item.content = " ".join(item.content.split())
    item.sensitivity_labels = sorted(set(item.sensitivity_labels) | set(labels))
    if secret:
        item.status, item.content = "hidden", ""
    item.processing_state = ProcessingState.PROCESSED
    return item


def process_step(ctx: Ports, uid: str, memory_ids: list[str], token: str = "",
                 when: Callable[[list[ApplyResult]], bool] | None = None) -> Step:
    """Required processing as a step of :meth:`core.ports.Store.apply_steps`: normalise content,
    label sensitivity, settle ``processed``."""

    def plan(view: ApplyView) -> Plan:
        out = Plan(summary={"processed": 0})
        for memory_id in memory_ids:
            item = view.items.get(memory_id)
            if item is None or item.processing_state != ProcessingState.PENDING or item.record_status != Status.ACTIVE:
                continue
            out.items.append(processed(item))
            out.summary["processed"] += 1
        return out

    return ctx.store.step(uid, "intake.process", {"ids": sorted(memory_ids), "token": token}, plan,
                          item_ids=memory_ids, when=when)


def process_pending(ctx: Ports, uid: str, memory_ids: list[str], token: str = "") -> ApplyResult:
    """Required processing in an apply of its own (:func:`process_step`)."""
    (result,), _ = ctx.store.apply_steps(uid, [process_step(ctx, uid, memory_ids, token)])
    if result is None:  # a step without a condition always runs
        raise StrataError("the processing step did not run")
    return result


def get_item(ctx: Ports, uid: str, memory_id: str) -> MemoryItem | None:
    data = ctx.store.get(paths.memory_item(uid, memory_id))
    return MemoryItem.from_store(data) if data is not None else None

"""Explicit intake (API, import, plugin): every new memory enters Short-term, pending.

Required processing (normalisation, sensitivity labelling) then settles it ``processed`` through a
second apply — its own ledger commit, in the creation's transaction — so the ledger shows both steps. Secrets are refused before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from core.domain import ids, intake_planners, paths
from core.domain.intake_planners import READDED, ExplicitMemory
from core.domain.plan import ApplyResult
from core.domain.records import MemoryItem
from core.domain.states import Status
from core.errors import BadRequest, Conflict, StrataError
from core.ports import Ports, Step


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


def refuse_secrets(ctx: Ports, content: str) -> None:
    if ctx.sensitivity.contains_secret(content):
        raise BadRequest("memories may not contain passwords, keys or other secrets", code="secret_content")


def create_explicit(ctx: Ports, uid: str, requests: list[ExplicitMemory]) -> list[MemoryItem]:
    """Create each request as a Short-term pending item, then process it. Returns the processed items.
    Every request is checked (content limit, secrets) before anything is written.

    The creation and its processing are two applies — two ledger commits, as the ledger shows them —
    in one transaction (:meth:`core.ports.Store.apply_steps`), which also reads back what they left.
    The ids are the unsalted ones, checked in that transaction; only when one names a deleted memory
    is each id searched for first (:func:`_free_id`) and the transaction run again with those."""
    for request in requests:
        refuse_secrets(ctx, checked_content(ctx, request.content))
    try:
        return _create(ctx, uid, requests, [ids.explicit_memory_id(uid, r.content, r.idempotency_key, 0)
                                             for r in requests], first=True)
    except Conflict as exc:
        if exc.code != READDED:
            raise
        return _create(ctx, uid, requests, [_free_id(ctx, uid, r) for r in requests], first=False)


def _create(ctx: Ports, uid: str, requests: list[ExplicitMemory], memory_ids: list[str], *,
            first: bool) -> list[MemoryItem]:
    plan = partial(intake_planners.create_explicit, requests=requests, memory_ids=memory_ids, first=first,
                   ttl_days=ctx.settings.short_term_ttl_days,
                   slots=[ctx.read_slot(" ".join(r.content.split())) for r in requests])
    item_paths = [paths.memory_item(uid, mid) for mid in memory_ids]
    _, docs = ctx.store.apply_steps(uid, [
        Step.of(uid, "intake.explicit", {"ids": memory_ids}, plan, clock=ctx.now, item_ids=memory_ids, actor="user"),
        process_step(ctx, uid, memory_ids),
    ], read_back=item_paths)
    items = [MemoryItem.from_store(data) for path in item_paths if (data := docs.get(path)) is not None]
    if first and any(item.record_status == Status.TOMBSTONED for item in items):
        raise Conflict("this memory was deleted; it gets a new id", code=READDED)  # the journaled creation replayed (nothing written): deleted since
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


def process_step(ctx: Ports, uid: str, memory_ids: list[str], token: str = "",
                 when: Callable[[list[ApplyResult]], bool] | None = None) -> Step:
    """Required processing as a step of :meth:`core.ports.Store.apply_steps`: normalise content,
    label sensitivity, settle ``processed`` (:func:`core.domain.intake_planners.settle_pending`)."""
    plan = partial(intake_planners.settle_pending, memory_ids=memory_ids, sensitivity=ctx.sensitivity)
    return Step.of(uid, "intake.process", {"ids": sorted(memory_ids), "token": token}, plan, clock=ctx.now,
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

"""The user's deletes as planners: module-level pure functions from what a delete's apply read to
what it writes (``core.services.deletion`` scans, pages, binds the arguments and applies them;
the conversation cascade's page is :func:`core.domain.planners.cascade_page`).

A deleted memory is *retracted* (docs/data-model.md, *What each delete removes*): tombstoned, its
content, quotes, promotion record and subject label cleared, ``deleted_by_user`` set, whatever its
status was; its graph assertion is deleted and its review rows are redacted (closed, without text)
in the same plan. The outbox events that clear the indexes follow from the tombstones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from core.domain import endings, legacy_rows, paths
from core.domain.documents import Document
from core.domain.plan import ApplyView, Plan, Planner
from core.domain.records import MemoryItem, Sensitivity
from core.domain.review_queue import redact_reviews
from core.domain.withdrawal import retract, scrubbed
from core.errors import LegacyCollision, LineageMoved, Locked, NotFound


def tombstone(out: Plan, member: MemoryItem) -> str:
    """Add to ``out`` a copy of ``member`` retracted as the user's delete, and the removal of its
    graph assertion; returns its id."""
    member = member.model_copy(deep=True)
    retract(member, by_user=True)
    out.items.append(member)
    out.docs[paths.rel(paths.GRAPH_ASSERTIONS, member.id)] = None
    return member.id


def linked(item: MemoryItem) -> set[str]:
    """The ids ``item`` names as its lineage: the memory it was merged into as a duplicate. An ending
    is not lineage (:mod:`core.domain.endings`): the facts it ended, or the one that ended it, are
    other memories with deletes of their own."""
    return {item.canonical_memory_id} if item.canonical_memory_id else set()


def endings_of(item: MemoryItem) -> set[str]:
    """The other memories an ending ties ``item`` to: the facts it ended and the one that ended it."""
    return set(item.supersedes) | ({item.superseded_by} if item.superseded_by and not item.canonical_memory_id else set())


def _lineage_moved(view: ApplyView, lineage: frozenset[str]) -> bool:
    """True when the lineage read before the apply (``lineage``) no longer holds all of it: a member
    links to an id outside it, or an alias (the ``aliases`` query) joined since."""
    if any(member is not None and not linked(member) <= lineage
           for member in (view.items.get(mid) for mid in lineage)):
        return True
    return any(alias not in lineage for alias in view.queried.get("aliases", []))


def delete_lineage(view: ApplyView, *, memory_id: str, lineage: frozenset[str],
                   reviews: Mapping[str, dict[str, Any]]) -> Plan:
    """Delete ``memory_id`` with its whole lineage (its survivor and the duplicates merged into it:
    ``lineage``, scanned before the apply): every member not yet scrubbed is tombstoned, whatever
    its status, and the lineage's review rows are redacted. The facts a member ended come back when
    their own evidence still stands, and the fact that ended a member drops it (both must be among
    the items read: :func:`endings_of`). A lineage that
    grew since the scan is :class:`LineageMoved` (the caller rescans the union); a memory already
    deleted is :class:`NotFound`."""
    if _lineage_moved(view, lineage):
        raise LineageMoved("the lineage changed during the delete")
    target = view.items.get(memory_id)
    if target is None or scrubbed(target):
        raise NotFound("no such memory")
    out = Plan(summary={"tombstoned": []})
    members = [m for m in (view.items.get(mid) for mid in sorted(lineage)) if m is not None and not scrubbed(m)]
    for member in members:
        out.summary["tombstoned"].append(tombstone(out, member))
    # The endings it took part in: what it ended is current again when it still stands on its own
    # evidence; the fact that ended it forgets it. Neither is deleted.
    changed: dict[str, MemoryItem] = {}
    for member in members:
        endings.reactivate(view, out, changed, [mid for mid in member.supersedes if mid not in lineage], "delete")
        if member.superseded_by not in lineage:
            endings.detach(view, out, changed, member, "delete")
    out.items.extend(changed.values())
    redact_reviews(view, out, reviews)
    return out


def with_rows_removed(view: ApplyView, *, planner: Planner, rows: Iterable[str]) -> Plan:
    """``planner``'s plan, and in the same commit the removal of the documents at ``rows`` the apply
    read and found (a historical row the plan's canonical item replaces or suppresses); nothing of
    this when the plan writes nothing."""
    out = planner(view)
    if not out.empty:
        out.docs.update({found: None for found in rows if view.docs.get(found) is not None})
    return out


def with_receipt(view: ApplyView, *, planner: Planner, path: str,
                 receipt: Callable[[list[str], datetime], Document], removing: Iterable[str] = ()) -> Plan:
    """``planner``'s delete, and in the same commit its deletion receipt at ``path`` (a document
    the apply read: ``receipt`` builds it from the tombstoned ids and the apply's moment) unless it
    is there already, and the removal of the historical rows at ``removing``
    (:func:`with_rows_removed`); nothing of this when the delete commits nothing. ``notes["receipt"]`` says
    it was done, so the caller does it only otherwise (a replay, an empty delete)."""
    out = with_rows_removed(view, planner=planner, rows=removing)
    if out.empty:
        return out
    if view.docs.get(path) is None:
        out.docs[path] = receipt(list(out.summary.get("tombstoned", [])), view.now).to_store()
    out.notes["receipt"] = True
    return out


def delete_historical(view: ApplyView, *, memory_id: str, sensitivity: Sensitivity) -> Plan:
    """Delete the historical row ``memory_id``: its canonical tombstone (same id, the user's delete),
    built from the rows the apply read. A canonical item written meanwhile is
    :class:`LineageMoved` (the caller deletes that instead); a locked row is refused."""
    if view.items.get(memory_id) is not None:
        raise LineageMoved("the memory was materialised during the delete")
    item = legacy_rows.successor(view.uid, memory_id, view.docs, sensitivity=sensitivity)
    if item is None:
        raise NotFound("no such memory")
    if item.locked:
        raise Locked("this memory is locked; unlock it to delete it")
    retract(item, by_user=True)
    return Plan(items=[item], summary={"tombstoned": [memory_id]})


def tombstone_historical(view: ApplyView, *, memory_ids: Iterable[str], by_user: bool,
                         sensitivity: Sensitivity) -> Plan:
    """Tombstone the historical rows ``memory_ids`` that no canonical item suppresses yet, locked
    ones included (a bulk or privacy delete is not a paywalled action); rows whose two collections
    disagree are withheld from every read and tombstoned by nobody here (the caller removes them).
    ``by_user``: the tombstones are the user's delete (a reprocess's retraction is not)."""
    out = Plan(summary={"tombstoned": 0})
    for mid in memory_ids:
        if view.items.get(mid) is not None:
            continue  # canonical already: its own delete path covers it; the row is only cleaned
        try:
            item = legacy_rows.successor(view.uid, mid, view.docs, sensitivity=sensitivity)
        except LegacyCollision:
            item = None
        if item is None:
            continue
        retract(item, by_user=by_user)
        out.items.append(item)
        out.summary["tombstoned"] += 1
    return out


def tombstone_batch(view: ApplyView, *, reviews: Mapping[str, dict[str, Any]]) -> Plan:
    """One delete-all batch: every item the apply read that is not yet scrubbed is tombstoned with
    its graph assertion, and the batch's review rows are redacted."""
    out = Plan(summary={"tombstoned": 0})
    for member in view.items.values():
        if member is not None and not scrubbed(member):
            tombstone(out, member)
            out.summary["tombstoned"] += 1
    redact_reviews(view, out, reviews)
    return out


def answer_only(view: ApplyView, *, summary: Mapping[str, Any]) -> Plan:
    """A plan that writes nothing and answers ``summary``: the operation journals the answer
    without a ledger commit (delete-all's final answer, replayed to a retried request)."""
    return Plan(summary=dict(summary))

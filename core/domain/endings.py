"""Ending a fact, and undoing it: supersession kept apart from lineage.

A fact that a later statement ended stays a memory of its own: ``status`` superseded,
``superseded_by`` the fact that ended it, ``valid_to`` the moment that statement was said (its
conversation's time, never the time it was processed). The later fact lists it in ``supersedes``,
which its admission receipt binds. Neither joins the other's lineage (``canonical_memory_id`` is
for duplicates only), so each keeps its own deletes:

- deleting the later fact makes the ended one current again when its own evidence still stands
  (:func:`reactivate`, the spec's reactivation rule);
- deleting the ended fact removes only it; the later fact drops it from ``supersedes`` and is
  re-admitted (:func:`detach`);
- the owner can restore an ended fact (:func:`restore`): it is current again, and the two are kept
  beside each other (``kept_beside``), so the same statement never ends it again.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.domain import paths
from core.domain.admission import admit
from core.domain.plan import ApplyView, Plan
from core.domain.records import MemoryItem, valid_since
from core.domain.slots import Statement, subject_key
from core.domain.states import Layer, Status
from core.errors import Conflict, NotFound


def statement(item: MemoryItem) -> Statement:
    """What the ending rule (:func:`core.domain.slots.relation`) reads of a memory."""
    return Statement(item.slot, subject_key(item.subject_attribution, item.subject_label), valid_since(item))


def kept_apart(a: MemoryItem, b: MemoryItem) -> bool:
    """The owner said both stand (a restore, or "keep both" in review): neither ends the other."""
    return b.id in a.kept_beside or a.id in b.kept_beside


def current(item: MemoryItem | None) -> bool:
    return item is not None and item.layer == Layer.LONG_TERM and item.record_status == Status.ACTIVE


def _assertion(memory_id: str) -> str:
    return paths.rel(paths.GRAPH_ASSERTIONS, memory_id)


def readmit(view: ApplyView, plan: Plan, item: MemoryItem, planner: str) -> None:
    """A fresh receipt and graph assertion for a current Long-term fact whose bound fields changed."""
    plan.docs[_assertion(item.id)] = admit(item, revision=view.next_revision(item.id), commit_id=view.commit_id,
                                           now=view.now, planner=planner)


def end(plan: Plan, changed: dict[str, MemoryItem], old: MemoryItem, by: MemoryItem) -> None:
    """``old`` is history from now on, ended by ``by`` at the moment ``by`` was said (never before
    ``old`` began). The caller lists ``old`` in ``by.supersedes`` and admits ``by``."""
    old.status = Status.SUPERSEDED.value
    old.superseded_by = by.id
    ended, began = valid_since(by), valid_since(old)
    old.valid_to = max(ended, began) if ended is not None and began is not None else ended
    old.graph_ready = False
    plan.docs[_assertion(old.id)] = None
    changed[old.id] = old


def reactivate(view: ApplyView, plan: Plan, changed: dict[str, MemoryItem], ended_ids: Iterable[str],
               planner: str) -> None:
    """The facts in ``ended_ids`` come back as current when they are still ended Long-term facts
    backed by active evidence of their own (the statement that ended them is gone)."""
    for memory_id in ended_ids:
        ended = changed.get(memory_id) or view.items.get(memory_id)
        if (ended is None or ended.layer != Layer.LONG_TERM or ended.record_status != Status.SUPERSEDED
                or not any(e.status == "active" for e in ended.evidence)):
            continue
        ended = ended.model_copy(deep=True)
        # (an ending recorded before endings left lineage also named the successor as canonical)
        ended.superseded_by, ended.valid_to, ended.canonical_memory_id = None, None, None
        readmit(view, plan, ended, planner + ".reactivate")
        changed[ended.id] = ended


def detach(view: ApplyView, plan: Plan, changed: dict[str, MemoryItem], ended: MemoryItem, planner: str) -> None:
    """``ended`` no longer counts among what its successor ended: the successor drops it from
    ``supersedes`` and, when current, is re-admitted (its receipt binds that set)."""
    successor_id = ended.superseded_by
    if not successor_id or ended.canonical_memory_id:
        return
    successor = changed.get(successor_id) or view.items.get(successor_id)
    if successor is None or ended.id not in successor.supersedes:
        return
    successor = successor.model_copy(deep=True)
    successor.supersedes = [mid for mid in successor.supersedes if mid != ended.id]
    if current(successor):
        readmit(view, plan, successor, planner + ".detach")
    changed[successor.id] = successor


def resolve_conflicts(view: ApplyView, plan: Plan, item: MemoryItem, would_end: Iterable[str], *,
                      keep_both: bool, planner: str) -> dict[str, MemoryItem]:
    """Admit ``item`` as the owner decided in review: it ends the current facts of ``would_end``,
    or (``keep_both``) stands beside them, each kept apart from the other for good. Returns the
    other facts it changed."""
    changed: dict[str, MemoryItem] = {}
    others = [o.model_copy(deep=True) for o in (view.items.get(mid) for mid in would_end)
              if o is not None and current(o)]
    ending = [] if keep_both else others
    item.supersedes = sorted({*item.supersedes, *(o.id for o in ending)})
    readmit(view, plan, item, planner)
    for other in ending:
        end(plan, changed, other, item)
    if keep_both:
        item.kept_beside = sorted({*item.kept_beside, *(o.id for o in others)})
        for other in others:
            other.kept_beside = sorted({*other.kept_beside, item.id})
            readmit(view, plan, other, planner + ".keep_both")  # a new revision of a current fact
            changed[other.id] = other
    return changed


def restore(view: ApplyView, *, memory_id: str) -> Plan:
    """The owner's undo of an ending: the ended Long-term fact ``memory_id`` is current again; the
    fact that ended it stays current too, and the two are kept beside each other for good.
    Anything but an ended fact is a :class:`Conflict` (a deleted or unknown one :class:`NotFound`)."""
    item = view.items.get(memory_id)
    if item is None or item.record_status == Status.TOMBSTONED or item.deleted_by_user:
        raise NotFound("no such memory")
    if item.layer != Layer.LONG_TERM or item.record_status != Status.SUPERSEDED or item.canonical_memory_id:
        raise Conflict("only a fact a later statement ended can be restored", code="not_ended")
    out = Plan(summary={"restored": memory_id, "ended_by": item.superseded_by})
    changed: dict[str, MemoryItem] = {}
    item = item.model_copy(deep=True)
    detach(view, out, changed, item, "restore")
    successor_id = item.superseded_by
    if successor_id:
        item.kept_beside = sorted({*item.kept_beside, successor_id})
        successor = changed.get(successor_id) or view.items.get(successor_id)
        if successor is not None:
            successor = successor.model_copy(deep=True)
            successor.kept_beside = sorted({*successor.kept_beside, item.id})
            if current(successor):
                readmit(view, out, successor, "restore.keep")
            changed[successor.id] = successor
    item.superseded_by, item.valid_to = None, None
    readmit(view, out, item, "restore")
    changed[item.id] = item
    out.items = list(changed.values())
    return out

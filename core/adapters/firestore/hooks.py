"""What this deployment's apply engine adds to every transaction, beside the engine itself.

* :func:`admission_validator` runs on every item an apply writes: no active Long-term item is
  written without a receipt for that very revision and its graph assertion in the same
  transaction (atomic admission, docs/architecture.md; the receipt rules live in :mod:`core.domain.admission`).
* :class:`SchedulingEngine` wraps every planner: a plan that makes an item pending (new, or not
  pending before) carries one ``schedule_consolidation`` outbox event, which the drain turns into
  the user's named consolidation task (:mod:`core.services.scheduling`). The transaction itself is
  unchanged: the event is one more outbox row of the same commit.
  It also wraps every planner in :func:`core.domain.review_queue.with_review_reissue`: a new
  revision of an item in review re-issues its review entry (or closes it when the item left
  review) in the same transaction, so no item is stranded behind a stale entry.

``core.bootstrap`` builds the engine from these, so the composition root never imports a service.
"""

from __future__ import annotations

from typing import Any

from core.adapters.firestore.apply import ApplyEngine, ApplyResult, Planner
from core.domain.admission import admission_validator
from core.domain.plan import SCHEDULE_ACTION, with_schedule_event
from core.domain.review_queue import with_review_reissue

__all__ = ["SCHEDULE_ACTION", "SchedulingEngine", "admission_validator"]


class SchedulingEngine(ApplyEngine):
    """The apply engine, with every plan checked for items it makes pending and for items in
    review it revises."""

    def apply(self, uid: str, kind: str, key: Any, planner: Planner, **kwargs: Any) -> ApplyResult:
        return super().apply(uid, kind, key, with_schedule_event(with_review_reissue(planner)), **kwargs)

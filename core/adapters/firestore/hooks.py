"""What this deployment's apply engine adds to every transaction, beside the engine itself.

* :func:`admission_validator` runs on every item an apply writes: no active Long-term item is
  written without a receipt for that very revision and its graph assertion in the same
  transaction (§ atomic admission; the receipt rules live in :mod:`core.domain.admission`).
* :class:`SchedulingEngine` wraps every planner: a plan that makes an item pending (new, or not
  pending before) carries one ``schedule_consolidation`` outbox event, which the drain turns into
  the user's named consolidation task (:mod:`core.services.scheduling`). The transaction itself is
  unchanged: the event is one more outbox row of the same commit.

``core.bootstrap`` builds the engine from these, so the composition root never imports a service.
"""

from __future__ import annotations

from typing import Any

from core.adapters.firestore.apply import ApplyEngine, ApplyResult, ApplyView, OutboxAction, Plan, Planner
from core.domain.admission import receipt_problems
from core.domain.records import MemoryItem
from core.errors import AdmissionRefused

SCHEDULE_ACTION = "schedule_consolidation"


def admission_validator(item: MemoryItem, view: ApplyView, plan: Plan) -> None:
    """Refuse an active Long-term write without its receipt and graph assertion."""
    assertion = plan.docs.get(f"memory_graph_assertions/{item.id}")
    problems = receipt_problems(item, assertion)
    if problems:
        raise AdmissionRefused(f"Long-term write of {item.id} refused: {'; '.join(problems)}")


class SchedulingEngine(ApplyEngine):
    """The apply engine, with every plan checked for items it makes pending."""

    def apply(self, uid: str, kind: str, key: Any, planner: Planner, **kwargs: Any) -> ApplyResult:
        return super().apply(uid, kind, key, _with_schedule_event(planner), **kwargs)


def _with_schedule_event(planner: Planner) -> Planner:
    def plan(view: ApplyView) -> Plan:
        out = planner(view)
        if (any(_newly_pending(view, item) for item in out.items)
                and not any(a.action == SCHEDULE_ACTION for a in out.outbox)):
            out.outbox.append(OutboxAction("", SCHEDULE_ACTION, "consolidation_due"))
        return out

    return plan


def _newly_pending(view: ApplyView, item: MemoryItem) -> bool:
    previous = view.items.get(item.id)
    if previous is not None and previous.pending_route:
        return False
    probe = item.model_copy(deep=True)
    try:
        probe.settle()
    except Exception:  # noqa: BLE001 - an illegal item: the apply refuses it itself
        return False
    return probe.pending_route

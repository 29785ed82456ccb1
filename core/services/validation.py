"""Validators the apply transaction runs on every item it writes."""

from __future__ import annotations

from core.adapters.firestore.apply import ApplyView, Plan
from core.domain.admission import receipt_problems
from core.domain.records import MemoryItem
from core.errors import StrataError


class AdmissionRefused(StrataError):
    code = "admission_refused"


def admission_validator(item: MemoryItem, view: ApplyView, plan: Plan) -> None:
    """No active Long-term item is written without a receipt for this very revision and its
    graph assertion in the same transaction."""
    assertion = plan.docs.get(f"memory_graph_assertions/{item.id}")
    problems = receipt_problems(item, assertion)
    if problems:
        raise AdmissionRefused(f"Long-term write of {item.id} refused: {'; '.join(problems)}")

"""The global incident switches (``memory_controls/global``), read where each path starts.

* ``writes_disabled``: no path writes user data. Apply transactions check it inside the
  transaction (:class:`~core.errors.WritesDisabled`); the few writes made outside one (a
  conversation created or reprocessed through the API, a capture's workflow rows) check it here.
* ``consolidation_disabled``: the scheduled fan-out, the Cloud Task pass and ``strata consolidate``
  route nothing; pending items stay pending for the first pass after the switch is off.
* ``projection_disabled``: every drain (Pub/Sub push, scheduled sweep, ``strata outbox drain``)
  leases nothing; events stay pending (not attempted, not dead-lettered) for the next drain.

A switch is an operator's decision, so work it holds back is never lost: it waits.
"""

from __future__ import annotations

from typing import Any

from core.domain import paths
from core.errors import WritesDisabled
from core.ports import Ports

WRITES = "writes_disabled"
CONSOLIDATION = "consolidation_disabled"
PROJECTION = "projection_disabled"


def read(ctx: Ports) -> dict[str, Any]:
    return ctx.store.get(paths.CONTROLS_GLOBAL) or {}


def is_on(ctx: Ports, switch: str) -> bool:
    return bool(read(ctx).get(switch))


def require_writes(ctx: Ports) -> None:
    """Raise :class:`WritesDisabled` (503, retryable) while the ``writes_disabled`` switch is on."""
    if is_on(ctx, WRITES):
        raise WritesDisabled("writes are disabled by an incident switch; try again later")

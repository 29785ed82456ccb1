"""A named change of documents outside the ledger: what :meth:`core.ports.Store.write` commits.

Services write memory items through the unit of work and the drain's events through the outbox;
every other document changes through one :class:`Change`, named for what it is (the name shows in
logs, spans and errors, and finds its one place in the code). A change is all of its writes or
none of them: a plain batch, or, when ``fenced`` or ``guard`` is given, one transaction that first
reads the account fence and the guard.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.domain.plan import Write


@dataclass(frozen=True)
class Increment:
    """A field value in a merging ``set``: add ``by`` to the stored value (0 when absent), on the
    store's side; :attr:`Written.counts` answers the new value."""

    by: int = 1


@dataclass(frozen=True)
class Change:
    """One named write of documents outside the ledger: all of ``writes`` or none."""

    name: str  # what it is, e.g. "api_key.revoke" (logs, spans, errors)
    writes: Sequence[Write]  # set / update / delete / create / purge (an Increment is a set's value)
    fenced: str | None = None  # a uid: committed only while that account's fence admits it
    guard: str | None = None  # a path read in the same transaction ...
    refuse: Callable[[dict[str, Any] | None], bool] | None = None  # ... nothing written when it says so

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem is not None:
            raise ValueError(f"{self.name or 'a change'}: {problem}")

    @property
    def transactional(self) -> bool:
        """Whether the change commits in a transaction that reads the fence or the guard first."""
        return self.fenced is not None or self.guard is not None


@dataclass(frozen=True)
class Written:
    """What :meth:`core.ports.Store.write` did: ``ok`` False when the change was refused (a create
    of an existing document, a guard that refused), nothing written."""

    ok: bool
    counts: Mapping[str, int] = field(default_factory=dict)  # an Increment's path -> the field's new value

    def __bool__(self) -> bool:
        return self.ok


def _problem(change: Change) -> str | None:
    """What makes ``change`` one no store can commit (None: nothing)."""
    ops = {w.op for w in change.writes}
    if not change.name:
        return "a change needs a name"
    if "purge" in ops and len(change.writes) != 1:
        return "a purge must be the change's only write"
    if change.refuse is not None and change.guard is None:
        return "refuse needs a guard"
    counted = [w for w in change.writes if increments(w)]
    if change.transactional and (ops & {"purge", "create"} or counted):
        return "create, purge and Increment are not allowed in a fenced or guarded change"
    return next((f"an Increment needs a merging set, one incremented field per document ({w.path})"
                 for w in counted if not _counts(w)), None)


def _counts(write: Write) -> bool:
    """Whether ``write`` may carry its Increment: a merging set of one incremented field."""
    return write.op == "set" and write.merge and len(increments(write)) == 1


def increments(write: Write) -> list[str]:
    """The fields of ``write`` whose value is an :class:`Increment`."""
    return [k for k, v in (write.data or {}).items() if isinstance(v, Increment)]

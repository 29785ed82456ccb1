"""The outbox's guarded commit on the emulator (:class:`core.adapters.firestore.outbox.FirestoreOutbox`):
its one-write form, where every document named in ``expected`` must still be at that version or
nothing is written, and its fallback, the transaction that writes only while every guard holds."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from core.bootstrap import Context
from core.domain.changes import Change
from core.domain.outbox import Commit, Guard
from core.ports import Store, Write

pytestmark = pytest.mark.integration


def _unchanged(expected: dict[str, Any], writes: list[Write]) -> dict[str, Any] | None:
    """The one-write form alone: a guard no document can meet keeps the fallback from writing."""
    written, versions = Context().outbox.commit(Commit({"unguarded/none": Guard("nobody")}, writes, expected))
    assert written == (versions is not None)
    return versions


def _version(store: Store, path: str) -> Any:
    doc = store.get_all_versioned([path])[path]
    assert doc is not None
    return doc.version


def seed(store: Store, writes: list[Write]) -> None:
    store.write(Change("test.seed", writes))


def _paths() -> tuple[str, str]:
    uid = f"unchanged-{uuid.uuid4().hex[:10]}"
    return f"users/{uid}/memory_state/lease", f"users/{uid}/memory_outbox/e1"


def test_unchanged_documents_are_written_in_one_commit(stack: dict[str, Any]) -> None:
    store = Context().store
    lease, event = _paths()
    seed(store, [Write("set", lease, {"holder": "h", "n": 0})])
    seed(store, [Write("set", event, {"state": "pending"})])
    expected = {lease: _version(store, lease), event: _version(store, event)}
    versions = _unchanged(expected, [Write("update", lease, {"n": 1}),
                                 Write("update", event, {"state": "leased"})])
    assert versions is not None and set(versions) == {lease, event}
    assert store.get(lease) == {"holder": "h", "n": 1} and store.get(event) == {"state": "leased"}
    # The versions it returns are the documents' new ones: a second commit on them goes through too.
    assert _unchanged(versions, [Write("update", lease, {"n": 2}), Write("delete", event)]) is not None
    assert store.get(lease) == {"holder": "h", "n": 2} and store.get(event) is None


def test_a_document_changed_since_leaves_everything_unwritten(stack: dict[str, Any]) -> None:
    store = Context().store
    lease, event = _paths()
    seed(store, [Write("set", lease, {"holder": "h"})])
    seed(store, [Write("set", event, {"state": "pending"})])
    expected = {lease: _version(store, lease), event: _version(store, event)}
    seed(store, [Write("update", lease, {"dirty": True})])  # a nudge's note, after the versions were read
    assert _unchanged(expected, [Write("update", lease, {"expires": 1}),
                     Write("update", event, {"state": "leased"})]) is None
    assert store.get(lease) == {"holder": "h", "dirty": True} and store.get(event) == {"state": "pending"}


def test_a_deleted_document_or_an_unknown_version_is_refused(stack: dict[str, Any]) -> None:
    store = Context().store
    lease, event = _paths()
    seed(store, [Write("set", event, {"state": "pending"})])
    version = _version(store, event)
    seed(store, [Write("delete", event)])
    assert _unchanged({event: version}, [Write("delete", event)]) is None
    assert _unchanged({lease: None}, [Write("update", lease, {"x": 1})]) is None
    # A guarded document must be among the written ones.
    assert _unchanged({event: version}, [Write("set", lease, {"x": 1})]) is None
    assert store.get(lease) is None


def test_the_fallback_writes_only_while_every_guard_holds(stack: dict[str, Any]) -> None:
    ctx = Context()
    store = ctx.store
    lease, event = _paths()
    seed(store, [Write("set", lease, {"holder": "h"})])
    seed(store, [Write("set", event, {"state": "leased", "lease_epoch": 2})])
    expected = {lease: _version(store, lease), event: _version(store, event)}
    seed(store, [Write("update", lease, {"dirty": True})])  # changed since: the one-write form is refused, the guards still hold
    guards = {lease: Guard("h"), event: Guard(state="leased", epoch=2)}
    assert ctx.outbox.commit(Commit(guards, [Write("delete", event)], expected)) == (True, None)
    assert store.get(event) is None
    seed(store, [Write("set", event, {"state": "leased", "lease_epoch": 3})])  # re-leased by another drain
    assert ctx.outbox.commit(Commit(guards, [Write("delete", event)])) == (False, None)
    assert store.get(event) == {"state": "leased", "lease_epoch": 3}

"""Store.commit_unchanged on the emulator: the one-write form of a guarded commit the drain uses.
Every document named in ``expected`` must still be at that version, or nothing is written."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from core.bootstrap import Context
from core.ports import Write

pytestmark = pytest.mark.integration


def _paths() -> tuple[str, str]:
    uid = f"unchanged-{uuid.uuid4().hex[:10]}"
    return f"users/{uid}/memory_state/lease", f"users/{uid}/memory_outbox/e1"


def test_unchanged_documents_are_written_in_one_commit(stack: dict[str, Any]) -> None:
    store = Context().store
    lease, event = _paths()
    store.set(lease, {"holder": "h", "n": 0})
    store.set(event, {"state": "pending"})
    expected = {lease: store.get_versioned(lease).version, event: store.get_versioned(event).version}
    versions = store.commit_unchanged(expected, [Write("update", lease, {"n": 1}),
                                                 Write("update", event, {"state": "leased"})])
    assert versions is not None and set(versions) == {lease, event}
    assert store.get(lease) == {"holder": "h", "n": 1} and store.get(event) == {"state": "leased"}
    # The versions it returns are the documents' new ones: a second commit on them goes through too.
    assert store.commit_unchanged(versions, [Write("update", lease, {"n": 2}), Write("delete", event)]) is not None
    assert store.get(lease) == {"holder": "h", "n": 2} and store.get(event) is None


def test_a_document_changed_since_leaves_everything_unwritten(stack: dict[str, Any]) -> None:
    store = Context().store
    lease, event = _paths()
    store.set(lease, {"holder": "h"})
    store.set(event, {"state": "pending"})
    expected = {lease: store.get_versioned(lease).version, event: store.get_versioned(event).version}
    store.update(lease, {"dirty": True})  # a nudge's note, after the versions were read
    assert store.commit_unchanged(expected, [Write("update", lease, {"expires": 1}),
                                             Write("update", event, {"state": "leased"})]) is None
    assert store.get(lease) == {"holder": "h", "dirty": True} and store.get(event) == {"state": "pending"}


def test_a_deleted_document_or_an_unknown_version_is_refused(stack: dict[str, Any]) -> None:
    store = Context().store
    lease, event = _paths()
    store.set(event, {"state": "pending"})
    version = store.get_versioned(event).version
    store.delete(event)
    assert store.commit_unchanged({event: version}, [Write("delete", event)]) is None
    assert store.commit_unchanged({lease: None}, [Write("update", lease, {"x": 1})]) is None
    # A guarded document must be among the written ones.
    assert store.commit_unchanged({event: version}, [Write("set", lease, {"x": 1})]) is None
    assert store.get(lease) is None

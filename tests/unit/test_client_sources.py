"""The clients' committed sources follow this checkout's routes (issue 46).

``clients/python/strata_client/generated`` and ``clients/js/src/schema.gen.ts`` with ``dist/`` are
committed, so a clone installs either client without a build step; each is generated from the
OpenAPI document committed beside it (``clients/*/openapi.json``). This test compares those
documents with the one the route table makes now (what ``python -m core.api.app`` prints), which
is cheap; the e2e tests of the clients compare the generated code with a fresh generation
(``tests/e2e/test_python_client.py``, ``tests/e2e/test_js_client.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.api.app import ROUTES
from core.api.openapi import document

REPO = Path(__file__).resolve().parents[2]
CLIENTS = {
    "clients/python": ("make client-python", "clients/python/openapi.json clients/python/strata_client/generated"),
    "clients/js": ("make client-js", "clients/js/openapi.json clients/js/src/schema.gen.ts clients/js/dist"),
}


def _changed(committed: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The routes and schemas that differ, to name in the failure."""
    changed = []
    for part in ("paths", "components"):
        ours, theirs = committed.get(part, {}), current.get(part, {})
        if part == "components":
            ours, theirs = ours.get("schemas", {}), theirs.get("schemas", {})
        changed += [f"{part} {name}" for name in sorted(ours.keys() | theirs.keys()) if ours.get(name) != theirs.get(name)]
    rest = {k for k in (committed.keys() | current.keys()) - {"paths", "components"} if committed.get(k) != current.get(k)}
    return changed + sorted(rest)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_the_committed_document_is_the_current_one(client: str) -> None:
    make, paths = CLIENTS[client]
    remedy = f"run `{make}` and commit {paths}"
    path = REPO / client / "openapi.json"
    assert path.exists(), f"{client}/openapi.json is missing: {remedy}"
    printed = json.dumps(document(ROUTES), indent=1, sort_keys=False) + "\n"  # as `python -m core.api.app`
    committed_text = path.read_text()
    if committed_text == printed:
        return
    committed, current = json.loads(committed_text), json.loads(printed)
    changed = _changed(committed, current)
    assert not changed, (f"{client}'s generated code is not what this checkout's OpenAPI document makes "
                         f"({len(changed)} changed: {', '.join(changed[:8])}): {remedy}")
    assert committed_text == printed, f"{client}/openapi.json is not formatted as `{make}` writes it: {remedy}"

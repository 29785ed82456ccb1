"""The clients' committed generated code is what their generators make now (issue 46).

``clients/python/strata_client/generated`` and ``clients/js/src/schema.gen.ts`` with ``dist/`` are
committed, so a clone installs either client without a build step. Each test generates its client
afresh, in a scratch directory, from the OpenAPI document committed beside it, with the pinned
generator (``.venv-client-python``; ``clients/js/node_modules`` from the lock file), and compares
file by file: a hand edit, a changed generator or compiler, or a document committed without the
code it makes fails here. That the document is this checkout's own is
``tests/unit/test_client_sources.py``'s part. No stack: the generators read files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import js_client, py_client

pytestmark = pytest.mark.e2e


def test_the_python_client_is_what_the_generator_makes() -> None:
    differ = py_client.differences()
    assert not differ, (f"strata_client/generated is not what openapi-python-client makes from "
                        f"clients/python/openapi.json ({len(differ)} files differ: {', '.join(differ[:8])}): run "
                        f"`make client-python` and commit clients/python/openapi.json clients/python/strata_client/generated")


def test_the_typescript_client_is_what_its_build_makes(tmp_path: Path) -> None:
    assert (js_client.CLIENT / "node_modules" / ".installed").exists(), "clients/js is not installed: run make setup"
    differ = js_client.differences(tmp_path)
    assert not differ, (f"clients/js's generated and compiled files are not what `npm run build` makes from "
                        f"clients/js/openapi.json and src ({len(differ)} files differ: {', '.join(differ[:8])}): run "
                        f"`make client-js` and commit clients/js/openapi.json clients/js/src/schema.gen.ts clients/js/dist")

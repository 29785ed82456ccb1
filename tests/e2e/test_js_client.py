"""The generated TypeScript client (``clients/js``) against the session's stack.

The client is generated from the ``/openapi.json`` the stack serves (:mod:`tests.support.js_client`),
then its own tests (``clients/js/test``, node's test runner) run against the stack as a new user:
create and batch create, list with paging, search with paging, edit, delete, a conversation's
capture status, and errors with their request id; and (against local servers of their own) the
retries after a connection closed before any answer.
"""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from typing import Any

import httpx
import pytest

from strata_dev.localstack.tokens import emulator_token
from tests.support import js_client

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def document(stack: dict[str, Any]) -> dict[str, Any]:
    served: dict[str, Any] = httpx.get(stack["api_url"] + "/openapi.json", timeout=60).json()
    js_client.ensure_built(served)
    return served


def test_the_client_is_generated_from_the_served_document(document: dict[str, Any]) -> None:
    generated = js_client.GENERATED.read_text()
    for path, operations in document["paths"].items():
        assert f'"{path}": {{' in generated, f"{path} is not in the generated client"
        for operation in operations.values():
            assert re.search(rf"\b{operation['operationId']}: {{", generated), operation["operationId"]


def test_the_client_tests_pass_against_the_stack(document: dict[str, Any], stack: dict[str, Any]) -> None:
    env = dict(os.environ, STRATA_API_URL=stack["api_url"], STRATA_TOKEN=emulator_token(f"js-{uuid.uuid4().hex[:12]}"))
    run = subprocess.run(["node", "--test", "--test-reporter=spec", "test/"], cwd=js_client.CLIENT, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert re.search(r"\bpass 9\b", run.stdout) and re.search(r"\bfail 0\b", run.stdout), run.stdout[-3000:]

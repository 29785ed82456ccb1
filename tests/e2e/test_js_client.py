"""The generated TypeScript client (``clients/js``) against the session's stack.

The client is generated from the ``/openapi.json`` the stack serves (:mod:`tests.support.js_client`),
then its own tests (``clients/js/test``, node's test runner) run against the stack as a new user:
create and batch create, list with paging, search with paging, edit, delete, a conversation's
capture status, errors with their request id, and the ``Strata`` facade; and (against local
servers of their own) the retries after a 429 and after a connection closed before any answer, and
the timeout. Then the ``js`` blocks of its README run as written, in order, as one module.
"""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from typing import Any

import httpx
import pytest

from core.bootstrap import Context
from strata_dev.localstack.tokens import emulator_token
from tests.e2e.test_docs_examples import server_key_env
from tests.support import js_client

pytestmark = pytest.mark.e2e
README = js_client.CLIENT / "README.md"
JS_BLOCK = re.compile(r"^```js\n(.*?)^```", re.MULTILINE | re.DOTALL)
MARK = "--- README block"
# Indexing is asynchronous, as the README says: before its search block, the module waits (with the
# README's own client and memory) until that search finds the memory, at most two minutes.
WAIT_INDEXED = """{
  const deadline = Date.now() + 120_000;
  while (!(await strata.memories.search("chillies", { limit: 100 })).memories.some((m) => m.id === memory.id)) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the README's memory to be indexed");
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}
"""


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
    assert re.search(r"\bpass 13\b", run.stdout) and re.search(r"\bfail 0\b", run.stdout), run.stdout[-3000:]


def test_the_readme_examples_run_as_written(document: dict[str, Any], stack: dict[str, Any],
                                            http: httpx.Client) -> None:
    """The README's ``js`` blocks, unchanged and in order, as one ES module importing the package by
    its name (a package may import itself): connect and add, search, delete (and the error that
    follows), then the rest; expectations from docs/api.md."""
    blocks = JS_BLOCK.findall(README.read_text())
    for call in ("strata.memories.add(", "strata.memories.search(", "strata.memories.delete(",
                 "strata.conversations.add({ messages:", "strata.keys.create(", "strata.review.resolve("):
        assert any(call in block for block in blocks), f"the README shows no {call}"
    module = ""
    for n, block in enumerate(blocks):
        module += f'console.log("{MARK} {n + 1}");\n' + (WAIT_INDEXED if "memories.search(" in block else "") + block
    uid = f"js-readme-{uuid.uuid4().hex[:12]}"
    token = emulator_token(uid)
    path = js_client.CLIENT / f".readme-{uuid.uuid4().hex[:8]}.mjs"  # inside the package, to import it by name
    path.write_text(module)
    try:
        run = subprocess.run(["node", path.name], cwd=js_client.CLIENT, capture_output=True, text=True, timeout=600,
                             env=dict(os.environ, STRATA_API=stack["api_url"], STRATA_TOKEN=token,
                                      **server_key_env(uid)))  # the server-key block's, made as docs/api.md says
    finally:
        path.unlink()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    added, found, deleted, rest, served = [part.split("\n", 1)[1] for part in run.stdout.split(MARK)[1:]]
    memory_id = added.split()[0]
    assert added.split() == [memory_id, "short_term"]
    assert "I grow chillies on the balcony" in found and float(found.split()[0]) > 0
    assert memory_id in deleted and "404 not_found req_" in deleted
    assert http.get(f"/v1/memories/{memory_id}", headers={"Authorization": f"Bearer {token}"}).status_code == 404
    lines = rest.splitlines()
    assert lines[0] == "public" and "I am learning Portuguese" in lines
    assert any(line in ("pending", "captured", "fell_back") for line in lines)
    assert "[ 'my agent' ]" in lines  # listed before its revocation
    # The backend's memory is the user's, and its commits name the server key that made it.
    assert served.strip() == "I prefer window seats on long flights"
    saved = [m for m in http.get("/v1/memories", headers={"Authorization": f"Bearer {token}"}).json()["memories"]
             if m["content"] == "I prefer window seats on long flights"]
    assert len(saved) == 1, saved
    commits = [s.to_dict() for s in Context().client.collection(f"users/{uid}/memory_commits").stream()]
    made = [c for c in commits if saved[0]["id"] in c.get("memory_ids", [])]
    assert made and all(c["credential"]["kind"] == "server_key" for c in made), made


def test_the_readme_examples_type_check(document: dict[str, Any]) -> None:
    """The same blocks are TypeScript too: one module of them compiles with ``tsc --strict`` against
    the package's declarations (``process.env`` declared, as ``@types/node`` would in an app)."""
    blocks = JS_BLOCK.findall(README.read_text())
    imports = [line for block in blocks for line in block.splitlines() if line.startswith("import ")]
    code = ["\n".join(line for line in block.splitlines() if not line.startswith("import ")) for block in blocks]
    path = js_client.CLIENT / f".readme-{uuid.uuid4().hex[:8]}.mts"
    path.write_text("\n".join([*imports, "declare const process: { env: Record<string, string> };", *code,
                                "export {};"]))
    try:
        run = subprocess.run(["node_modules/.bin/tsc", "--noEmit", "--strict", "--module", "nodenext",
                              "--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom",
                              "--skipLibCheck", path.name], cwd=js_client.CLIENT, capture_output=True, text=True,
                             timeout=300)
    finally:
        path.unlink()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

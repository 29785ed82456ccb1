"""The documentation's examples, run as written against the session's stack (a doc example that is
not run rots):

* every ``sh`` block of ``docs/api.md`` that calls ``curl`` is run with the real ``curl``, in
  document order, as one new user, and must answer the status its ``# → NNN`` note states; a note
  ``its "id" is $NAME below`` exports that field of the answer for the examples after it;
* every MCP client configuration (a ``json`` block with ``mcpServers``) of ``README.md`` and
  ``docs/api.md`` is connected with the ``mcp`` SDK's streamable-HTTP client using exactly its
  ``url`` and ``headers`` (``${VAR}`` filled from the environment, as the clients do; a
  configuration with ``${STRATA_KEY}`` gets a personal key from the doc's own ``export STRATA_KEY=``
  command); the tools are listed and one is called;
* the README's "connect an app": its Firestore write (the Firebase JS SDK, run by node against
  the emulator as a signed-in user through the security rules) and its two API calls, whose
  answers must come to hold the conversation's memory.

The only change to a command is how its answer is captured: ``curl`` is wrapped so that the
status and the body are recorded (``-o FILE -w '%{http_code}'`` added to its own arguments).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from strata_dev.localstack.tokens import emulator_token
from tests.support.firestore_checks import wait_for

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
API_DOC = REPO / "docs" / "api.md"
NODE_MODULES = REPO / "tools" / "firebase" / "node_modules"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
STATUS = re.compile(r"#\s*→\s*(\d{3})")
EXPORTS = re.compile(r'its "(\w+)" is \$(\w+)')
CALL_AGAIN = re.compile(r"\((\d{3}): call again\)")  # a status the doc says to retry on
VARIABLE = re.compile(r"\$\{(\w+)\}")
CURL_WRAPPER = 'curl() { command curl -sS -o "$STRATA_DOC_BODY" -w "%{http_code}" "$@"; }\n'
# An emulator's first answers on a busy 2-core machine can be slow; this bounds a hung example.
COMMAND_TIMEOUT_S = 120
EVENTUAL_TIMEOUT_S = 120  # capture and projection are asynchronous (trigger, outbox, Pub/Sub)


@dataclass(frozen=True)
class Example:
    source: str
    script: str
    status: int
    exports: tuple[tuple[str, str], ...]
    call_again: int | None = None


def blocks(path: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(path.read_text()) if lang == language]


def curl_examples(path: Path) -> list[Example]:
    found = []
    for body in blocks(path, "sh"):
        if "curl " not in body:
            continue
        statuses = STATUS.findall(body)
        assert len(statuses) == 1, f"{path.name}: an example needs exactly one '# → status' note:\n{body}"
        assert body.count("curl ") == 1, f"{path.name}: one curl per example:\n{body}"
        again = CALL_AGAIN.findall(body)
        found.append(Example(f"{path.name}: {body.splitlines()[0][:100]}", body, int(statuses[0]),
                             tuple(EXPORTS.findall(body)), int(again[0]) if again else None))
    return found


def run_curl(example: Example, env: dict[str, str]) -> tuple[int, bytes]:
    with tempfile.NamedTemporaryFile() as body:
        done = subprocess.run(["bash", "-c", CURL_WRAPPER + example.script], capture_output=True, text=True,
                              env={**env, "STRATA_DOC_BODY": body.name}, timeout=COMMAND_TIMEOUT_S)
        assert done.returncode == 0, f"{example.source}: exit {done.returncode}: {done.stderr}"
        return int(done.stdout.strip()[-3:]), Path(body.name).read_bytes()


def _answered(example: Example, env: dict[str, str]) -> tuple[int, bytes] | None:
    """The example's answer, or None while it is the status the doc says to call again on."""
    status, body = run_curl(example, env)
    return None if status == example.call_again else (status, body)


def shell_env(stack: dict[str, Any], uid: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"),
            "STRATA_API": stack["api_url"], "TOKEN": emulator_token(uid)}


def _uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# ---------------------------------------------------------------------------------------- the token
TOKEN_LINE = re.compile(r"^export TOKEN=(.+)$", re.MULTILINE)
KEY_LINE = re.compile(r"^export STRATA_KEY=(.+)$", re.MULTILINE)


@pytest.mark.parametrize("path", [README, API_DOC], ids=lambda p: p.name)
def test_the_documented_token_command_gives_a_token_the_api_accepts(stack: dict[str, Any], path: Path) -> None:
    [command] = TOKEN_LINE.findall(path.read_text())
    done = subprocess.run(["bash", "-c", f'export TOKEN={command}; printf %s "$TOKEN"'], capture_output=True,
                          text=True, cwd=REPO, timeout=COMMAND_TIMEOUT_S)
    assert done.returncode == 0 and done.stdout.count(".") == 2, done.stderr
    answer = httpx.get(stack["api_url"] + "/v1/memories", headers={"Authorization": f"Bearer {done.stdout}"},
                       timeout=60)
    assert answer.status_code == 200, answer.text


# ------------------------------------------------------------------------------------ docs/api.md
def test_the_api_doc_has_an_example_for_every_route(stack: dict[str, Any]) -> None:
    """Every operation of /openapi.json appears in the doc's examples (method and path)."""
    document = httpx.get(stack["api_url"] + "/openapi.json", timeout=60).json()
    scripts = " ".join(e.script for e in curl_examples(API_DOC))
    missing = []
    for path, operations in document["paths"].items():
        shape = re.escape(path)
        shape = re.sub(r"\\\{\w+\\\}", r"[^/?\" ]+", shape)
        for method in operations:
            verb = "curl -s " if method == "get" else rf"-X {method.upper()} "
            if not re.search(rf"{verb}\"\$STRATA_API{shape}(?=[?\"])", scripts):
                missing.append(f"{method.upper()} {path}")
    assert not missing, f"routes without an example in docs/api.md: {missing}"


SERVER_KEY_LINE = re.compile(r"^export STRATA_SERVER_KEY=(.+)$", re.MULTILINE)


def server_key_env(uid: str) -> dict[str, str]:
    """``STRATA_SERVER_KEY`` made by the doc's own operator command (the ``strata`` CLI, against the
    session's stack: this process's environment names its emulators) and ``STRATA_USER``, the
    examples' user."""
    [command] = SERVER_KEY_LINE.findall(API_DOC.read_text())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", f'export STRATA_SERVER_KEY={command}; printf %s "$STRATA_SERVER_KEY"'],
                          env=env, capture_output=True, text=True, cwd=REPO, timeout=COMMAND_TIMEOUT_S)
    assert done.returncode == 0 and done.stdout.startswith("strata_sk_"), (done.stdout, done.stderr)
    return {"STRATA_SERVER_KEY": done.stdout, "STRATA_USER": uid}


def test_every_curl_example_of_the_api_doc_answers_its_documented_status(stack: dict[str, Any]) -> None:
    examples = curl_examples(API_DOC)
    assert len(examples) >= 40
    uid = _uid("docs")
    env = shell_env(stack, uid) | server_key_env(uid)
    for example in examples:
        status, body = run_curl(example, env)
        if example.call_again is not None and status == example.call_again:  # as the doc says: call again
            answer = wait_for(partial(_answered, example, env), timeout=EVENTUAL_TIMEOUT_S, interval=0.5,
                              what=f"{example.source} to stop answering {example.call_again}")
            assert answer is not None
            status, body = answer
        assert status == example.status, f"{example.source}\n→ {status}: {body[:500]!r}"
        if status < 400 and status != 204 and "memories/export" not in example.script:
            json.loads(body)  # every JSON answer parses (a 204, the CORS preflight's, has no body)
        for field, name in example.exports:
            env[name] = str(json.loads(body)[field])


# -------------------------------------------------------------------------------------------- MCP
def mcp_configurations() -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path in (README, API_DOC):
        for body in blocks(path, "json"):
            config = json.loads(body)
            for name, server in config.get("mcpServers", {}).items():
                found.append((path.name, name, server))
    return found


def _expand(value: str, env: dict[str, str]) -> str:
    return VARIABLE.sub(lambda m: env[m.group(1)], value)


def test_the_readme_has_an_mcp_configuration() -> None:
    assert any(source == "README.md" for source, _, _ in mcp_configurations())


@pytest.mark.parametrize("source,name,server", mcp_configurations(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_mcp_configuration_connects_lists_tools_and_calls_one(stack: dict[str, Any], source: str, name: str,
                                                                  server: dict[str, Any]) -> None:
    uid = _uid("docs-mcp")
    env = shell_env(stack, uid)
    if "${STRATA_KEY}" in json.dumps(server):  # a personal key, made as the doc says (with the token)
        [command] = KEY_LINE.findall(API_DOC.read_text())
        done = subprocess.run(["bash", "-c", f'export STRATA_KEY={command}; printf %s "$STRATA_KEY"'], env=env,
                              capture_output=True, text=True, cwd=REPO, timeout=COMMAND_TIMEOUT_S)
        assert done.returncode == 0 and done.stdout.startswith("strata_pk_"), (done.stdout, done.stderr)
        env["STRATA_KEY"] = done.stdout
    url = _expand(server["url"], env)
    headers = {key: _expand(value, env) for key, value in server.get("headers", {}).items()}
    assert server.get("type") in (None, "http", "streamable-http")

    async def session() -> tuple[set[str], dict[str, Any], dict[str, Any]]:
        async with httpx2.AsyncClient(headers=headers, timeout=60.0) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            created = await client.call_tool("create_memory", {"content": "I keep bees in the garden"})
            listed = await client.call_tool("list_memories", {})
            assert not created.is_error and not listed.is_error, (created.content, listed.content)
            return tools, created.structured_content, listed.structured_content

    tools, created, listed = anyio.run(session)
    assert {"search_memories", "list_memories", "get_memory", "create_memory", "delete_memory"} <= tools
    assert created["content"] == "I keep bees in the garden"
    assert created["id"] in [m["id"] for m in listed["memories"]]
    # The REST API sees what the agent wrote, under the token's user.
    answer = httpx.get(f"{stack['api_url']}/v1/memories/{created['id']}", timeout=60,
                       headers={"Authorization": f"Bearer {emulator_token(uid)}"})
    assert answer.status_code == 200 and answer.json()["content"] == created["content"]


# ------------------------------------------------------------------------------- connect an app
JS_PRELUDE = """
import { initializeApp } from "firebase/app";
import { getFirestore, connectFirestoreEmulator, terminate } from "firebase/firestore";
const app = initializeApp({ projectId: process.env.STRATA_PROJECT_ID, apiKey: "demo-api-key" });
const db = getFirestore(app);
const [host, port] = process.env.FIRESTORE_EMULATOR_HOST.split(":");
// The signed-in user, as the emulator sees it (what Auth's sign-in would give the app).
const uid = process.env.STRATA_DOC_UID;
connectFirestoreEmulator(db, host, Number(port), { mockUserToken: { sub: uid, user_id: uid } });
const user = { uid };
"""


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end != -1 else len(text)]


def test_the_readme_connect_an_app_steps_run_as_written(stack: dict[str, Any]) -> None:
    section = _section(README.read_text(), "## Connect an app")
    [write] = [body for lang, body in FENCE.findall(section) if lang == "js"]
    calls = [body for lang, body in FENCE.findall(section) if lang == "sh" and "curl " in body]
    assert len(calls) == 2, calls
    conversation_id = re.search(r'"conversations", "([\w-]+)"', write)
    assert conversation_id, write
    uid = _uid("docs-app")
    env = shell_env(stack, uid)

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "node_modules").symlink_to(NODE_MODULES)
        script = Path(folder) / "write.mjs"
        script.write_text(JS_PRELUDE + write + "\nawait terminate(db);\n")
        node_env = {**env, "STRATA_PROJECT_ID": stack["project_id"], "STRATA_DOC_UID": uid,
                    "FIRESTORE_EMULATOR_HOST": stack["firestore_emulator_host"]}
        done = subprocess.run(["node", str(script)], capture_output=True, text=True, env=node_env,
                              timeout=COMMAND_TIMEOUT_S)
        assert done.returncode == 0, done.stderr

    def answer_holding(example: Example) -> Any:
        def probe() -> Any:
            status, body = run_curl(example, env)
            assert status == example.status, body[:500]
            memories = json.loads(body)["memories"]
            return [m for m in memories if m["conversation_id"] == conversation_id.group(1)]

        return wait_for(probe, timeout=EVENTUAL_TIMEOUT_S, interval=0.5, what=example.source)

    listed, searched = (answer_holding(Example(f"README: {call.splitlines()[0]}", call,
                                               int(STATUS.findall(call)[0]), ())) for call in calls)
    assert any("Lisbon" in m["content"] for m in listed), listed
    assert any("Lisbon" in m["content"] for m in searched), searched


# ------------------------------------------------------------------------------------------ links
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = FENCE.sub("", path.read_text())
    headings = re.findall(r"^#+\s+(.*)$", text, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_relative_link_of_the_docs_resolves() -> None:
    documents = [README, REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = []
    for document in documents:
        for target in LINK.findall(FENCE.sub("", document.read_text())):
            if re.match(r"\w+://|mailto:", target):
                continue
            file_part, _, anchor = target.partition("#")
            linked = (document.parent / file_part).resolve() if file_part else document
            if not linked.exists():
                broken.append(f"{document.name}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{document.name}: {target} (no such heading)")
    assert not broken, broken

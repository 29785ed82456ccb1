"""The generated Python client (``clients/python``) against the session's stack.

The client is generated from the ``/openapi.json`` the stack serves (:mod:`tests.support.py_client`),
then the ``python`` blocks of its README run as written, in order, in one namespace, as a new user;
then the facade (``Strata``) and the generated operations are used as an app would, as a new user: create and batch create, list with paging, search with
paging, edit, delete, a conversation's capture status, a personal key as the credential (and
the deletion receipt it may read), and
errors with their request id. Expectations come from the API's contract (docs/api.md), not from
the client.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
import pytest

from core.bootstrap import Context
from core.domain import ids
from strata_dev.localstack.tokens import emulator_token
from tests.e2e.test_docs_examples import server_key_env
from tests.support import py_client
from tests.support.firestore_checks import user_documents, wait_for
from tests.support.json_server import Reply, ScriptedJSONServer

pytestmark = pytest.mark.e2e
T = TypeVar("T")
FACTS = ["I keep three beehives behind the barn", "My sister Ines lives in Porto",
         "I play the cello on Sundays", "I am learning Portuguese", "I cycle to the office"]
WORDS = "beehives sister cello portuguese cycle"  # each fact matches one of them
README = py_client.CLIENT / "README.md"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def document(stack: dict[str, Any]) -> dict[str, Any]:
    served: dict[str, Any] = httpx.get(stack["api_url"] + "/openapi.json", timeout=60).json()
    py_client.ensure_built(served)
    if str(py_client.CLIENT) not in sys.path:
        sys.path.insert(0, str(py_client.CLIENT))
    return served


@pytest.fixture(scope="module")
def strata(document: dict[str, Any]) -> Any:
    import strata_client

    return strata_client


class Operations:
    """The generated operations by name (``api.list_memories``), each its own module."""

    def __getattr__(self, name: str) -> Any:
        return importlib.import_module(f"strata_client.generated.api.default.{name}")


@pytest.fixture(scope="module")
def api(document: dict[str, Any]) -> Operations:
    return Operations()


@pytest.fixture(scope="module")
def models(document: dict[str, Any]) -> Any:
    from strata_client.generated import models

    return models


class TokenSource:
    """A signed-in user stand-in: the client asks it for the current ID token per request."""

    def __init__(self, uid: str) -> None:
        self.uid, self.requests = uid, 0

    def __call__(self) -> str:
        self.requests += 1
        return emulator_token(self.uid)


@pytest.fixture(scope="module")
def user(stack: dict[str, Any]) -> TokenSource:
    return TokenSource(f"py-{uuid.uuid4().hex[:12]}")


@pytest.fixture(scope="module")
def client(stack: dict[str, Any], strata: Any, user: TokenSource) -> Any:
    return strata.connect(stack["api_url"], id_token=user, timeout=60)


@pytest.fixture(scope="module")
def created(client: Any, strata: Any, api: Any, models: Any, user: TokenSource) -> list[Any]:
    """One memory created alone and the others in a batch (the first test checks the answers)."""
    one = strata.unwrap(api.create_memory.sync_detailed(
        client=client, body=models.MemoryCreate(content=FACTS[0], category="interesting")))
    batch = strata.unwrap(api.create_memories.sync_detailed(
        client=client, body=models.MemoryBatch(memories=[models.MemoryCreate(content=c) for c in FACTS[1:]])))
    return [one, *batch.memories]


def _eventually(probe: Callable[[], T], what: str) -> T:
    return wait_for(probe, timeout=120, interval=0.3, what=what)


def test_the_client_is_generated_from_the_served_document(document: dict[str, Any]) -> None:
    modules = {p.stem.replace("_", "") for p in (py_client.GENERATED / "api" / "default").glob("*.py")}
    for operations in document["paths"].values():
        for operation in operations.values():
            assert operation["operationId"].lower() in modules, operation["operationId"]


def _indexed(uid: str, memory_id: str) -> bool:
    """Whether the memory is in the keyword and the vector index (what a hybrid search reads)."""
    ctx, provider_id = Context(), ids.provider_id(uid, memory_id)
    return provider_id in ctx.keyword_index.provider_ids(uid) and provider_id in ctx.vector_index.provider_ids(uid)


def test_the_readme_examples_run_as_written(stack: dict[str, Any], strata: Any, http: httpx.Client,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's ``python`` blocks, unchanged, against the stack: connect and add, search,
    delete (and the error that follows), then the rest; expectations from docs/api.md."""
    blocks = PYTHON_BLOCK.findall(README.read_text())
    for call in ("strata.memories.add(", "strata.memories.search(", "strata.memories.delete(",
                 "strata.conversations.add(messages=", "strata.keys.create(", "strata.review.resolve("):
        assert any(call in block for block in blocks), f"the README shows no {call}"
    uid = f"py-readme-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("STRATA_API", stack["api_url"])
    monkeypatch.setenv("STRATA_TOKEN", emulator_token(uid))
    for name, value in server_key_env(uid).items():  # the server-key block's, made as docs/api.md says
        monkeypatch.setenv(name, value)
    namespace: dict[str, Any] = {"__name__": "readme"}
    printed = []
    for n, block in enumerate(blocks):
        if "memories.search(" in block:  # indexing is asynchronous, as the README says
            _eventually(lambda: _indexed(uid, namespace["memory"].id), "the README's memory to be indexed")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, f"{README}: python block {n + 1}", "exec"), namespace)  # noqa: S102 - the README
        printed.append(out.getvalue())
    added, found, deleted, rest, served = printed
    memory_id = namespace["memory"].id
    assert added.split() == [memory_id, "short_term"]
    assert "I grow chillies on the balcony" in found and float(found.split()[0]) > 0
    assert memory_id in deleted and "404 not_found req_" in deleted
    assert http.get(f"/v1/memories/{memory_id}", headers={"Authorization": f"Bearer {emulator_token(uid)}"}
                    ).status_code == 404
    lines = rest.splitlines()
    assert lines[0] == "public" and "I am learning Portuguese" in lines
    assert any(line in ("pending", "captured", "fell_back") for line in lines)
    assert "['my agent']" in lines  # listed before its revocation
    assert isinstance(namespace["strata"], strata.Strata)
    # The backend's memory is the user's, and its commits name the server key that made it.
    saved = namespace["saved"].id
    assert served.strip() == "I prefer window seats on long flights"
    assert http.get(f"/v1/memories/{saved}", headers={"Authorization": f"Bearer {emulator_token(uid)}"}
                    ).json()["content"] == "I prefer window seats on long flights"
    commits = [s.to_dict() for s in Context().client.collection(f"users/{uid}/memory_commits").stream()]
    made = [c for c in commits if saved in c.get("memory_ids", [])]
    assert made and all(c["credential"]["kind"] == "server_key" for c in made), made


def test_create_one_and_a_batch_with_the_users_token(created: list[Any], user: TokenSource) -> None:
    assert [m.content for m in created] == FACTS
    assert created[0].layer.value == "short_term" and created[0].visibility == "private"
    assert created[0].category == "interesting"
    assert user.requests >= 2  # asked per request, so a refreshed token is used


def test_list_with_paging_walks_every_memory_once(client: Any, strata: Any, api: Any, created: list[Any]) -> None:
    first = strata.unwrap(api.list_memories.sync_detailed(client=client, limit=2))
    assert len(first.memories) == 2 and isinstance(first.next_cursor, str) and first.next_cursor
    walked = [m.id for m in strata.all_memories(client, limit=2)]
    assert sorted(walked) == sorted(m.id for m in created)


def test_search_finds_a_projected_memory_and_pages_with_a_cursor(client: Any, strata: Any, api: Any,
                                                                  created: list[Any]) -> None:
    hits = _eventually(lambda: (page := strata.unwrap(api.search_memories.sync_detailed(client=client, q="beehives")))
                       and any(m.id == created[0].id for m in page.memories) and page, "a keyword hit for beehives")
    assert hits.memories[0].score > 0
    _eventually(lambda: len(strata.unwrap(api.search_memories.sync_detailed(client=client, q=WORDS, limit=10))
                            .memories) == len(FACTS), "every memory searchable")
    paged = list(strata.paginate(
        lambda cursor: api.search_memories.sync_detailed(client=client, q=WORDS, limit=1,
                                                         **({"cursor": cursor} if cursor else {})),
        lambda page: [m.id for m in page.memories]))
    assert sorted(paged) == sorted(m.id for m in created)


def test_edit_content_visibility_category_and_review_flag(client: Any, strata: Any, api: Any, models: Any,
                                                          created: list[Any]) -> None:
    memory_id = created[1].id
    edited = strata.unwrap(api.update_memory.sync_detailed(memory_id, client=client, body=models.MemoryEdit(
        content="My sister Ines lives in Lisbon", visibility=models.MemoryEditVisibilityType0.PUBLIC,
        category="system", reviewed=True)))
    assert (edited.content, edited.visibility, edited.category) == ("My sister Ines lives in Lisbon", "public", "system")
    assert edited.reviewed is True and edited.user_review is True and edited.edited is True
    read = strata.unwrap(api.get_memory.sync_detailed(memory_id, client=client))
    assert read.content == "My sister Ines lives in Lisbon"


def test_delete_a_memory_then_it_is_404(client: Any, strata: Any, api: Any, created: list[Any]) -> None:
    memory_id = created[2].id
    deleted = strata.unwrap(api.delete_memory.sync_detailed(memory_id, client=client))
    assert memory_id in deleted.deleted and deleted.receipt_id
    for call in (api.get_memory.sync_detailed, api.delete_memory.sync_detailed):
        with pytest.raises(strata.StrataError) as refused:
            strata.unwrap(call(memory_id, client=client))
        assert refused.value.status == 404


def test_capture_status_of_a_conversation_reaches_captured(client: Any, strata: Any, api: Any, models: Any) -> None:
    conversation_id = f"py-{int(time.time() * 1000):x}"
    made = strata.unwrap(api.create_conversation.sync_detailed(client=client, body=models.ConversationCreate(
        id=conversation_id, transcript_segments=[
            models.TranscriptSegment(id="s0", text="Where do you work these days?", speaker="SPEAKER_01"),
            models.TranscriptSegment(id="s1", text="I work as a nurse at the city hospital.", speaker="SPEAKER_00",
                                     is_user=True)])))
    assert (made.id, made.status) == (conversation_id, "completed")
    status = _eventually(
        lambda: (answer := strata.unwrap(api.get_conversation.sync_detailed(conversation_id, client=client)))
        and answer.state.value != "pending" and answer, "the capture")
    assert status.conversation_id == conversation_id
    assert status.state.value in ("captured", "fell_back") and status.memory_count >= 1


def test_a_personal_key_is_a_credential(stack: dict[str, Any], client: Any, strata: Any, api: Any, models: Any,
                                        created: list[Any]) -> None:
    key = strata.unwrap(api.create_key.sync_detailed(
        client=client, body=models.KeyCreate(name="python client", scope=models.KeyCreateScope.READ)))
    assert key.secret.startswith("strata_pk_")
    agent = strata.connect(stack["api_url"], key=key.secret)
    listed = strata.unwrap(api.list_mcp_memories.sync_detailed(client=agent))
    assert created[0].id in {m.id for m in listed}
    # The receipt of a delete made with the user's token, read with the key (read scope).
    gone = strata.unwrap(api.delete_memory.sync_detailed(created[3].id, client=client))
    receipt = strata.unwrap(api.get_deletion_receipt.sync_detailed(gone.receipt_id, client=agent))
    assert receipt.receipt_id == gone.receipt_id and receipt.memory_ids == [created[3].id]
    assert receipt.kind.value == "memory"
    strata.unwrap(api.revoke_key.sync_detailed(key.id, client=client))
    with pytest.raises(strata.StrataError) as refused:
        strata.unwrap(api.list_mcp_memories.sync_detailed(client=agent))
    assert refused.value.status == 401


def test_an_error_carries_its_request_id_in_body_and_header(stack: dict[str, Any], client: Any, strata: Any,
                                                            api: Any) -> None:
    answer = api.get_memory.sync_detailed("no-such-memory", client=client)
    assert answer.status_code == 404
    assert answer.parsed.error.request_id.startswith("req_")
    assert answer.headers["x-request-id"] == answer.parsed.error.request_id
    with pytest.raises(strata.StrataError) as bad:
        strata.unwrap(api.list_memories.sync_detailed(client=client, limit=0))
    assert (bad.value.status, bad.value.code) == (400, "validation_error")
    assert bad.value.request_id and bad.value.request_id.startswith("req_")
    anonymous = strata.connect(stack["api_url"], token="not-a-token")
    with pytest.raises(strata.StrataError) as refused:
        strata.unwrap(api.list_memories.sync_detailed(client=anonymous))
    assert refused.value.status == 401 and (refused.value.request_id or "").startswith("req_")
    with pytest.raises(ValueError):
        strata.connect(stack["api_url"], key="a", token="b")


def test_the_facade_over_the_same_user(stack: dict[str, Any], strata: Any, user: TokenSource,
                                       created: list[Any]) -> None:
    """``Strata`` answers what the routes answer: a hybrid search walked by its cursor, a restore
    of a fact nothing ended (409 ``not_ended``), an empty review queue, and a chat whose messages
    become the conversation's segments (the user's marked)."""
    with strata.Strata(stack["api_url"], id_token=user, timeout=60) as facade:
        _eventually(lambda: len(facade.memories.search(WORDS, limit=10).memories) >= 2, "hybrid hits")
        first = facade.memories.search(WORDS, limit=1)
        assert len(first.memories) == 1 and isinstance(first.next_cursor, str)
        second = facade.memories.search(WORDS, limit=1, cursor=first.next_cursor)
        assert len(second.memories) == 1 and second.memories[0].id != first.memories[0].id
        with pytest.raises(strata.StrataError) as refused:
            facade.memories.restore(created[0].id)
        assert (refused.value.status, refused.value.code) == (409, "not_ended")
        assert facade.review.list(limit=5).reviews == []
        with pytest.raises(ValueError):
            facade.conversations.add(messages=[{"role": "user"}])
        conversation_id = f"py-chat-{uuid.uuid4().hex[:8]}"
        made = facade.conversations.add(messages=[
            {"role": "assistant", "content": "What do you do on weekends?"},
            {"role": "user", "content": "I go sailing on the lake every Saturday."}], id=conversation_id)
        assert (made.id, made.status) == (conversation_id, "completed")
        stored = user_documents(Context(), user.uid)[f"conversations/{conversation_id}"]
        assert [(s["id"], s["text"], s["speaker"], s["is_user"]) for s in stored["transcript_segments"]] == [
            ("m0", "What do you do on weekends?", "SPEAKER_01", False),
            ("m1", "I go sailing on the lake every Saturday.", "SPEAKER_00", True)]
        status = _eventually(lambda: (answer := facade.conversations.get(conversation_id))
                             and answer.state.value != "pending" and answer, "the chat's capture")
        assert status.state.value in ("captured", "fell_back") and status.memory_count >= 1


class Throttling(ScriptedJSONServer):
    """Answers 429 (``Retry-After: 0``) to the first ``refusals`` POSTs, then what the API answers
    a resolved review; a ``slow`` one answers after two seconds."""

    def __init__(self, refusals: int, slow: bool = False) -> None:
        super().__init__()
        self.refusals, self.slow = refusals, slow

    def answer(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        if len(self.requests) <= self.refusals:
            return Reply(429, {"error": {"code": "rate_limited", "message": "slow down", "request_id": "req_1"}},
                         headers={"Retry-After": "0"})
        return Reply(200, {"review_id": path.split("/")[3]}, delay_s=2.0 if self.slow else 0.0)


def test_the_facade_retries_a_429_and_times_out(strata: Any) -> None:
    """A 429 means the API did nothing (docs/api.md): the facade sends the request again after its
    ``Retry-After``, at most ``retries`` times, then raises it; an attempt longer than ``timeout``
    is cut."""
    with Throttling(refusals=2) as server, strata.Strata(f"http://127.0.0.1:{server.port}", key="strata_pk_x") as api:
        assert api.review.resolve("r1", "accept").review_id == "r1"
        assert [r.path for r in server.requests] == ["/v1/review-queue/r1/resolve"] * 3
        assert server.requests[0].body == {"decision": "accept"}
    with Throttling(refusals=5) as server, strata.Strata(f"http://127.0.0.1:{server.port}", key="strata_pk_x",
                                                         retries=1) as api:
        with pytest.raises(strata.StrataError) as refused:
            api.review.resolve("r1", "reject")
        assert (refused.value.status, refused.value.code, refused.value.retry_after) == (429, "rate_limited", 0.0)
        assert len(server.requests) == 2
    with Throttling(refusals=0, slow=True) as server, strata.Strata(f"http://127.0.0.1:{server.port}",
                                                                     key="strata_pk_x", timeout=0.2) as api:
        started = time.monotonic()
        with pytest.raises(httpx.TimeoutException):
            api.review.resolve("r1", "accept")
        assert time.monotonic() - started < 1.5

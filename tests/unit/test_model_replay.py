"""The replay server of recorded model replies and ``strata model-replies``, with the project's own
extractor as the client (issue 43). The recordings are the hand-labelled fixture replies
(``tests/support/model_recordings.py``); expectations come from what the recordings say and from
the key's definition (the messages and the response schema, not the model, budget or temperature)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from core.adapters.llm import ChatClient, LLMExtractor
from core.domain.extraction import source_from_conversation
from core.errors import LLMUnavailable
from strata_dev import model_replies
from strata_dev.cli.main import main as strata
from strata_dev.localstack.model_replay import ReplayServer, request_key

if str(Path(__file__).resolve().parents[2]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support import model_recordings  # noqa: E402
from tests.support.firestore_checks import sample_conversations  # noqa: E402

CONVERSATION = "c-dinner-plans"


@pytest.fixture
def docs() -> dict[str, dict]:
    return {CONVERSATION: sample_conversations()[CONVERSATION]}


def _extractor(server: ReplayServer, model: str = "any-model", max_tokens: int = 4096) -> LLMExtractor:
    return LLMExtractor(ChatClient(server.base_url, model, timeout_s=5.0, max_tokens=max_tokens, auth="none"))


def test_the_key_is_the_messages_and_the_schema_only() -> None:
    body = {"model": "a", "max_tokens": 10, "temperature": 0, "messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "object"}}}}
    same = dict(body, model="b", max_tokens=99, temperature=1)
    assert request_key(same) == request_key(body)
    assert request_key(dict(body, messages=[{"role": "user", "content": "y"}])) != request_key(body)
    other_schema = {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "array"}}}
    assert request_key(dict(body, response_format=other_schema)) != request_key(body)


def test_a_recorded_request_is_answered_with_its_reply_whatever_the_model(tmp_path: Path, docs: dict) -> None:
    model_recordings.write(tmp_path / "replies", "fixture", model_recordings.extraction_recordings(docs))
    source = source_from_conversation("u1", CONVERSATION, docs[CONVERSATION])
    labelled = {m["content"] for m in model_recordings.fixture()["extraction"][CONVERSATION]["memories"]}
    with ReplayServer(tmp_path / "replies", tmp_path / "missing") as server:
        for model, budget in (("google/gemini-2.5-flash", 4096), ("another-model", 512)):
            result = _extractor(server, model, budget).extract(source)
            assert {m.content for m in result.memories} == labelled
        assert len(server.answered) == 2 and server.missed == []
    assert not (tmp_path / "missing").exists()


def test_recordings_in_sub_folders_are_found(tmp_path: Path, docs: dict) -> None:
    model_recordings.write(tmp_path / "replies" / "a-set", "fixture", model_recordings.extraction_recordings(docs))
    source = source_from_conversation("u1", CONVERSATION, docs[CONVERSATION])
    with ReplayServer(tmp_path / "replies", tmp_path / "missing") as server:
        assert len(_extractor(server).extract(source).memories) == 3 and server.missed == []


def test_an_unknown_request_is_unavailable_and_written_to_the_missing_folder(tmp_path: Path, docs: dict) -> None:
    source = source_from_conversation("u1", CONVERSATION, docs[CONVERSATION])
    with ReplayServer(tmp_path / "replies", tmp_path / "missing") as server, pytest.raises(LLMUnavailable) as err:
        _extractor(server).extract(source)
    (key,) = server.missed
    assert err.value.retryable and "HTTP 503" in err.value.message and key in err.value.message
    written = json.loads((tmp_path / "missing" / f"{key}.json").read_text())
    assert written["key"] == key and written["reply"] is None and written["schema_name"] == "strata_extraction"
    assert written["messages"][-1]["content"].endswith("I stopped eating meat about two years ago.\n"
                                                       "[2] Tom does, but he's allergic to peanuts, so no satay "
                                                       "this time.\n[3] Yeah, Tom works as a nurse at Saint "
                                                       "Mary's, night shifts mostly.\n[4] Ugh, the weather is so "
                                                       "grey today.")


def test_a_reply_recorded_while_the_server_runs_is_picked_up(tmp_path: Path, docs: dict) -> None:
    source = source_from_conversation("u1", CONVERSATION, docs[CONVERSATION])
    with ReplayServer(tmp_path / "replies", tmp_path / "missing") as server:
        with pytest.raises(LLMUnavailable):
            _extractor(server).extract(source)
        model_recordings.write(tmp_path / "replies", "late", model_recordings.extraction_recordings(docs))
        assert len(_extractor(server).extract(source).memories) == 3


def test_dump_writes_the_requests_the_server_keys(tmp_path: Path, docs: dict) -> None:
    """What ``dump`` writes is what the extractor posts: the keys match the server's own."""
    assert model_replies.dump(docs, tmp_path / "dump") == {"conversations": 1, "requests": 1}
    (dumped,) = json.loads((tmp_path / "dump" / f"{CONVERSATION}.json").read_text())
    with ReplayServer(tmp_path / "replies", tmp_path / "missing") as server, pytest.raises(LLMUnavailable):
        _extractor(server).extract(source_from_conversation("u1", CONVERSATION, docs[CONVERSATION]))
    assert server.missed == [dumped["key"]] and dumped["reply"] is None and dumped["window"] == 1


def test_the_missing_command_lists_unrecorded_requests_and_exits_1(tmp_path: Path, docs: dict,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    conversations = tmp_path / "conversations.json"
    conversations.write_text(json.dumps(list(docs.values())))
    args = ["model-replies", "missing", "--json", "--conversations", str(conversations),
            "--replies", str(tmp_path / "replies"), "--missing-dir", str(tmp_path / "missing")]
    assert strata(args) == 1
    (key,) = [model_replay_key for _, body in model_replies.extraction_requests(docs)
              for model_replay_key in [request_key(body)]]
    assert key in capsys.readouterr().out
    model_recordings.write(tmp_path / "replies", "fixture", model_recordings.extraction_recordings(docs))
    assert strata(args) == 0

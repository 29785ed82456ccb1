"""The OpenAI-compatible adapters against a real local HTTP server speaking the protocol."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.adapters.llm import (
    EXTRACTION_SCHEMA,
    ChatClient,
    LLMExtractor,
    LLMMalformedReply,
    LLMRejected,
    LLMRouter,
    LLMTimeout,
    LLMTruncatedReply,
    LLMUnavailable,
    build_extractor,
    build_router,
)
from core.adapters.rules import RuleRouter, sensitivity
from core.adapters.rules.extractor import RuleExtractor
from core.config import Settings
from core.domain.extraction import ExtractionSource, Segment, ground
from core.domain.routing import Neighbour, RouteCandidate
from core.errors import PermanentError, RetryableError

# `tests.support` is imported from the repository root, which plain `pytest` (unlike `python -m
# pytest`) does not put on sys.path when tests/ has no __init__.py.
if str(Path(__file__).resolve().parents[2]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.openai_server import (  # noqa: E402
    CHAT_PATH,
    EMBEDDINGS_PATH,
    OpenAIProtocolServer,
    Reply,
    chat_reply,
    deterministic_embedding,
    error_reply,
)

SOURCE = ExtractionSource("u1", "c1", (
    Segment("s0", "Does your brother eat meat?", "SPEAKER_01", False),
    Segment("s1", "Tom does, but he's allergic to peanuts. My pin is 4417.", "SPEAKER_00", True),
    Segment("s2", "I moved to Lisbon in March.", "SPEAKER_00", True),
))
GOOD = {
    "memories": [
        {"content": "Tom is allergic to peanuts", "kind": "fact", "category": "core", "subject": "third_party",
         "subject_label": "Tom", "quotes": ["he's allergic to peanuts"], "sensitivity": []},
        {"content": "User moved to Lisbon in March", "kind": "fact", "category": "lifestyle", "subject": "user",
         "subject_label": None, "quotes": ["I moved to Lisbon in March"], "sensitivity": []},
    ],
    "action_items": [{"description": "Book flights", "quote": "I moved to Lisbon", "due": None}],
    "goals": [],
}


@pytest.fixture
def server() -> Iterator[OpenAIProtocolServer]:
    with OpenAIProtocolServer() as srv:
        yield srv


def client(server: OpenAIProtocolServer, timeout_s: float = 5.0) -> ChatClient:
    return ChatClient(server.base_url, "test-model", api_key="k-test", timeout_s=timeout_s)


def test_valid_extraction_reply_is_parsed_and_grounds(server: OpenAIProtocolServer) -> None:
    server.script_chat(chat_reply(GOOD))
    result = LLMExtractor(client(server)).extract(SOURCE)
    assert [m.content for m in result.memories] == ["Tom is allergic to peanuts", "User moved to Lisbon in March"]
    assert result.memories[0].subject == "third_party" and result.memories[0].subject_label == "Tom"
    assert "health" in result.memories[0].sensitivity  # labelled locally even if the model says nothing
    assert result.extractor_id == "openai" and result.extractor_version == "1:test-model"
    assert [a.description for a in result.action_items] == ["Book flights"]
    grounded = ground(SOURCE, result, sensitivity=sensitivity)
    assert [g.quote_refs[0].segment_id for g in grounded] == ["s1", "s2"]

    (request,) = server.requests_to(CHAT_PATH)
    assert request.headers.get("Authorization") == "Bearer k-test"
    body = request.body
    assert body["model"] == "test-model"
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == EXTRACTION_SCHEMA
    prompt = body["messages"][-1]["content"]
    assert "[1] Tom does" in prompt and "[2] I moved to Lisbon" in prompt
    assert "Does your brother" not in prompt  # only the owner's segments
    assert "4417" not in prompt and "[REDACTED]" in prompt  # secrets never leave the process


def test_secret_and_redacted_candidates_are_dropped(server: OpenAIProtocolServer) -> None:
    reply = {"memories": [
        {"content": "User's PIN is 4417", "kind": "fact", "category": "core", "subject": "user",
         "subject_label": None, "quotes": ["My pin is 4417"], "sensitivity": ["credential"]},
        {"content": "User has a PIN", "kind": "fact", "category": "core", "subject": "user",
         "subject_label": None, "quotes": ["My pin is [REDACTED]"], "sensitivity": []},
    ], "action_items": [], "goals": []}
    server.script_chat(chat_reply(reply))
    assert LLMExtractor(client(server)).extract(SOURCE).memories == ()


def test_empty_extraction_is_authoritative(server: OpenAIProtocolServer) -> None:
    server.script_chat(chat_reply({"memories": [], "action_items": [], "goals": []}))
    result = LLMExtractor(client(server)).extract(SOURCE)
    assert (result.memories, result.action_items, result.goals) == ((), (), ())


def test_no_owner_segments_means_no_request(server: OpenAIProtocolServer) -> None:
    source = ExtractionSource("u", "c", (Segment("s", "Hello there", "B", False),))
    assert LLMExtractor(client(server)).extract(source).memories == ()
    assert server.requests_to(CHAT_PATH) == []


@pytest.mark.parametrize("reply", [
    chat_reply("{not json"),
    chat_reply('{"memories": []}'),  # missing keys
    chat_reply({"memories": [{"content": "x"}], "action_items": [], "goals": []}),
    chat_reply({**GOOD, "memories": [{**GOOD["memories"][0], "kind": "opinion"}]}),
    chat_reply({**GOOD, "memories": [{**GOOD["memories"][0], "quotes": []}]}),
    chat_reply({**GOOD, "memories": [{**GOOD["memories"][0], "category": "gossip"}]}),
    chat_reply({**GOOD, "extra": 1}),
    Reply(body="<html>bad gateway</html>"),
    Reply(body={"choices": []}),
    chat_reply(GOOD, finish_reason="content_filter"),
])
def test_malformed_replies_raise_retryable(server: OpenAIProtocolServer, reply: Reply) -> None:
    server.script_chat(reply)
    with pytest.raises(LLMMalformedReply) as info:
        LLMExtractor(client(server)).extract(SOURCE)
    assert isinstance(info.value, RetryableError) and info.value.retryable


def test_truncated_reply_raises(server: OpenAIProtocolServer) -> None:
    server.script_chat(chat_reply('{"memories": [{"content": "Tom is', finish_reason="length"))
    with pytest.raises(LLMTruncatedReply):
        LLMExtractor(client(server)).extract(SOURCE)
    # even a complete-looking body is refused when the provider says it was cut
    server.script_chat(chat_reply(GOOD, finish_reason="length"))
    with pytest.raises(LLMTruncatedReply):
        LLMExtractor(client(server)).extract(SOURCE)


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_server_errors_are_retryable(server: OpenAIProtocolServer, status: int) -> None:
    server.script_chat(error_reply(status))
    with pytest.raises(LLMUnavailable) as info:
        LLMExtractor(client(server)).extract(SOURCE)
    assert info.value.retryable and info.value.status == 503


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_permanent(server: OpenAIProtocolServer, status: int) -> None:
    server.script_chat(error_reply(status))
    with pytest.raises(LLMRejected) as info:
        LLMExtractor(client(server)).extract(SOURCE)
    assert isinstance(info.value, PermanentError) and not info.value.retryable


def test_model_refusal_is_permanent(server: OpenAIProtocolServer) -> None:
    reply = chat_reply(GOOD)
    reply.body["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "no"}
    server.script_chat(reply)
    with pytest.raises(LLMRejected):
        LLMExtractor(client(server)).extract(SOURCE)


def test_slow_reply_times_out(server: OpenAIProtocolServer) -> None:
    # The reply would arrive (and parse) after 5 s; a 0.3 s client timeout must surface as
    # LLMTimeout instead — the exception itself shows the timeout applied, no clock needed.
    server.script_chat(chat_reply(GOOD, delay_s=5.0))
    with pytest.raises(LLMTimeout) as info:
        LLMExtractor(client(server, timeout_s=0.3)).extract(SOURCE)
    assert info.value.retryable


def test_connection_refused_is_retryable() -> None:
    with OpenAIProtocolServer() as srv:
        url = srv.base_url
    with pytest.raises(LLMUnavailable):
        LLMExtractor(ChatClient(url, "m", timeout_s=1.0)).extract(SOURCE)


# --------------------------------------------------------------------------- router
def candidates() -> list[RouteCandidate]:
    common = dict(subject="user", subject_label=None, category="core", kind="fact", source_ids=("c1",),
                  independent_sources=1, manually_added=False, expired=False)
    return [
        RouteCandidate(ref="i0", content="User moved to Lisbon in March", restricted=False,
                       neighbours=(Neighbour("n0", "User lives in Seattle", "long_term"),
                                   Neighbour("n1", "User's blood pressure is high", "long_term", restricted=True)),
                       **common),
        RouteCandidate(ref="i1", content="User's blood pressure is a bit high", restricted=True, **common),
    ]


def test_router_returns_parsed_proposals_and_keeps_restricted_local(server: OpenAIProtocolServer) -> None:
    server.script_chat(chat_reply({"proposals": [
        {"item_ref": "i0", "route": "promote", "reason": "moved", "duplicate_of": None, "supersedes": ["n0"]},
        {"item_ref": "zz", "route": "archive", "reason": "unknown ref kept as-is", "duplicate_of": "n9",
         "supersedes": []},
    ]}))
    router = LLMRouter(client(server))
    proposals = router.route(candidates())
    by_ref = {p.item_ref: p for p in proposals}
    assert by_ref["i0"].route == "promote" and by_ref["i0"].supersedes == ("n0",)
    assert by_ref["zz"].duplicate_of == "n9"  # returned as-is; the server validates refs
    assert by_ref["i1"] == RuleRouter().route([candidates()[1]])[0]  # restricted: routed locally
    (request,) = server.requests_to(CHAT_PATH)
    sent = request.body["messages"][-1]["content"]
    assert "blood pressure" not in sent  # neither the restricted item nor the restricted neighbour
    assert request.body["response_format"]["json_schema"]["strict"] is True


def test_router_with_only_restricted_items_makes_no_request(server: OpenAIProtocolServer) -> None:
    assert [p.item_ref for p in LLMRouter(client(server)).route(candidates()[1:])] == ["i1"]
    assert server.requests_to(CHAT_PATH) == []


@pytest.mark.parametrize("reply", [
    chat_reply("nope"),
    chat_reply({"proposals": [{"item_ref": "i0", "route": "maybe", "reason": "", "duplicate_of": None,
                               "supersedes": []}]}),
    chat_reply({"proposals": [{"item_ref": "i0", "route": "promote"}]}),
    chat_reply({"routes": []}),
])
def test_router_malformed_replies_raise(server: OpenAIProtocolServer, reply: Reply) -> None:
    server.script_chat(reply)
    with pytest.raises(LLMMalformedReply):
        LLMRouter(client(server)).route(candidates())


def test_router_truncated_and_timeout(server: OpenAIProtocolServer) -> None:
    server.script_chat(chat_reply('{"proposals": [', finish_reason="length"), chat_reply({"proposals": []},
                                                                                        delay_s=5.0))
    with pytest.raises(LLMTruncatedReply):
        LLMRouter(client(server)).route(candidates())
    with pytest.raises(LLMTimeout):
        LLMRouter(client(server, timeout_s=0.3)).route(candidates())


# --------------------------------------------------------------------------- factories and server
def test_factories(server: OpenAIProtocolServer) -> None:
    assert isinstance(build_extractor(Settings()), RuleExtractor)
    assert isinstance(build_router(Settings()), RuleRouter)
    settings = Settings(extractor="openai", router="openai", llm_base_url=server.base_url, llm_model="m",
                        llm_timeout_s=2.0)
    assert isinstance(build_extractor(settings), LLMExtractor)
    assert isinstance(build_router(settings), LLMRouter)
    with pytest.raises(PermanentError):
        build_extractor(Settings(extractor="openai"))  # no base URL / model
    with pytest.raises(PermanentError):
        build_router(Settings.unchecked(router="magic"))  # core.config refuses it at start


def test_embeddings_route_is_generic(server: OpenAIProtocolServer) -> None:
    response = httpx.post(f"{server.base_url}/embeddings", json={"model": "e", "input": ["a", "b"], "dimensions": 8})
    data = response.json()["data"]
    assert [d["index"] for d in data] == [0, 1]
    assert data[0]["embedding"] == deterministic_embedding("a", 8)
    assert len(data[1]["embedding"]) == 8
    server.script_embeddings(error_reply(503))
    assert httpx.post(f"{server.base_url}/embeddings", json={"input": "x"}).status_code == 503
    assert len(server.requests_to(EMBEDDINGS_PATH)) == 2


# --------------------------------------------------------------------------- compatibility (issue 29)
def test_every_request_is_bounded_by_max_tokens_at_temperature_zero(server: OpenAIProtocolServer) -> None:
    server.script_chat(chat_reply(GOOD))
    LLMExtractor(ChatClient(server.base_url, "m", timeout_s=5, max_tokens=321)).extract(SOURCE)
    (request,) = server.requests_to(CHAT_PATH)
    assert request.body["max_tokens"] == 321 and request.body["temperature"] == 0


@pytest.mark.parametrize("mode", ["json_object", "none"])
def test_without_strict_schema_the_schema_travels_in_the_prompt_and_the_reply_is_validated(
        server: OpenAIProtocolServer, mode: str) -> None:
    import json

    llm = LLMExtractor(ChatClient(server.base_url, "m", timeout_s=5, response_format=mode, send_temperature=False))
    server.script_chat(chat_reply("```json\n" + json.dumps(GOOD) + "\n```"))  # a fence, as such models write
    result = llm.extract(SOURCE)
    assert [m.content for m in result.memories] == ["Tom is allergic to peanuts", "User moved to Lisbon in March"]
    (request,) = server.requests_to(CHAT_PATH)
    assert "temperature" not in request.body
    if mode == "json_object":
        assert request.body["response_format"] == {"type": "json_object"}
    else:
        assert "response_format" not in request.body
    assert json.dumps(EXTRACTION_SCHEMA, sort_keys=True) in request.body["messages"][0]["content"]
    # the same validation as with a strict schema: a reply of the wrong shape is refused
    server.script_chat(chat_reply({"memories": [{"content": "x"}], "action_items": [], "goals": []}))
    with pytest.raises(LLMMalformedReply):
        llm.extract(SOURCE)


def test_an_unknown_response_format_is_a_configuration_error() -> None:
    with pytest.raises(LLMRejected):
        ChatClient("http://127.0.0.1:9", "m", response_format="xml")


def test_a_4xx_carries_its_status_and_the_providers_words(server: OpenAIProtocolServer) -> None:
    server.script_chat(error_reply(400, "temperature is not supported by this model"))
    with pytest.raises(LLMRejected) as refused:
        LLMExtractor(client(server)).extract(SOURCE)
    assert "HTTP 400" in refused.value.message and "temperature is not supported" in refused.value.message


def test_the_router_uses_the_same_compatibility_settings(server: OpenAIProtocolServer) -> None:
    settings = Settings(router="openai", llm_base_url=server.base_url, llm_model="m", llm_max_tokens=77,
                        llm_response_format="json_object", llm_send_temperature=False)
    router = build_router(settings)
    server.script_chat(chat_reply({"proposals": [
        {"item_ref": "i0", "route": "promote", "reason": "durable", "duplicate_of": None, "supersedes": []}]}))
    candidate = RouteCandidate(ref="i0", content="User moved to Lisbon", subject="user", subject_label=None,
                               category="lifestyle", kind="fact", source_ids=("c1",), independent_sources=1,
                               manually_added=False, expired=False, restricted=False, neighbours=())
    assert [p.route for p in router.route([candidate])] == ["promote"]
    (request,) = server.requests_to(CHAT_PATH)
    assert request.body["max_tokens"] == 77 and "temperature" not in request.body
    assert request.body["response_format"] == {"type": "json_object"}


def test_windows_are_whole_segments_within_both_bounds() -> None:
    from core.adapters.llm import windows

    segments = [Segment(f"s{i}", "x" * length, "S", True) for i, length in enumerate([5, 5, 5, 30, 5, 5])]
    assert [[s.id for s in w] for w in windows(segments, 2, 1_000)] == [["s0", "s1"], ["s2", "s3"], ["s4", "s5"]]
    # 12 characters at most: a longer segment is a window of its own, never cut
    assert [[s.id for s in w] for w in windows(segments, 10, 12)] == [["s0", "s1"], ["s2"], ["s3"], ["s4", "s5"]]
    assert windows([], 3, 10) == []


def test_a_long_transcript_is_one_request_per_window_and_merged(server: OpenAIProtocolServer) -> None:
    owner = tuple(Segment(f"s{i}", f"I keep hive number {i} behind the shed.", "S", True) for i in range(5))
    source = ExtractionSource("u1", "c1", owner)
    same = {"content": "User keeps bees", "kind": "fact", "category": "hobbies", "subject": "user",
            "subject_label": None, "sensitivity": []}
    server.script_chat(chat_reply({"memories": [dict(same, quotes=["hive number 0"])], "action_items": [], "goals": []}),
                       chat_reply({"memories": [dict(same, quotes=["hive number 2"])], "action_items": [], "goals": []}),
                       chat_reply({"memories": [], "action_items": [], "goals": []}))
    result = LLMExtractor(client(server), window_segments=2).extract(source)
    prompts = [r.body["messages"][-1]["content"] for r in server.requests_to(CHAT_PATH)]
    assert len(prompts) == 3 and "[1] I keep hive number 4" in prompts[2] and "[2]" not in prompts[2]
    (memory,) = result.memories  # the same fact from two windows is one candidate citing both
    assert memory.quotes == ("hive number 0", "hive number 2")
    assert [r.segment_id for g in ground(source, result, sensitivity=sensitivity) for r in g.quote_refs] == ["s0", "s2"]


def test_router_ends_a_restricted_neighbour_by_the_rule_alone(server: OpenAIProtocolServer) -> None:
    """A restricted neighbour is never shown to the model, so the model cannot propose its ending:
    the ending rule's own reading of the two slots proposes it (and only for a promotion)."""
    from datetime import UTC, datetime

    from core.domain.slots import Slot

    common = dict(subject="user", subject_label=None, category="core", kind="fact", source_ids=("c1",),
                  independent_sources=1, manually_added=False, expired=False, restricted=False)
    hidden = Neighbour("n0", "User lives in Leeds on a rent they cannot afford", "long_term", restricted=True,
                       subject="user", slot=Slot(attribute="residence", value="Leeds"),
                       said=datetime(2025, 1, 1, tzinfo=UTC))
    other = Neighbour("n1", "User drives a Volvo", "long_term", restricted=True, subject="user",
                      slot=Slot(attribute="vehicle", value="Volvo"), said=datetime(2025, 1, 1, tzinfo=UTC))
    moved = RouteCandidate(ref="i0", content="User lives in York", neighbours=(hidden, other),
                           slot=Slot(attribute="residence", value="York"), said=datetime(2026, 1, 1, tzinfo=UTC),
                           **common)
    kept = RouteCandidate(ref="i1", content="User may move to York", neighbours=(hidden,),
                          slot=Slot(attribute="residence", value="York"), said=datetime(2026, 1, 1, tzinfo=UTC),
                          **common)
    server.script_chat(chat_reply({"proposals": [
        {"item_ref": "i0", "route": "promote", "reason": "moved", "duplicate_of": None, "supersedes": []},
        {"item_ref": "i1", "route": "review", "reason": "unsure", "duplicate_of": None, "supersedes": []},
    ]}))
    by_ref = {p.item_ref: p for p in LLMRouter(client(server)).route([moved, kept])}
    assert by_ref["i0"].supersedes == ("n0",) and by_ref["i1"].supersedes == ()
    (request,) = server.requests_to(CHAT_PATH)
    assert "Leeds" not in request.body["messages"][-1]["content"]

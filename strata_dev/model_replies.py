"""``strata model-replies``: the requests the model path sends, for recording replies to them.

``dump`` writes the exact chat requests the project's own :class:`~core.adapters.llm.LLMExtractor`
sends for each conversation (one per window of owner segments, with the current prompt, schema and
``STRATA_LLM_RESPONSE_FORMAT``), one file per conversation, each entry a recording template of
:mod:`strata_dev.localstack.model_replay` (``key``, ``messages``, ``response_format``, ``"reply":
null``, ``"recorded_by": null``). A person or a model that sees only the request writes ``reply`` and
``recorded_by`` and moves the entry into the replies folder. The requests are captured at the
client's transport, so they are byte for byte what a deployment would post.

``dump --routing`` adds the routing requests. They depend on what extraction stored and on the
Long-term memories already there, so they are made by running the model path: on the local stack
(the running one, or a private one started for it), the conversations are captured in order for one
user, the extractor answered from the recorded replies (a conversation whose extraction is not
recorded yet is skipped and named), each followed by a consolidation pass whose model router's
requests are recorded (:class:`RecordingRouter`): answered from a recorded reply when there is one,
else by the rule router's proposals as a stand-in. The requests after a stand-in follow from it, so
record, dump again, and repeat until ``missing`` is empty. A run of the model path on the replay
server (``strata stack up --model-replay``, the e2e test) writes what it had no reply for to the
missing folder too.

``missing`` lists what has no recorded reply: the current extraction requests of the conversations
(after a prompt or schema change, all of them) and the requests in the missing folder still without
a reply. It exits 1 when there is any.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from strata_dev.localstack import model_replay


def conversations(source: str | None) -> dict[str, dict[str, Any]]:
    """Conversation documents by id: the samples, or a JSON file (a list of documents with ``id``,
    or an object of documents by id), or a folder of such files."""
    if not source:
        from strata_dev.samples import load_samples

        return {doc.get("id") or stem: doc for stem, doc in load_samples().items()}
    path = Path(source)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    found: dict[str, dict[str, Any]] = {}
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        if isinstance(data, list):
            found.update({str(doc["id"]): doc for doc in data})
        elif isinstance(data, dict) and "transcript_segments" in data:
            found[str(data.get("id") or file.stem)] = data
        elif isinstance(data, dict):
            found.update({str(k): dict(v, id=v.get("id", k)) for k, v in data.items()})
    return found


def _empty_reply(schema: dict[str, Any]) -> dict[str, Any]:
    """A reply with every required list empty (and nothing else): lets every window be sent."""
    properties = schema.get("properties") or {}
    return {name: [] if (properties.get(name) or {}).get("type") == "array" else None
            for name in schema.get("required") or []}


def extraction_requests(docs: dict[str, dict[str, Any]], settings: Any | None = None) -> Iterator[tuple[str, dict]]:
    """(conversation id, request body) for every chat request extraction sends, in order."""
    import httpx

    from core.adapters.llm import EXTRACTION_SCHEMA, ChatClient, LLMExtractor
    from core.config import load
    from core.domain.extraction import source_from_conversation

    settings = settings or load()
    sent: list[dict[str, Any]] = []

    def capture(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        content = json.dumps(_empty_reply(EXTRACTION_SCHEMA))
        return httpx.Response(200, json={"choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": {"role": "assistant", "content": content}}]})

    client = ChatClient("http://dump.invalid/v1", model_replay.MODEL, transport=httpx.MockTransport(capture),
                        max_tokens=settings.llm_max_tokens, response_format=settings.llm_response_format,
                        send_temperature=settings.llm_send_temperature, auth="none")
    extractor = LLMExtractor(client, window_segments=settings.llm_window_segments,
                             window_chars=settings.llm_window_chars)
    for conversation_id, doc in docs.items():
        sent.clear()
        extractor.extract(source_from_conversation("dump", conversation_id, doc))
        for body in list(sent):
            yield conversation_id, body


def dump(docs: dict[str, dict[str, Any]], out: Path, settings: Any | None = None, *,
         routing_replies: Path | None = None) -> dict[str, Any]:
    """Write ``out/<conversation id>.json`` (a list of templates, one per extraction window) and, with
    ``routing_replies`` (the recorded replies to run the model path on), ``out/routing-<conversation
    id>.json`` (one per router request of the pass after that conversation); the counts."""
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, Any] = {}
    groups = [("", "window", list(extraction_requests(docs, settings)))]
    if routing_replies is not None:
        groups.append(("routing-", "batch", routing(docs, routing_replies, counts)))
    for prefix, position, requests in groups:
        by_conversation: dict[str, list[dict[str, Any]]] = {}
        for conversation_id, body in requests:
            entries = by_conversation.setdefault(conversation_id, [])
            entries.append({**model_replay.template(body), "conversation_id": conversation_id,
                            position: len(entries) + 1})
        for conversation_id, entries in by_conversation.items():
            (out / f"{prefix}{conversation_id}.json").write_text(
                json.dumps(entries, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        total = sum(map(len, by_conversation.values()))
        if prefix:
            counts["routing_requests"] = total
        else:
            counts.update(conversations=len(by_conversation), requests=total)
    return counts


def routing(docs: dict[str, dict[str, Any]], replies: Path, counts: dict[str, Any]) -> list[tuple[str, dict]]:
    requests, skipped = routing_requests(docs, replies)
    counts["skipped_without_extraction_replies"] = skipped
    return requests


def missing(docs: dict[str, dict[str, Any]] | None, replies: Path, missing_dir: Path | None,
            settings: Any | None = None) -> list[dict[str, Any]]:
    """Requests without a recorded reply: the conversations' extraction requests, then the ones a
    replay run wrote to ``missing_dir``; each with its key, schema and where it comes from."""
    recorded = model_replay.load_replies(replies)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for conversation_id, body in extraction_requests(docs or {}, settings):
        key = model_replay.request_key(body)
        if key not in recorded and key not in seen:
            seen.add(key)
            rows.append({"key": key, "schema_name": model_replay.template(body)["schema_name"],
                         "from": f"conversation {conversation_id}"})
    if missing_dir is not None:
        for entry in model_replay.read_entries(missing_dir):
            if entry["key"] not in recorded and entry["key"] not in seen:
                seen.add(entry["key"])
                rows.append({"key": entry["key"], "schema_name": entry.get("schema_name"),
                             "from": f"{missing_dir}/{entry['key']}.json"})
    return rows


class RecordingRouter:
    """The model router's exact request for each batch, recorded; answered from ``recorded`` (replies
    by request key) when the request has a reply, else with the rule router's proposals for the
    batch (the restricted items are routed locally, as the model router does)."""

    def __init__(self, recorded: dict[str, dict[str, Any]] | None = None) -> None:
        import httpx

        from core.adapters.llm import ChatClient, LLMRouter
        from core.adapters.rules import RuleRouter
        from core.config import load

        self.requests: list[dict[str, Any]] = []
        self.recorded = recorded or {}
        self._rules = RuleRouter()
        self._answer: list[Any] = []
        settings = load()

        def answer(request: httpx.Request) -> httpx.Response:
            body = json.loads(request.content)
            self.requests.append(body)
            entry = self.recorded.get(model_replay.request_key(body))
            content = json.dumps(entry["reply"] if entry else {"proposals": self._answer})
            return httpx.Response(200, json={"choices": [{"index": 0, "finish_reason": "stop",
                                                          "message": {"role": "assistant", "content": content}}]})

        client = ChatClient("http://record.invalid/v1", model_replay.MODEL, transport=httpx.MockTransport(answer),
                            auth="none", max_tokens=settings.llm_max_tokens,
                            response_format=settings.llm_response_format,
                            send_temperature=settings.llm_send_temperature)
        self._model = LLMRouter(client, self._rules)
        self.router_id = self._model.router_id
        self.router_version = self._model.router_version

    def route(self, candidates: list[Any]) -> list[Any]:
        remote = [c for c in candidates if not c.restricted]
        self._answer = [{"item_ref": p.item_ref, "route": p.route, "reason": p.reason, "duplicate_of": p.duplicate_of,
                         "supersedes": list(p.supersedes)} for p in self._rules.route(remote)]
        return self._model.route(candidates)


DUMP_UID = "model-replies-dump"


def routing_requests(docs: dict[str, dict[str, Any]], replies: Path) -> tuple[list[tuple[str, dict]], list[str]]:
    """(conversation id, request) for every routing request of the conversations captured in order
    for one user (:data:`DUMP_UID`) on a private local stack, and the conversations skipped for want
    of extraction replies. The user is fixed because memory ids, and so the order of a request's
    items, derive from it: a test that replays the same conversations for the same user on the
    stack sends the same requests."""
    from core.adapters.llm import ChatClient, LLMExtractor
    from core.config import load
    from core.services import capture, consolidation
    from strata_dev.bench import harness

    recorded = model_replay.load_replies(replies)
    ready = {cid: doc for cid, doc in docs.items()}
    skipped = sorted({cid for cid, body in extraction_requests(docs) if model_replay.request_key(body) not in recorded})
    for cid in skipped:
        ready.pop(cid)
    out: list[tuple[str, dict[str, Any]]] = []
    with harness.local_stack(), model_replay.ReplayServer(replies, replies.parent / "model_replies_missing") as server:
        settings = load()
        router = RecordingRouter(recorded)
        extractor = LLMExtractor(ChatClient(server.base_url, model_replay.MODEL, auth="none",
                                            max_tokens=settings.llm_max_tokens,
                                            response_format=settings.llm_response_format,
                                            send_temperature=settings.llm_send_temperature),
                                 window_segments=settings.llm_window_segments, window_chars=settings.llm_window_chars)
        ctx = harness.context(extractor=extractor, router=router)
        uid = DUMP_UID
        for conversation_id, doc in ready.items():
            capture.capture_conversation(ctx, uid, conversation_id, doc)
            before = len(router.requests)
            consolidation.run_pass(ctx, uid, settle_outbox=False, router=router)
            out += [(conversation_id, body) for body in router.requests[before:]]
    return out, skipped


__all__ = ["DUMP_UID", "RecordingRouter", "conversations", "dump", "extraction_requests", "missing", "routing_requests"]

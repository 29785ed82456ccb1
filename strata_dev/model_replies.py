"""``strata model-replies``: the requests the model path sends, for recording replies to them.

``dump`` writes the exact chat requests the project's own :class:`~core.adapters.llm.LLMExtractor`
sends for each conversation (one per window of owner segments, with the current prompt, schema and
``STRATA_LLM_RESPONSE_FORMAT``), one file per conversation, each entry a recording template of
:mod:`strata_dev.localstack.model_replay` (``key``, ``messages``, ``response_format``, ``"reply":
null``, ``"recorded_by": null``). A person or a model that sees only the request writes ``reply`` and
``recorded_by`` and moves the entry into the replies folder. The requests are captured at the
client's transport, so they are byte for byte what a deployment would post.

Routing requests depend on what extraction stored and on the Long-term neighbours, so they are not
dumped here: a run of the model path on the replay server (``strata stack up --model-replay``, the
e2e test) writes every request it had no reply for to the missing folder, routing ones included.

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


def dump(docs: dict[str, dict[str, Any]], out: Path, settings: Any | None = None) -> dict[str, int]:
    """Write ``out/<conversation id>.json`` (a list of templates, one per request); the counts."""
    out.mkdir(parents=True, exist_ok=True)
    by_conversation: dict[str, list[dict[str, Any]]] = {}
    for conversation_id, body in extraction_requests(docs, settings):
        entries = by_conversation.setdefault(conversation_id, [])
        entries.append({**model_replay.template(body), "conversation_id": conversation_id, "window": len(entries) + 1})
    for conversation_id, entries in by_conversation.items():
        (out / f"{conversation_id}.json").write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n",
                                                     encoding="utf-8")
    return {"conversations": len(by_conversation), "requests": sum(map(len, by_conversation.values()))}


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


__all__ = ["conversations", "dump", "extraction_requests", "missing"]

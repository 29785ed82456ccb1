"""Issue 5 on the whole local stack: the outbox drained into Typesense, Pinecone and the graph.

* after the sample conversations (written to Firestore: the trigger captures them), consolidation
  (the consolidate function over HTTP) and a drain, each provider holds exactly the ``memproj:`` ids
  of the user's default-visible, unrestricted memories, and keyword / vector search over HTTP find
  the memory a query is about;
* Typesense stopped during a drain: events are retried with growing backoff and stay in the outbox;
  after a restart the providers converge with 0 missing and 0 extra;
* the same Pub/Sub push delivered 3 times changes nothing;
* an expired event lease is reclaimed and the provider repaired to the current state;
* provider-side logs (a logging proxy in front of Typesense, the Pinecone endpoint's
  ``requests.log``) prove that no restricted memory's content or vector was ever sent;
* the knowledge-graph page is bounded and closed, and its delete / rebuild answer 409.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.adapters.typesense_index import TypesenseIndex
from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain import ids
from core.services import consolidation, projection
from strata_dev.localstack import faults
from tests.support import trace

pytestmark = pytest.mark.e2e

SAMPLES = ("c-morning-standup", "c-dinner-plans", "c-doctor", "c-bank-call", "c-empty-chatter")
RESTRICTED = ("User's blood pressure is a bit high, according to their doctor",
              "User wants to raise their card limit because they're buying a used car next month "
              "(next month: December 2026)")
RESTRICTED_MARKERS = ("blood pressure", "card limit", "allergic to peanuts")


def _uid() -> str:
    return f"u-proj-{uuid.uuid4().hex[:10]}"


def _headers(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, 'demo-strata')}"}


def _wait(predicate: Any, timeout_s: float, what: str, interval: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(interval)


def _pinecone_log(stack: dict[str, Any]) -> list[dict[str, Any]]:
    path = Path(stack["state_dir"]) / "data" / "pinecone" / "requests.log"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _assert_nothing_restricted_in_pinecone_log(stack: dict[str, Any], ctx: Context) -> int:
    """No request the endpoint ever received carries restricted content or a restricted vector."""
    embeddings = ctx.embedder.embed(list(RESTRICTED))
    sent_vectors = 0
    for line in _pinecone_log(stack):
        raw = json.dumps(line["body"]).casefold()
        assert not any(m in raw for m in RESTRICTED_MARKERS), f"restricted text sent to pinecone: {line}"
        body = line["body"] if isinstance(line["body"], dict) else {}
        candidates = [v.get("values") or [] for v in body.get("vectors") or [] if isinstance(v, dict)]
        if body.get("vector"):
            candidates.append(body["vector"])
        for values in candidates:
            sent_vectors += 1
            for content, embedding in zip(RESTRICTED, embeddings, strict=True):
                assert not trace.same_vector(values, embedding), f"vector of {content!r} was sent: {line['path']}"
    return sent_vectors


# ------------------------------------------------------------------------------ the sample user
@pytest.fixture(scope="module")
def sample_user(stack: dict[str, Any]) -> dict[str, Any]:
    """The sample conversations written to Firestore, captured by the trigger, consolidated by the
    consolidate function and drained."""
    ctx = Context()
    uid = _uid()
    for name in SAMPLES:
        doc = trace.sample_conversation(name)
        ctx.paths.doc(uid, "conversations", doc.pop("id")).set(doc)

    def captured() -> bool:
        runs = [s.to_dict() for s in ctx.paths.col(uid, "capture_runs").stream()]
        return len(runs) == len(SAMPLES) and all((r.get("jobs") or {}).get("memories") for r in runs)

    _wait(captured, 120, "the trigger to capture the sample conversations")
    response = httpx.post(stack["consolidate_url"], json={"uid": uid}, timeout=60)
    assert response.status_code == 200, response.text
    summary = response.json()
    assert summary["selected"] >= 10 and summary["routes"].get("promote", 0) >= 8, summary
    trace.converge(ctx, uid)
    return {"uid": uid, "ctx": ctx, "summary": summary}


def test_sample_user_providers_hold_exactly_the_visible_unrestricted_memories(sample_user: dict[str, Any]) -> None:
    ctx, uid = sample_user["ctx"], sample_user["uid"]
    items = trace.items(ctx, uid)
    restricted = {m.id for m in items.values() if m.restricted}
    assert {m.content for m in items.values() if m.restricted} >= set(RESTRICTED)
    expected = trace.assert_converged(ctx, uid)
    assert len(expected) >= 8
    assert not expected & {ids.provider_id(uid, m) for m in restricted}
    # The provider rows carry the memory's current revision and content.
    for doc in trace.typesense_docs(ctx, uid):
        item = items[doc["memory_id"]]
        assert doc["content"] == item.content and doc["revision"] == item.revision
    # The vector embeds the content, then the whole text of each segment it quotes, once, in order
    # (docs/data-model.md); a segment kept without its text (secret or restricted) adds nothing.
    transcripts = {c: {seg["id"]: seg["text"] for seg in trace.sample_conversation(c)["transcript_segments"]}
                   for c in SAMPLES}
    with_segments = 0
    for vid, record in trace.pinecone_vectors(ctx, uid).items():
        item = items[record["metadata"]["memory_id"]]
        assert vid == ids.provider_id(uid, item.id)
        kept = [(e.source_id, ref) for e in item.evidence for ref in e.quote_refs if ref.segment]
        assert all(ref.segment == transcripts[source][ref.segment_id] for source, ref in kept)
        with_segments += bool(kept)
        assert trace.same_vector(record["values"], ctx.embedder.embed([trace.vector_text(item)])[0])
    assert with_segments >= 8


@pytest.mark.parametrize(("path", "query", "expected"), [
    ("/v1/memories/search", "billing migration", "User finished the billing migration (yesterday: 15 November 2026)"),
    ("/memory/memory/search", "nurse Saint Mary's", "Tom works as a nurse at Saint Mary's"),
    ("/v1/memories/vector-search", "billing migration", "User finished the billing migration (yesterday: 15 November 2026)"),
    ("/memory/vector/search", "moved to Lisbon", "User moved to Lisbon in March (in March: March 2026)"),
])
def test_search_over_http_finds_the_memory_a_query_is_about(stack: dict[str, Any], sample_user: dict[str, Any],
                                                           path: str, query: str, expected: str) -> None:
    uid = sample_user["uid"]
    response = httpx.get(stack["api_url"] + path, params={"q": query, "limit": 5}, headers=_headers(uid), timeout=30)
    assert response.status_code == 200, response.text
    memories = response.json()["memories"]
    assert memories and memories[0]["content"] == expected, memories
    assert all(isinstance(m["score"], float) for m in memories)
    assert memories[0]["score"] == max(m["score"] for m in memories)


def test_search_never_returns_restricted_memories(stack: dict[str, Any], sample_user: dict[str, Any]) -> None:
    uid = sample_user["uid"]
    for path in ("/v1/memories/search", "/v1/memories/vector-search"):
        for query in ("blood pressure doctor", "card limit used car"):
            response = httpx.get(stack["api_url"] + path, params={"q": query}, headers=_headers(uid), timeout=30)
            assert response.status_code == 200, response.text
            contents = {m["content"] for m in response.json()["memories"]}
            assert not contents & set(RESTRICTED), (path, query, contents)


def test_pinecone_request_log_never_saw_restricted_content_or_vectors(stack: dict[str, Any],
                                                                      sample_user: dict[str, Any]) -> None:
    sent = _assert_nothing_restricted_in_pinecone_log(stack, sample_user["ctx"])
    assert sent >= 8  # the log is real: the sample user's vectors went through it


def test_knowledge_graph_page_is_bounded_and_closed(stack: dict[str, Any], sample_user: dict[str, Any]) -> None:
    ctx, uid = sample_user["ctx"], sample_user["uid"]
    url, headers = stack["api_url"] + "/v1/knowledge-graph", _headers(uid)
    full = httpx.get(url, params={"limit": 2000}, headers=headers, timeout=30).json()
    assert full["truncated"] is False
    assert len(full["edges"]) >= 8 and len(full["nodes"]) >= 9
    node_ids = {n["id"] for n in full["nodes"]}
    assert all(e["source"] in node_ids and e["target"] in node_ids for e in full["edges"])
    # Only active, unrestricted Long-term facts are in the graph.
    items = trace.items(ctx, uid)
    for edge in full["edges"]:
        for mid in edge["memory_ids"]:
            assert items[mid].layer == "long_term" and items[mid].status == "active" and not items[mid].restricted
    labels = " ".join(n["label"] for n in full["nodes"]).casefold()
    assert not any(m in labels for m in RESTRICTED_MARKERS)
    assert full["next_cursor"] is None
    for limit in (1, 2, 3):  # paging through the edges: each served exactly once, each page closed
        seen: list[str] = []
        nodes: set[str] = set()
        cursor = None
        while True:
            params: dict[str, Any] = {"limit": limit, **({"cursor": cursor} if cursor else {})}
            page = httpx.get(url, params=params, headers=headers, timeout=30).json()
            present = {n["id"] for n in page["nodes"]}
            assert len(page["edges"]) <= limit
            assert present == {end for e in page["edges"] for end in (e["source"], e["target"])}
            seen += [e["id"] for e in page["edges"]]
            nodes |= present
            cursor = page["next_cursor"]
            assert page["truncated"] is (cursor is not None)
            if cursor is None:
                break
        assert sorted(seen) == sorted(e["id"] for e in full["edges"]), limit
        assert len(seen) == len(set(seen)) and nodes == node_ids
    assert httpx.delete(url, headers=headers, timeout=30).status_code == 409
    rebuild = httpx.post(url + "/rebuild", headers=headers, timeout=30)
    assert rebuild.status_code == 409 and rebuild.json()["error"]["code"] == "derived_state"
    assert httpx.get(url, params={"limit": 2000}, headers=headers, timeout=30).json() == full


# ------------------------------------------------------------------------------ fault injection
def _fresh_user_with_events(publisher: Any = None) -> tuple[Context, str]:
    """A user whose captured memories have outbox events no drain has touched yet."""
    ctx = Context(publisher=publisher or trace.QuietPublisher())
    uid = _uid()
    for name in ("c-morning-standup", "c-dinner-plans"):
        doc = trace.sample_conversation(name)
        trace.capture_now(ctx, uid, doc.pop("id"), doc, write_doc=False)
    return ctx, uid


def test_typesense_down_during_drain_retries_with_backoff_and_converges_after_restart(
        stack: dict[str, Any]) -> None:
    state_dir = stack["state_dir"]
    with faults.stopped(state_dir, "typesense"):
        # The real publisher: the outbox_drain function is nudged and fails as well.
        ctx, uid = _fresh_user_with_events(publisher=Context().publisher)
        written = {e["memory_id"] for _, e in trace.outbox(ctx, uid)}
        assert len(written) >= 8

        def all_failed_once() -> bool:
            report = projection.drain_user(ctx, uid)
            assert report.acknowledged == 0, report
            events = [e for _, e in trace.outbox(ctx, uid)]
            return bool(events) and all(e["state"] == "pending" and e.get("attempts", 0) >= 1 for e in events)

        _wait(all_failed_once, 60, "every event to fail once against the stopped Typesense", 0.5)
        now = ctx.now()
        events = [e for _, e in trace.outbox(ctx, uid)]
        assert {e["memory_id"] for e in events} == written  # nothing acknowledged early
        for event in events:
            assert "typesense" in event["last_error"].casefold()
            assert event["due_at"] > now + timedelta(seconds=5), event  # backing off, not hot-looping
            assert event["lease_expires_at"] is None
        # Nothing is due while backing off: a drain right now leases nothing.
        assert projection.drain_user(ctx, uid).leased == 0
        # Past the first backoff (but still down): the second attempt fails and backs off longer.
        first = {e["memory_id"]: (e["attempts"], e["due_at"]) for e in events}
        later = max(d for _, d in first.values()) + timedelta(seconds=1)
        shifted = Context(publisher=trace.QuietPublisher(), clock=lambda: later)
        report = _wait(lambda: (r := projection.drain_user(shifted, uid)).skipped is None and r, 30,
                       "a drain in the future")
        # Every event, the writes' consolidation-schedule events (memory id "") included.
        assert report.retried == len(events) and report.acknowledged == 0, report.as_dict()
        for event in (e for _, e in trace.outbox(ctx, uid)):
            attempts, due = first[event["memory_id"]]
            assert event["attempts"] == attempts + 1
            assert event["due_at"] - later >= projection.backoff(attempts + 1) - timedelta(seconds=1)
            assert event["due_at"] - later > due - now  # the backoff grew
        assert projection.backoff(attempts + 1) > projection.backoff(attempts)
    # Typesense is back: the events are still there and a drain past their backoff converges them.
    assert {e["memory_id"] for _, e in trace.outbox(ctx, uid)} == written
    future = datetime.now(UTC) + timedelta(seconds=projection.BACKOFF_MAX_S + 60)
    revived = Context(publisher=trace.QuietPublisher(), clock=lambda: future)
    _wait(lambda: not projection.drain_user(revived, uid).skipped and not trace.outbox(ctx, uid), 60,
          "the outbox to drain after the restart")
    expected = trace.assert_converged(ctx, uid)
    assert len(expected) >= 8


def _push_body(uid: str, message_id: str) -> dict[str, Any]:
    data = base64.b64encode(json.dumps({"uid": uid, "sequence": 1}).encode()).decode()
    return {"message": {"data": data, "messageId": message_id, "message_id": message_id,
                        "publishTime": datetime.now(UTC).isoformat(), "attributes": {}},
            "subscription": "projects/demo-strata/subscriptions/strata-projection-push"}


def _snapshot(ctx: Context, uid: str) -> dict[str, Any]:
    return {
        "typesense": sorted(json.dumps(d, sort_keys=True) for d in trace.typesense_docs(ctx, uid)),
        "pinecone": json.dumps(trace.pinecone_vectors(ctx, uid), sort_keys=True),
        "edges": sorted(json.dumps(s.to_dict(), sort_keys=True) for s in ctx.paths.col(uid, "knowledge_edges").stream()),
        "nodes": sorted(s.id for s in ctx.paths.col(uid, "knowledge_nodes").stream()),
        "commits": sorted(s.id for s in ctx.paths.col(uid, "memory_commits").stream()),
        "items": sorted(json.dumps(s.to_dict(), sort_keys=True, default=str)
                        for s in ctx.paths.col(uid, "memory_items").stream()),
    }


def test_same_pubsub_message_delivered_three_times_changes_nothing(stack: dict[str, Any]) -> None:
    ctx, uid = _fresh_user_with_events()
    url = stack["function_urls"]["outbox_drain"]
    body = _push_body(uid, f"msg-{uuid.uuid4().hex[:8]}")
    statuses: list[int] = []

    def deliver() -> None:
        statuses.append(httpx.post(url, json=body, timeout=60).status_code)

    threads = [threading.Thread(target=deliver) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses and all(200 <= s < 300 for s in statuses), statuses
    _wait(lambda: not trace.outbox(ctx, uid), 60, "the outbox to drain")
    trace.assert_converged(ctx, uid)
    ts = trace.typesense_docs(ctx, uid)
    assert len(ts) == len({d["memory_id"] for d in ts})  # one row per memory, no duplicates
    before = _snapshot(ctx, uid)
    for _ in range(3):  # the very same message again, one after another
        assert 200 <= httpx.post(url, json=body, timeout=60).status_code < 300
    assert not trace.outbox(ctx, uid)
    assert _snapshot(ctx, uid) == before


def test_expired_lease_is_reclaimed_and_provider_repaired_to_current_state(stack: dict[str, Any]) -> None:
    ctx, uid = _fresh_user_with_events()
    items = trace.items(ctx, uid)
    outbox = trace.outbox(ctx, uid)  # with the writes' consolidation-schedule events (memory id "")
    events = {e["memory_id"]: snap for snap, e in outbox}
    target = next(m for m in sorted(items) if "Lisbon" in items[m].content)
    pid = ids.provider_id(uid, target)
    now = ctx.now()
    # A worker leased the event (its lease still running) and crashed half-way: the providers hold a
    # stale row under the provider id and a legacy row beside it.
    events[target].reference.update({"state": "leased", "lease_expires_at": now + timedelta(minutes=5),
                                     "lease_epoch": 1, "attempts": 1})
    url, key = ctx.settings.typesense_url, ctx.settings.typesense_api_key
    ts_index = TypesenseIndex(url, key, ctx.settings.typesense_collection)
    ts_index.ensure_ready()
    stale = [{"id": pid, "uid": uid, "memory_id": target, "layer": "short_term", "revision": 0,
              "content": "stale half-written row", "category": "other", "updated_at": 1.0},
             {"id": f"{uid}-{target}", "uid": uid, "memory_id": target, "layer": "short_term", "revision": 0,
              "content": "legacy row", "category": "other", "updated_at": 1.0}]
    response = httpx.post(f"{url}/collections/{ctx.settings.typesense_collection}/documents/import",
                          params={"action": "upsert"}, headers={"X-TYPESENSE-API-KEY": key},
                          content="\n".join(json.dumps(d) for d in stale), timeout=30)
    assert response.status_code == 200 and all(json.loads(x)["success"] for x in response.text.splitlines())
    host = ctx.settings.pinecone_host
    bogus = ctx.embedder.embed(["something else entirely"])[0]
    response = httpx.post(f"{host}/vectors/upsert", headers={"Api-Key": "local"}, timeout=30, json={
        "namespace": ctx.settings.pinecone_namespace,
        "vectors": [{"id": vid, "values": bogus, "metadata": {"uid": uid, "memory_id": target, "layer": "short_term",
                                                              "revision": 0}} for vid in (pid, f"{uid}-{target}")]})
    assert response.status_code == 200, response.text

    # While the lease is live, a drain leaves that event alone and acknowledges the rest.
    report = projection.drain_user(ctx, uid)
    assert report.repaired == 0 and report.acknowledged == len(outbox) - 1, report.as_dict()
    left = trace.outbox(ctx, uid)
    assert [e["memory_id"] for _, e in left] == [target] and left[0][1]["state"] == "leased"
    assert {d["content"] for d in trace.typesense_docs(ctx, uid) if d["memory_id"] == target} == \
        {"stale half-written row", "legacy row"}

    # The lease expires mid-drain: the next drain reclaims it and repairs the providers.
    later = now + timedelta(minutes=6)
    report = projection.drain_user(Context(publisher=trace.QuietPublisher(), clock=lambda: later), uid)
    assert report.repaired == 1 and report.acknowledged == 1, report.as_dict()
    assert not trace.outbox(ctx, uid)
    rows = [d for d in trace.typesense_docs(ctx, uid) if d["memory_id"] == target]
    assert [(d["id"], d["content"]) for d in rows] == [(pid, items[target].content)]
    vectors = {vid: r for vid, r in trace.pinecone_vectors(ctx, uid).items() if r["metadata"]["memory_id"] == target}
    assert list(vectors) == [pid]
    assert trace.same_vector(vectors[pid]["values"], ctx.embedder.embed([trace.vector_text(items[target])])[0])
    assert vectors[pid]["metadata"]["revision"] == items[target].revision
    trace.assert_converged(ctx, uid)


# ------------------------------------------------------------------------- restricted: delete-only
class _LoggingProxy(ThreadingHTTPServer):
    """Forwards every request to ``upstream`` and keeps (method, path, body) of each."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.requests: list[tuple[str, str, str]] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ProxyHandler(BaseHTTPRequestHandler):
    server: _LoggingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.requests.append((self.command, self.path, body.decode("utf-8", "replace")))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        upstream = httpx.request(self.command, self.server.upstream + self.path, content=body, headers=headers,
                                 timeout=30)
        data = upstream.content
        self.send_response(upstream.status_code)
        self.send_header("Content-Type", upstream.headers.get("content-type", "application/json"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _forward


class _RecordingEmbedder:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return self.inner.embed(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_restricted_memories_are_delete_only_in_provider_logs(stack: dict[str, Any]) -> None:
    base = Context()
    proxy = _LoggingProxy(base.settings.typesense_url)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        embedder = _RecordingEmbedder(base.embedder)
        ctx = Context(publisher=trace.QuietPublisher(), embedder=embedder,
                      keyword_index=TypesenseIndex(proxy.url, base.settings.typesense_api_key,
                                                   base.settings.typesense_collection))
        uid = _uid()
        for name in ("c-doctor", "c-bank-call", "c-dinner-plans"):
            doc = trace.sample_conversation(name)
            trace.capture_now(ctx, uid, doc.pop("id"), doc, write_doc=False)
        projection.drain_user(ctx, uid)
        consolidation.run_pass(ctx, uid)
        projection.drain_user(ctx, uid)
        restricted = {m.id: m for m in trace.items(ctx, uid).values() if m.restricted}
        assert {m.content for m in restricted.values()} >= set(RESTRICTED)
        # Deleting a restricted memory is a delete by id as well.
        from core.services import deletion

        doctor = next(m for m in restricted.values() if "blood pressure" in m.content)
        deletion.delete_memory(ctx, uid, doctor.id)
        report = projection.drain_user(ctx, uid)
        assert not trace.outbox(ctx, uid), report.as_dict()
        trace.assert_converged(ctx, uid)
    finally:
        proxy.shutdown()
        proxy.server_close()
    logged = proxy.requests
    assert any("/documents/import" in path for _, path, _ in logged)  # upserts did go through the proxy
    for method, path, body in logged:
        text = (path + " " + body).casefold()
        assert not any(m in text for m in RESTRICTED_MARKERS), f"restricted content sent to typesense: {method} {path}"
    # The restricted memories were sent as deletes by id only.
    deletes = " ".join(httpx.URL(path).params.get("filter_by", "") for method, path, _ in logged if method == "DELETE")
    for memory_id in restricted:
        assert memory_id in deletes
    assert not any(m in t.casefold() for t in embedder.texts for m in RESTRICTED_MARKERS)
    _assert_nothing_restricted_in_pinecone_log(stack, ctx)

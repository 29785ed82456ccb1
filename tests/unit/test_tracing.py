"""core.tracing: root spans per unit of work, adapter spans under them, the caller's trace kept,
the ``file`` exporter's lines; and the log lines and the ``api_request`` line that go with them
(latency, status, route template; the keyed ``uid_hash``)."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import flask
import pytest

from core import config, logs, tracing

TRACE = "0af7651916cd43dd8448eb211c80319c"


@tracing.spanned("keyword_index")
class _Index:
    def search(self, uid: str, terms: list[str]) -> int:
        return len(terms)

    def _private(self) -> int:
        return 1


@tracing.spanned("model", only=("complete_json",))
class _Chat:
    def complete_json(self) -> str:
        return "{}"

    def close(self) -> None:
        return None


@pytest.fixture
def trace_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "traces.jsonl"
    tracing.configure(config.Settings.unchecked(trace_exporter="file", trace_file=str(path)))
    try:
        yield path
    finally:
        tracing.reset()


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, logs._handler)
    stream = io.StringIO()
    logs.configure(stream)
    try:
        yield stream
    finally:
        logging.captureWarnings(False)
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
        logs._handler = saved[2]


def _spans(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_adapter_calls_are_child_spans_of_the_root_and_nothing_outside_one(trace_file: Path) -> None:
    _Index().search("u1", ["a", "b"])  # no root: not recorded
    assert _spans(trace_file) == []
    with tracing.root("capture_conversation", kind="CONSUMER"):
        _Index().search("u1", ["a", "b", "c"])
        _Chat().complete_json()
        _Chat().close()
    spans = {s["name"]: s for s in _spans(trace_file)}
    assert set(spans) == {"capture_conversation", "keyword_index.search", "model.complete_json"}
    root = spans["capture_conversation"]
    assert root["parent_span_id"] is None and root["kind"] == "CONSUMER"
    for child in ("keyword_index.search", "model.complete_json"):
        assert spans[child]["trace_id"] == root["trace_id"]
        assert spans[child]["parent_span_id"] == root["span_id"]
        assert spans[child]["kind"] == "CLIENT" and spans[child]["duration_ms"] >= 0
    assert spans["keyword_index.search"]["attributes"] == {"strata.component": "keyword_index", "strata.items": 3}


def test_a_failing_adapter_call_is_an_error_span(trace_file: Path) -> None:
    @tracing.spanned("vector_index")
    class Broken:
        def upsert(self) -> None:
            raise RuntimeError("down")

    with tracing.root("drain_outbox"), pytest.raises(RuntimeError):
        Broken().upsert()
    spans = {s["name"]: s for s in _spans(trace_file)}
    assert spans["vector_index.upsert"]["status"] == "ERROR"


@pytest.mark.parametrize("headers", [
    {"traceparent": f"00-{TRACE}-b7ad6b7169203331-01"},
    {"X-Cloud-Trace-Context": f"{TRACE}/12345;o=1"},
])
def test_the_callers_trace_is_the_roots_parent(trace_file: Path, headers: dict[str, str]) -> None:
    with tracing.root("consolidate", headers=headers):
        assert tracing.carrier()["traceparent"].startswith(f"00-{TRACE}-")
    (root,) = _spans(trace_file)
    assert root["trace_id"] == TRACE and root["parent_span_id"] is not None


def test_an_unsampled_caller_records_nothing(trace_file: Path) -> None:
    with tracing.root("consolidate", headers={"traceparent": f"00-{TRACE}-b7ad6b7169203331-00"}):
        _Index().search("u1", [])
        assert tracing.carrier() == {}
    assert _spans(trace_file) == []


def test_log_lines_inside_a_span_carry_its_trace_and_span(trace_file: Path, captured: io.StringIO) -> None:
    with logs.scope(), tracing.root("drain_outbox"):
        logging.getLogger("strata.test").info("inside")
    line = json.loads(captured.getvalue().splitlines()[-1])
    (root,) = _spans(trace_file)
    assert line[logs.TRACE_FIELD].endswith(f"/traces/{root['trace_id']}")
    assert line[logs.SPAN_FIELD] == root["span_id"]


def test_off_by_default_and_auto_means_cloud_trace_on_cloud_run_only() -> None:
    assert tracing.exporter_of(config.Settings.unchecked()) == "none"
    assert tracing.exporter_of(config.Settings.unchecked(k_service="api")) == "cloud_trace"
    assert tracing.exporter_of(config.Settings.unchecked(k_service="api", firestore_emulator_host="h:1")) == "none"
    assert tracing.exporter_of(config.Settings.unchecked(trace_exporter="file")) == "file"
    with pytest.raises(Exception, match="STRATA_TRACE_EXPORTER"):
        config.load(trace_exporter="jaeger")


def test_uid_hash_is_an_hmac_under_the_key() -> None:
    expected = "uh_" + hmac.new(b"k1", b"user-1", hashlib.sha256).hexdigest()[:16]
    assert logs.hash_uid("user-1", key="k1") == expected
    assert logs.hash_uid("user-1", key="k2") != expected
    assert logs.hash_uid("user-1", key="") == logs.hash_uid("user-1", key=logs.LOCAL_HASH_KEY)
    # not the unkeyed digest a log reader could compute for a guessed uid
    assert expected[3:] not in hashlib.sha256(b"user-1").hexdigest()


def _request_line(stream: io.StringIO) -> dict[str, Any]:
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    (line,) = [entry for entry in lines if entry["message"] == "api_request"]
    return line


@pytest.mark.parametrize(("method", "path", "status", "route"), [
    ("GET", "/healthz", 200, "/healthz"),
    ("GET", "/v1/memories/mem_0123456789", 401, "/v1/memories/{memory_id}"),
    ("PUT", "/v1/memories/mem_0123456789", 405, "/v1/memories/{memory_id}"),
    ("GET", "/no/such/thing/x1", 404, "(unmatched)"),
])
def test_the_request_line_carries_latency_status_and_route_template(
        captured: io.StringIO, method: str, path: str, status: int, route: str) -> None:
    from core.api import app

    ctx: Any = SimpleNamespace(settings=config.Settings.unchecked())
    with flask.Flask(__name__).test_request_context(path, method=method):
        response = app.handle_flask(flask.request, ctx)
    assert response.status_code == status
    line = _request_line(captured)
    assert line["route"] == route and line["status"] == status and line["method"] == method
    assert isinstance(line["latency_ms"], float) and 0 <= line["latency_ms"] < 10_000
    assert "path" not in line and "mem_0123456789" not in json.dumps(line)


def test_the_api_root_span_is_named_by_its_route(trace_file: Path, captured: io.StringIO) -> None:
    from core.api import app

    ctx: Any = SimpleNamespace(settings=config.Settings.unchecked())
    with flask.Flask(__name__).test_request_context("/v1/memories/mem_1", method="GET"):
        app.handle_flask(flask.request, ctx)
    (root,) = _spans(trace_file)
    assert root["name"] == "GET /v1/memories/{memory_id}"
    assert root["attributes"]["http.route"] == "/v1/memories/{memory_id}"
    assert root["attributes"]["http.response.status_code"] == 401


def test_work_on_a_thread_pool_joins_the_submitters_trace(trace_file: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=2)
    with tracing.root("drain_outbox"):
        pool.submit(_Index().search, "u1", ["a"]).result()
    spans = {s["name"]: s for s in _spans(trace_file)}
    assert spans["keyword_index.search"]["parent_span_id"] == spans["drain_outbox"]["span_id"]
    tracing.reset()
    assert ThreadPoolExecutor.submit.__name__ == "submit" and not hasattr(ThreadPoolExecutor.submit, "__wrapped__")
    pool.shutdown()


def test_a_task_carries_the_enqueuing_spans_traceparent(trace_file: Path) -> None:
    from core.adapters.tasks import CloudTasksQueue

    sent: list[dict[str, Any]] = []
    queue = object.__new__(CloudTasksQueue)
    queue._tasks_v2 = SimpleNamespace(HttpMethod=SimpleNamespace(POST="POST"))  # type: ignore[attr-defined,assignment]
    queue._client = SimpleNamespace(create_task=lambda parent, task: sent.append(task))  # type: ignore[attr-defined,assignment]
    queue._queue, queue._invoker = "projects/p/locations/r/queues/q", ""  # type: ignore[attr-defined,assignment]
    queue.enqueue("http://consolidate", {"uid": "u1"})
    assert "traceparent" not in sent[0]["http_request"]["headers"]  # no trace: nothing to carry
    with tracing.root("drain_outbox"):
        queue.enqueue("http://consolidate", {"uid": "u1"})
    spans = {s["name"]: s for s in _spans(trace_file)}
    parent = sent[1]["http_request"]["headers"]["traceparent"]
    assert parent == f"00-{spans['tasks.enqueue']['trace_id']}-{spans['tasks.enqueue']['span_id']}-01"


def test_a_pubsub_messages_traceparent_is_the_events_parent() -> None:
    parent = f"00-{TRACE}-b7ad6b7169203331-01"
    pushed = SimpleNamespace(data={"message": {"data": "", "attributes": {"traceparent": parent}}},
                             get=lambda key: "00-ffffffffffffffffffffffffffffffff-b7ad6b7169203331-01")
    assert logs._event_headers(pushed) == {"traceparent": parent}
    firestore = SimpleNamespace(data=b"\n\x12protobuf bytes", get=lambda key: parent)
    assert logs._event_headers(firestore) == {"traceparent": parent}  # the CloudEvent's own
    assert logs._event_headers(SimpleNamespace(data=None, get=lambda key: None)) == {}


def test_cloud_trace_is_flushed_when_a_root_ends_and_after_the_api_answer_is_sent(
        trace_file: Path, captured: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.api import app

    flushed: list[str] = []
    monkeypatch.setattr(tracing, "_flush_on_root", True)  # as with cloud_trace
    monkeypatch.setattr(tracing, "flush", lambda: flushed.append("flush"))
    with tracing.root("capture_conversation"):
        assert flushed == []
    assert flushed == ["flush"]
    flushed.clear()
    ctx: Any = SimpleNamespace(settings=config.Settings.unchecked())
    with flask.Flask(__name__).test_request_context("/healthz", method="GET"):
        response = app.handle_flask(flask.request, ctx)
    assert flushed == []  # not before the answer is on its way
    response.close()  # the WSGI server closes the response once it is sent
    assert flushed == ["flush"]


def test_cloud_trace_exports_through_googles_exporter_for_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.exporter import cloud_trace
    from opentelemetry.sdk.trace.export import SpanExportResult

    exported: list[tuple[str, list[str]]] = []

    class Exporter:  # Google's exporter without its client (no credentials here)
        def __init__(self, project_id: str) -> None:
            self.project_id = project_id

        def export(self, spans: Any) -> Any:
            exported.append((self.project_id, [s.name for s in spans]))
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            return None

        def force_flush(self, timeout_millis: int = 0) -> bool:
            return True

    monkeypatch.setattr(cloud_trace, "CloudTraceSpanExporter", Exporter)
    tracing.configure(config.Settings.unchecked(k_service="on-conversation-complete", project_id="prod-1"))
    try:
        with tracing.root("capture_conversation"):
            _Chat().complete_json()
        # flushed when the root span ended: nothing waits for the batch's timer
        assert exported == [("prod-1", ["model.complete_json", "capture_conversation"])]
    finally:
        tracing.reset()

"""Traces: OpenTelemetry spans of each function's work and of every call an adapter makes.

One root span per unit of work, opened by the entry wrappers of :mod:`core.logs`
(:func:`core.logs.http_entry`, :func:`core.logs.event_entry`): the API request (renamed to its
route template, e.g. ``GET /v1/memories/{memory_id}``), a capture, a drain, a consolidation pass,
a webhook delivery. Its parent is the caller's trace when the request or event carries one
(W3C ``traceparent`` or ``X-Cloud-Trace-Context``), so the trace id is the one the log lines
carry. Under it, one child span per call of a spanned adapter (:func:`spanned`, a class
decorator on the adapters of ``core/adapters``): ``firestore.<method>``, ``keyword_index.<method>``
(Typesense), ``vector_index.<method>``, ``embedder.<method>``, ``model.complete_json`` (one chat
request), ``publisher.publish``, ``tasks.enqueue``. An adapter call outside a root span records
nothing (the CLI, tests, benchmarks), and with tracing off a spanned method costs one check.

Where spans go is the ``trace_exporter`` setting (``STRATA_TRACE_EXPORTER``):

* ``cloud_trace``: Cloud Trace, through Google's OpenTelemetry exporter
  (``opentelemetry-exporter-gcp-trace``, the BatchWriteSpans API with the function's own service
  account), spans batched and flushed when the root span ends (Cloud Run throttles the CPU of an
  instance between requests, so nothing is left for a background thread; the API flushes once
  its answer is sent, :func:`flush_later`);
* ``file``: one JSON object per span and line appended to ``trace_file`` (the local stack's
  ``<state_dir>/traces.jsonl``), written as each span ends;
* ``none``: nothing;
* ``auto`` (the default): ``cloud_trace`` on Cloud Run (``K_SERVICE`` set, no emulator),
  else ``none``.

``trace_sample_ratio`` samples root spans without a sampled parent (a parent's decision is kept).
The services run some calls on thread pools (a drain's Typesense and vector index side by side, a
pass's reads): while tracing is on, :meth:`ThreadPoolExecutor.submit` carries the submitting
thread's span context to the worker (what ``opentelemetry-instrumentation-threading`` does, for the
OpenTelemetry context only: no other context variable crosses), so those calls are spans of the
same trace.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from core.config import Settings

C = TypeVar("C", bound=type)

EXPORTERS = ("auto", "none", "file", "cloud_trace")
_CLOUD_TRACE_HEADER = re.compile(r"^([0-9a-fA-F]{32})/(\d+)(?:;o=([01]))?")

_lock = threading.Lock()
_configured = False
_tracer: Any = None  # an SDK tracer once configured with an exporter; None: tracing off
_provider: Any = None
_flush_on_root = False
# Set by :func:`flush_later` inside a root span: who runs that root span's flush instead of its end.
_deferred: ContextVar[Callable[[Callable[[], None]], Any] | None] = ContextVar("strata_trace_flush", default=None)


def exporter_of(settings: Settings) -> str:
    """The exporter ``settings`` choose (``auto`` resolved)."""
    chosen = settings.trace_exporter
    if chosen == "auto":
        return "cloud_trace" if settings.k_service and not settings.local else "none"
    return chosen


def trace_file(settings: Settings) -> Path:
    """Where the ``file`` exporter appends (``trace_file``, else ``<state_dir>/traces.jsonl``)."""
    if settings.trace_file:
        return Path(settings.trace_file)
    return Path(settings.state_dir or ".strata/stack") / "traces.jsonl"


class JsonLinesExporter:
    """A span exporter appending one JSON object per span to a file (each batch in one write, so
    the functions of a local stack can share the file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        text = "".join(json.dumps(span_record(span), default=str) + "\n" for span in spans)
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(text)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def span_record(span: Any) -> dict[str, Any]:
    """One finished SDK span as the ``file`` exporter writes it."""
    context, parent = span.context, span.parent
    start, end = span.start_time or 0, span.end_time or 0
    return {
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_span_id": f"{parent.span_id:016x}" if parent else None,
        "name": span.name,
        "kind": span.kind.name,
        "start_ns": start,
        "duration_ms": round((end - start) / 1e6, 3),
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
        "service": (span.resource.attributes or {}).get("service.name"),
    }


def configure(settings: Settings | None = None) -> None:
    """Set up the tracer the settings choose, once per process (again when ``settings`` are given)."""
    global _configured, _tracer, _provider, _flush_on_root
    if _configured and settings is None:
        return
    with _lock:
        if _configured and settings is None:
            return
        if settings is None:
            from core.config import load
            from core.errors import ConfigurationError

            try:
                settings = load()
            except ConfigurationError:  # the entry itself reports it; no tracing meanwhile
                return
        exporter = exporter_of(settings)
        if _provider is not None:
            _provider.shutdown()
        _tracer, _provider, _flush_on_root = None, None, False
        if exporter != "none":
            _provider = _build_provider(settings, exporter)
            _tracer = _provider.get_tracer("strata")
            _flush_on_root = exporter == "cloud_trace"
            _carry_context_to_pools()
        _configured = True


_plain_submit: Any = None


def _carry_context_to_pools() -> None:
    """``ThreadPoolExecutor.submit`` runs the task under the submitter's OpenTelemetry context."""
    global _plain_submit
    from concurrent.futures import ThreadPoolExecutor

    if _plain_submit is not None:
        return
    from opentelemetry import context as otel_context

    plain = ThreadPoolExecutor.submit

    def submit(self: Any, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        if _tracer is None:
            return plain(self, fn, *args, **kwargs)
        carried = otel_context.get_current()

        def run(*inner_args: Any, **inner_kwargs: Any) -> Any:
            token = otel_context.attach(carried)
            try:
                return fn(*inner_args, **inner_kwargs)
            finally:
                otel_context.detach(token)

        return plain(self, run, *args, **kwargs)

    _plain_submit = plain
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]


def _build_provider(settings: Settings, exporter: str) -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    resource = Resource.create({"service.name": settings.k_service or "strata",
                                "cloud.provider": "gcp", "gcp.project_id": settings.project_id})
    ratio = min(1.0, settings.trace_sample_ratio)
    provider = TracerProvider(resource=resource, sampler=ParentBased(TraceIdRatioBased(ratio)))
    if exporter == "file":
        path = trace_file(settings)
        path.parent.mkdir(parents=True, exist_ok=True)
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(path)))  # type: ignore[arg-type]
    else:
        from opentelemetry.exporter.cloud_trace import CloudTraceSpanExporter

        provider.add_span_processor(BatchSpanProcessor(CloudTraceSpanExporter(project_id=settings.project_id)))
    return provider


def enabled() -> bool:
    """Whether spans are being recorded by this process."""
    return _tracer is not None


def _parent(headers: Mapping[str, str]) -> Any:
    """The caller's span context from ``traceparent`` or ``X-Cloud-Trace-Context``, as an
    OpenTelemetry context (None when there is neither)."""
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    lowered = {k.lower(): v for k, v in headers.items()}
    if "traceparent" in lowered:
        extracted = TraceContextTextMapPropagator().extract(carrier=lowered)
        if trace.get_current_span(extracted).get_span_context().is_valid:
            return extracted
    match = _CLOUD_TRACE_HEADER.match(lowered.get("x-cloud-trace-context", "").strip())
    if match:
        span_id = int(match.group(2)) & 0xFFFFFFFFFFFFFFFF
        if span_id:
            flags = trace.TraceFlags(trace.TraceFlags.SAMPLED if match.group(3) == "1" else trace.TraceFlags.DEFAULT)
            parent = trace.SpanContext(int(match.group(1), 16), span_id, is_remote=True, trace_flags=flags)
            return trace.set_span_in_context(trace.NonRecordingSpan(parent))
    return None


@contextlib.contextmanager
def root(name: str, *, headers: Mapping[str, str] | None = None, kind: str = "SERVER") -> Iterator[None]:
    """The root span of one unit of work (a child of the caller's span when ``headers`` carry one)."""
    configure()
    tracer = _tracer
    if tracer is None:
        yield
        return
    from opentelemetry import trace

    deferred = _deferred.set(None)
    try:
        with tracer.start_as_current_span(name, context=_parent(headers or {}), kind=trace.SpanKind[kind]):
            yield
    finally:
        later = _deferred.get()
        _deferred.reset(deferred)
        if later is not None:
            later(flush)
        else:
            flush()


def flush() -> None:
    """Send the spans still batched (``cloud_trace``; a no-op for the other exporters)."""
    if _flush_on_root and _provider is not None:
        _provider.force_flush(timeout_millis=5_000)


def flush_later(register: Callable[[Callable[[], None]], Any]) -> None:
    """Have the current root span's flush run through ``register`` instead of when the span ends:
    the API hands it to the response's ``call_on_close``, so the Cloud Trace round trip comes
    after the answer is sent, not before."""
    if _tracer is not None and _flush_on_root:
        _deferred.set(register)


def _current() -> Any:
    from opentelemetry import trace

    span = trace.get_current_span()
    return span if span.is_recording() else None


def annotate(name: str | None = None, /, **attributes: Any) -> None:
    """Name (``name``) and attribute the current span, when one is recording."""
    if _tracer is None:
        return
    span = _current()
    if span is None:
        return
    if name:
        span.update_name(name)
    span.set_attributes({k: v for k, v in attributes.items() if v is not None})


def current_ids() -> tuple[str, str] | None:
    """(trace id, span id) in hex of the span recording in this context, for the log lines."""
    if _tracer is None:
        return None
    span = _current()
    if span is None:
        return None
    context = span.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def carrier() -> dict[str, str]:
    """The current span as a W3C ``traceparent`` (for a message or request this work sends on, so
    the receiver's root span joins this trace); empty when nothing is recording."""
    ids = current_ids()
    if ids is None:
        return {}
    return {"traceparent": f"00-{ids[0]}-{ids[1]}-01"}


def _count(args: tuple[Any, ...]) -> int | None:
    """The size of the call's first collection argument (paths read, documents upserted, writes)."""
    for arg in args[1:]:
        if isinstance(arg, list | tuple | dict | set | frozenset):
            return len(arg)
    return None


def _spanned_method(span_name: str, component: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        tracer = _tracer
        if tracer is None or _current() is None:
            return fn(*args, **kwargs)
        from opentelemetry.trace import SpanKind

        attributes: dict[str, Any] = {"strata.component": component}
        count = _count(args)
        if count is not None:
            attributes["strata.items"] = count
        with tracer.start_as_current_span(span_name, kind=SpanKind.CLIENT, attributes=attributes):
            return fn(*args, **kwargs)

    call.__strata_spanned__ = True  # type: ignore[attr-defined]
    return call


def spanned(component: str, *, only: Sequence[str] = ()) -> Callable[[C], C]:
    """Class decorator: each public method the class itself defines (or those named in ``only``)
    runs in a ``<component>.<method>`` span when called inside a root span. Generator methods are
    left as they are (their work happens after the call returns)."""
    def decorate(cls: C) -> C:
        for name, member in list(vars(cls).items()):
            if (only and name not in only) or (not only and name.startswith("_")):
                continue
            if not inspect.isfunction(member) or inspect.isgeneratorfunction(member):
                continue
            if getattr(member, "__strata_spanned__", False):
                continue
            setattr(cls, name, _spanned_method(f"{component}.{name}", component, member))
        return cls

    return decorate


def reset() -> None:
    """Tracing off and unconfigured, thread pools as they were (tests)."""
    global _configured, _tracer, _provider, _flush_on_root, _plain_submit
    with _lock:
        if _provider is not None:
            _provider.shutdown()
        _configured, _tracer, _provider, _flush_on_root = False, None, None, False
        if _plain_submit is not None:
            from concurrent.futures import ThreadPoolExecutor

            ThreadPoolExecutor.submit = _plain_submit  # type: ignore[method-assign]
            _plain_submit = None


__all__ = ["EXPORTERS", "JsonLinesExporter", "annotate", "carrier", "configure", "current_ids", "enabled", "exporter_of",
           "flush", "flush_later", "reset", "root", "span_record", "spanned", "trace_file"]

"""core.logs: one JSON object per line, severity and message, the trace from either header form,
uids hashed everywhere (fields, text, exceptions) and text fields never written."""

from __future__ import annotations

import io
import json
import logging
import warnings
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from core import logs

UID = "user:7H q2"
TRACE = "0af7651916cd43dd8448eb211c80319c"


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, logs._handler)
    others = {name: (list(lg.handlers), lg.propagate) for name, lg in logging.root.manager.loggerDict.items()
              if isinstance(lg, logging.Logger)}
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
        for name, (handlers, propagate) in others.items():
            logger = logging.getLogger(name)
            logger.handlers[:] = handlers
            logger.propagate = propagate


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_every_record_is_one_json_line_with_severity_trace_and_no_raw_uid(captured: io.StringIO) -> None:
    log = logging.getLogger("strata.test")
    with logs.scope(uid=UID, headers={"X-Cloud-Trace-Context": f"{TRACE}/123;o=1"}):
        log.info(json.dumps({"event": "capture", "uid": UID, "uids": [UID, "other"], "created": 2,
                             "content": "I take insulin", "nested": {"quote": "my salary", "note": f"for {UID}"}}))
        log.warning("pass for %s dropped (GET /x?filter=%s)", UID, quote(f"uid:={UID}", safe=""))
        try:
            raise RuntimeError(f"boom for {UID}\nsecond line")
        except RuntimeError:
            log.exception("failed")
    with logs.scope(headers={"traceparent": f"00-{TRACE}-b7ad6b7169203331-01"}):
        logging.getLogger("werkzeug").error("plain text")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("a library warning", DeprecationWarning, stacklevel=1)
    logging.getLogger("outside").info("no scope")
    lines = _lines(captured)
    assert len(lines) == len(captured.getvalue().splitlines()) == 6
    assert all(isinstance(line["severity"], str) and isinstance(line["message"], str) for line in lines)
    assert [line["severity"] for line in lines] == ["INFO", "WARNING", "ERROR", "ERROR", "WARNING", "INFO"]
    first = lines[0]
    assert first["message"] == "capture" and first["created"] == 2
    assert first["uid_hash"] == logs.hash_uid(UID) and first["uid_hashes"] == [logs.hash_uid(UID), logs.hash_uid("other")]
    assert "content" not in first and first["nested"] == {"note": f"for {logs.hash_uid(UID)}"}
    assert lines[1]["message"].startswith(f"pass for {logs.hash_uid(UID)} dropped")
    assert "RuntimeError" in lines[2]["exception"]
    trace = f"projects/demo-strata/traces/{TRACE}"
    assert [line.get(logs.TRACE_FIELD) for line in lines] == [trace, trace, trace, trace, None, None]
    assert UID not in captured.getvalue() and quote(UID, safe="") not in captured.getvalue()
    assert "insulin" not in captured.getvalue() and "salary" not in captured.getvalue()


@pytest.mark.parametrize("headers, expected", [
    ({"x-cloud-trace-context": TRACE.upper()}, TRACE),
    ({"traceparent": f"00-{TRACE}-b7ad6b7169203331-00"}, TRACE),
    ({"traceparent": "garbage"}, None),
    ({"X-Cloud-Trace-Context": "short/1"}, None),
    ({}, None),
])
def test_trace_id_from_either_header(headers: dict[str, str], expected: str | None) -> None:
    assert logs.trace_id(headers) == expected


def test_lines_of_a_request_carry_its_id_and_the_next_request_does_not(captured: io.StringIO) -> None:
    with logs.scope(headers={}):
        logs.set_request_id("req_0123")
        logging.getLogger("strata").info("inside")
    with logs.scope(headers={}):
        logging.getLogger("strata").info("another request")
    inside, other = _lines(captured)[-2:]
    assert inside["request_id"] == "req_0123" and "request_id" not in other

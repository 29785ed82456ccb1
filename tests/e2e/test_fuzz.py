"""Schema-driven fuzz of the running API: every operation of ``/openapi.json`` (nothing excluded),
valid and invalid inputs (schemathesis positive + negative generation), against the session's local
stack over real HTTP.

For every generated request:
* no 5xx, the status is one the document lists for that operation, the body matches the documented
  schema and content type, and invalid input is refused (schemathesis' own checks);
* a 4xx writes nothing: the same request sent by a *sentinel* user that owns nothing must leave that
  user with no document at all; and for writing methods, where refusals depend on what the user
  owns (404 on a deleted id, 409), the fuzz user's ledger head, document counts and the update times
  of the documents written outside the ledger are the same before and after.

The fuzz user and the sentinels are fresh uids of this run, so the fuzz can only reach its own data
(every route is scoped by the token's uid) and leaves nothing other tests depend on. The budget is
bounded: ``EXAMPLES`` generated per operation (plus schemathesis' explicit/coverage cases), derandomized
(same cases every run), no shrinking phase; the run prints how many cases each operation got.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from core.bootstrap import Context
from strata_dev.localstack.tokens import emulator_token
from tests.support.firestore_checks import PROJECTION_BOOKKEEPING, user_doc_count, wait_for

pytestmark = pytest.mark.e2e

# Generated cases per operation, on top of schemathesis' explicit and coverage cases (7 or more per
# operation that takes input): 10 in `make test`, which keeps the fuzz near 2 of CI's 25 minutes;
# `make fuzz` runs the same checks with STRATA_FUZZ_EXAMPLES (50) for a longer search.
EXAMPLES = int(os.environ.get("STRATA_FUZZ_EXAMPLES") or 10)
RUN = uuid.uuid4().hex[:10]
# Written outside the ledger (so the ledger head does not cover them): compared by update time.
TIMED = ("conversations", "capture_runs", "client_devices", "action_items", "goals")
SKIPPED = {p.split("/", 1)[0] for p in PROJECTION_BOOKKEEPING} | {"memory_state"}  # head is read separately
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          negative_data_rejection]


class Fuzz:
    """The run's users and the checks that need Firestore."""

    def __init__(self) -> None:
        self.ctx = Context()
        self.uid = f"fuzz-{RUN}"
        self.sentinel_n = 0
        self.cases: Counter[str] = Counter()

    @property
    def sentinel(self) -> str:
        return f"fuzz-{RUN}-sentinel-{self.sentinel_n}"

    def state(self, uid: str) -> dict[str, Any]:
        """What a request could have written for ``uid``, minus background projection bookkeeping."""
        control = self.ctx.paths.control(uid).get()
        fence = self.ctx.paths.account_deletion(uid).get()
        out: dict[str, Any] = {"head": (control.to_dict() or {}).get("sequence") if control.exists else 0,
                               "fence": fence.update_time if fence.exists else None}
        for collection in self.ctx.paths.user(uid).collections():
            if collection.id in SKIPPED:
                continue
            if collection.id in TIMED:
                out[collection.id] = {s.id: s.update_time for s in collection.select([]).stream()}
            else:
                out[collection.id] = collection.count().get()[0][0].value
        return out

    def settle(self, case: Any, response: Any, uid: str) -> None:
        """A created conversation is captured by the Firestore trigger, asynchronously: wait for that
        capture (its ``capture_runs`` marker) so its writes do not land inside a later case."""
        if case.method == "POST" and case.path == "/v1/conversations" and response.status_code == 201:
            conversation_id = response.json()["id"]

            stored = self.ctx.paths.doc(uid, "conversations", conversation_id).get().to_dict() or {}
            if stored.get("status") != "completed" or stored.get("discarded"):
                return  # the trigger captures only completed, kept conversations: nothing will be written

            def captured() -> bool:
                # Settled when every job has an outcome: done (True) or failed for good ("failed: ...",
                # e.g. a fuzzed transcript whose quote occurs in two segments cannot be grounded).
                snap = self.ctx.paths.doc(uid, "capture_runs", conversation_id).get()
                jobs = (snap.to_dict() or {}).get("jobs", {}) if snap.exists else {}
                return all(jobs.get(job) for job in ("memories", "action_items", "goals"))

            wait_for(captured, timeout=60, interval=0.1, what=f"capture of fuzzed conversation {conversation_id}")


@pytest.fixture(scope="module")
def fuzz(stack: dict[str, Any]) -> Iterator[Fuzz]:
    state = Fuzz()
    yield state
    few = sorted((n, label) for label, n in state.cases.items() if n < EXAMPLES)
    print(f"\nfuzz: {sum(state.cases.values())} cases over {len(state.cases)} operations; "
          f"below {EXAMPLES} (input space exhausted): {few}; "
          f"{state.sentinel_n + 1} sentinel user(s)")


def _document() -> dict[str, Any]:
    from core.api.app import ROUTES
    from core.api.openapi import document

    return document(ROUTES)


# The document is built from this checkout's route table at collection time (schemathesis' lazy
# fixture loader does not run under this pytest); test_served_document_is_the_fuzzed_one proves the
# running stack serves exactly this document at /openapi.json.
schema = schemathesis.openapi.from_dict(_document())
schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE])


def test_served_document_is_the_fuzzed_one(stack: dict[str, Any]) -> None:
    import httpx

    served = httpx.get(stack["api_url"] + "/openapi.json", timeout=30).json()
    assert served == _document()


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid)}"}


@schema.parametrize()
@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
def test_fuzz_api(case: Any, fuzz: Fuzz, stack: dict[str, Any]) -> None:
    fuzz.cases[case.operation.label] += 1
    base = stack["api_url"]
    # Reads are checked through the sentinel below; writes also against the fuzz user's own data,
    # where state-dependent refusals (404 on a deleted id, 409) happen.
    writes = case.method.upper() in ("POST", "PATCH", "PUT", "DELETE")
    before = fuzz.state(fuzz.uid) if writes else None
    response = case.call(base_url=base, headers=_auth(fuzz.uid), timeout=60)
    # A 413 refuses a body for its size before its content is read; schemathesis' negative-data
    # check does not count 413 as a rejection, so it is left out for those responses only.
    case.validate_response(response, checks=CHECKS if response.status_code != 413 else CHECKS[:-1])
    fuzz.settle(case, response, fuzz.uid)
    if not 400 <= response.status_code < 500:
        return
    if writes:
        assert fuzz.state(fuzz.uid) == before, f"a {response.status_code} wrote: {case.method} {case.formatted_path}"
    # The same request from a user who owns nothing must leave them with nothing.
    echo = case.call(base_url=base, headers=_auth(fuzz.sentinel), timeout=60)
    assert echo.status_code < 500, echo.text
    if 400 <= echo.status_code < 500:
        assert user_doc_count(fuzz.ctx, fuzz.sentinel) == 0, f"a {echo.status_code} wrote for the sentinel"
        assert not fuzz.ctx.paths.account_deletion(fuzz.sentinel).get().exists
    else:
        fuzz.settle(case, echo, fuzz.sentinel)
        fuzz.sentinel_n += 1  # it succeeded and may own data now: the next check uses a fresh sentinel


def test_every_operation_got_its_budget(fuzz: Fuzz) -> None:
    """Runs after the fuzz (pytest keeps file order): every documented operation was fuzzed, those
    that take any input with at least ``EXAMPLES - 2`` cases (hypothesis may find a small input
    space exhausted a case or two early); ``/healthz`` and ``/openapi.json`` take none, so only
    their unknown-parameter (negative) cases exist and hypothesis exhausts them sooner."""
    if not fuzz.cases:
        pytest.skip("the fuzz itself was deselected")
    document = _document()
    inputs = {f"{method.upper()} {path}": bool(op.get("parameters") or op.get("requestBody"))
              for path, ops in document["paths"].items() for method, op in ops.items()}
    assert set(fuzz.cases) == set(inputs)
    starved = {label: fuzz.cases[label] for label, has_input in inputs.items()
               if fuzz.cases[label] < (EXAMPLES - 2 if has_input else 1)}
    assert not starved, starved

"""What happened to a conversation's capture, as an app may ask: ``GET /v1/conversations/{id}``.

Read from the conversation document and its capture marker (``capture_runs/{id}``), never from
another user's: a conversation the caller does not own, or one being deleted, is a 404. The state is
the capture of the conversation's *current* revision (its segments / integration text / reprocess
token):

- ``pending``: that revision is not captured yet (not completed, waiting for its trigger, or a
  model attempt failed and the trigger will retry; ``last_error_code`` then says why);
- ``captured``: captured by the configured extractor;
- ``fell_back``: the model's attempts were used up (or it refused), so the rule extractor captured it;
- ``failed``: captured as failed (``STRATA_LLM_ON_FAILURE=fail``, an extractor refusal, a grounding
  failure); earlier memories of the conversation stay as they were.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.domain import paths
from core.domain.documents import JOBS, CaptureRun, FellBack, attempts_of, conversation_revision
from core.errors import NotFound
from core.ports import Ports

STATES = ("pending", "captured", "failed", "fell_back")
COUNT_PAGE = 500


def _time(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _memory_count(ctx: Ports, uid: str, conversation_id: str) -> int:
    """Memories this conversation's active evidence supports that the user has not deleted."""
    count, after = 0, None
    while True:
        rows = ctx.store.query("items_by_active_source", {"active_source_ids": conversation_id},
                               parent=paths.user(uid), limit=COUNT_PAGE,
                               start_after={"__name__": after} if after else None)
        count += sum(1 for row in rows if not row.data.get("deleted_by_user")
                     and row.data.get("status") not in ("tombstoned", "hidden"))
        if len(rows) < COUNT_PAGE:
            return count
        after = rows[-1].id


def _of_revision(run: CaptureRun, revision: str, value: Any) -> dict[str, Any] | None:
    """The marker's map ``value`` when the marker is of ``revision`` (else None)."""
    return dict(value) if run.revision == revision and isinstance(value, dict) else None


def _state(jobs: dict[str, Any], fell_back: FellBack | None, error: str | None) -> tuple[str, str | None]:
    """(state, last error code) of a capture from its marker's jobs, the fallback it took and the
    last model error."""
    failures = [str(jobs[job])[len("failed: "):] for job in JOBS if str(jobs.get(job, "")).startswith("failed: ")]
    if not all(jobs.get(job) for job in JOBS):
        return "pending", error
    if failures:
        return "failed", failures[0]
    if fell_back is not None:
        return "fell_back", str(fell_back.reason or error or "") or None
    return "captured", error


def conversation_status(ctx: Ports, uid: str, conversation_id: str) -> dict[str, Any]:
    conversation_ref = paths.conversation(uid, conversation_id)
    run_ref = paths.capture_run(uid, conversation_id)
    found = ctx.store.get_all([conversation_ref, run_ref])
    doc, run = found[conversation_ref], CaptureRun.from_store(found[run_ref])
    if doc is None or run.deleting:
        raise NotFound("no such conversation")
    revision = conversation_revision(doc)
    attempts = attempts_of(run, revision)
    jobs = _of_revision(run, revision, run.jobs) or {}
    extractor = _of_revision(run, revision, run.extractor)
    fell_back = run.fell_back if run.revision == revision and isinstance(run.fell_back, FellBack) else None
    state, error = _state(jobs, fell_back, attempts.last_error)
    return {
        "conversation_id": conversation_id,
        "state": state,
        "conversation_status": str(doc.get("status") or ""),
        "revision": revision,
        "extractor": {"id": str(extractor.get("id")), "version": str(extractor.get("version"))} if extractor else None,
        "memory_count": _memory_count(ctx, uid, conversation_id),
        "last_error_code": error,
        "attempts": attempts.count,
        "max_attempts": ctx.settings.llm_max_attempts,
        "created_at": _time(doc.get("created_at")),
        "captured_at": _time(run.updated_at) if state != "pending" else None,
        "first_attempt_at": _time(attempts.first_at),
        "last_attempt_at": _time(attempts.last_at),
        "last_error_at": _time(attempts.last_error_at),
    }


__all__ = ["STATES", "conversation_status"]

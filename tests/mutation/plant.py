"""Plant known bugs one at a time and check that the suite catches each.

The bugs are of the kinds held-out checks found in earlier builds (issues 19 and 27): an operation
key that a later intent repeats, a status a cascade skips, a stale receipt on a Long-term edit, a
raw timestamp in a webhook payload, an incident switch ignored on one path, a resolved review row
that keeps the text it was opened with, a review entry left stale by a revision of its item, and a
projection acknowledgement no lease fences. For each, the script replaces one exact snippet of the
source (it refuses to run if the snippet moved), runs the tests named for that kind of bug in a
fresh pytest session (its own local stack, so the functions serve the planted code too), records
whether any test *failed*, and restores the file whatever happens.
A baseline run of the same tests on the unplanted code comes first: a bug only counts as caught
when those tests pass without it.

Usage: ``python tests/mutation/plant.py [--only NAME ...] [--skip-baseline]``; exit 1 when a bug
is not caught (or the baseline fails). Run from the repository root (``make mutation``).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTATIONS = (
    Mutation(
        "operation_key_reuse",
        "a capture's operation key no longer binds the capture count, so an edit made again after a "
        "revert (A → B → A → B) replays the first capture of B instead of capturing",
        "core/services/capture.py",
        'key = {"source": conversation_id, "revision": revision, "captures": captures, "after": after}',
        'key = {"source": conversation_id, "revision": revision, "after": after}',
        ("tests/e2e/test_lifecycle_deletes.py::test_reverting_a_transcript_edit_captures_again_instead_of_replaying",),
    ),
    Mutation(
        "cascade_skips_hidden",
        "the conversation cascade leaves hidden (rejected) items alone",
        "core/domain/planners.py",
        "        item = view.items.get(mid)\n        if item is None:\n            continue\n"
        "        changed[mid] = withdraw_source(item, conversation_id, by_user=True)",
        "        item = view.items.get(mid)\n        if item is None or item.status == \"hidden\":\n"
        "            continue\n"
        "        changed[mid] = withdraw_source(item, conversation_id, by_user=True)",
        ("tests/e2e/test_lifecycle_deletes.py::test_a_rejected_fact_is_scrubbed_by_every_delete",),
    ),
    Mutation(
        "stale_receipt_on_long_term_edit",
        "a metadata edit of a Long-term memory keeps the old admission receipt and graph assertion",
        "core/domain/edit_planners.py",
        "    out.summary[kind.split(\".\", 1)[1]] = value\n    if keeps_admission(item):",
        "    out.summary[kind.split(\".\", 1)[1]] = value\n    if False and keeps_admission(item):",
        ("tests/e2e/test_edits_http.py::test_metadata_edits_of_a_long_term_memory_are_legal_revisions",),
    ),
    Mutation(
        "timestamp_in_webhook_payload",
        "the webhook body keeps Firestore timestamps as they are (the JSON encoder refuses them)",
        "core/domain/webhooks.py",
        "    if isinstance(value, datetime | date):\n        return value.isoformat()",
        "    if isinstance(value, datetime | date):\n        return value",
        ("tests/unit/test_webhook.py::test_conversation_body_is_json_with_iso_dates",
         "tests/e2e/test_webhooks.py::test_conversation_is_posted_once_with_iso_dates"),
    ),
    Mutation(
        "projection_switch_ignored_on_push",
        "projection_disabled is no longer checked when a drain starts (the Pub/Sub push path, the CLI)",
        "core/services/projection.py",
        "    report = DrainReport(uids=[uid])\n    if controls.is_on(ctx, controls.PROJECTION):",
        "    report = DrainReport(uids=[uid])\n    if False and controls.is_on(ctx, controls.PROJECTION):",
        ("tests/e2e/test_incident_switches.py::test_projection_disabled_holds_push_sweep_and_cli_drains",),
    ),
    Mutation(
        "resolved_review_keeps_text",
        "a resolved review row keeps the fact's text (a corrected fact's original wording outlives the "
        "conversation it came from)",
        "core/domain/planners.py",
        '    out.docs[path] = row.closed("resolved", "resolved_at", view.now, decision=decision).to_store()',
        '    out.docs[path] = {**stored, "status": "resolved", "resolved_at": view.now, "decision": decision}',
        ("tests/e2e/test_privacy.py::test_a_corrected_review_keeps_no_original_text_after_its_conversation_is_deleted",),
    ),
    Mutation(
        "stale_review_never_reissued",
        "a revision of an item in review (a visibility or review-flag edit) closes its review entry "
        "without re-issuing it for the new revision, so the item can never be resolved",
        "core/domain/review_queue.py",
        "    if not (in_review(item) and item.review_id == previous.review_id):",
        "    if True:",
        ("tests/e2e/test_review_reissue.py::test_metadata_edits_of_an_item_in_review_keep_it_answerable",),
    ),
    Mutation(
        "unfenced_ack",
        "the projection acknowledgement commits without checking the drain lease or the events' lease "
        "epochs, so a drain that lost its lease acknowledges after writing stale provider state",
        "core/domain/outbox.py",
        "        commits.append(Commit(guards, chunk))",
        "        commits.append(Commit({}, chunk))",
        ("tests/e2e/test_drain_fencing.py::test_a_drain_that_lost_its_lease_leaves_current_state_in_the_index",),
    ),
)


def run_tests(tests: tuple[str, ...]) -> tuple[bool, str]:
    """(some test failed, pytest's closing line)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
        cwd=ROOT, capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    summary = lines[-1] if lines else proc.stderr.strip()[-200:]
    failed = bool(re.search(r"\b\d+ failed\b", summary))
    return failed, summary


def plant(mutation: Mutation) -> str:
    path = ROOT / mutation.path
    original = path.read_text()
    if original.count(mutation.old) != 1:
        raise SystemExit(f"{mutation.name}: the planted snippet no longer occurs exactly once in {mutation.path}; "
                         "update tests/mutation/plant.py")
    path.write_text(original.replace(mutation.old, mutation.new))
    return original


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="names of the bugs to plant")
    parser.add_argument("--skip-baseline", action="store_true", help="do not run the tests on the clean code first")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if args.only is None or m.name in args.only]
    for m in chosen:  # every site must be found before anything is touched
        if (ROOT / m.path).read_text().count(m.old) != 1:
            raise SystemExit(f"{m.name}: snippet not found exactly once in {m.path}")
    if not args.skip_baseline:
        everything = tuple(t for m in chosen for t in m.tests)
        failed, summary = run_tests(everything)
        print(f"baseline (no bug planted): {summary}", flush=True)
        if failed or "passed" not in summary:
            print("the tests do not pass on the clean code; nothing can be concluded")
            return 1
    missed = []
    for m in chosen:
        started = time.monotonic()
        original = plant(m)
        try:
            failed, summary = run_tests(m.tests)
        finally:
            (ROOT / m.path).write_text(original)
        verdict = "CAUGHT" if failed else "MISSED"
        if not failed:
            missed.append(m.name)
        print(f"{verdict:6} {m.name}: {m.what}\n       by {', '.join(m.tests)}\n       pytest: {summary} "
              f"({time.monotonic() - started:.0f} s)", flush=True)
    print(f"{len(chosen) - len(missed)} of {len(chosen)} planted bugs caught" + (f"; missed: {missed}" if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

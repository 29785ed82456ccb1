"""The memory console (``console/``, issue 48) in a real browser, on the local stack.

The session's stack serves the API; this module adds what the console needs beside it, once:
firebase-tools' Hosting emulator serving ``console/`` (the project's ``firebase.json`` hosting
section, its folder by absolute path) and its Auth emulator (whose unsigned ID tokens the stack's
API accepts, as it does the Auth emulator of ``--suite firebase``). One headless Chromium from the
system's packages (``/usr/bin/chromium``), driven by playwright-core (``tests/browser``, no browser
download), signs in with a password through the Firebase JS SDK and walks the issue's path:
the sample conversations' memories by layer with their quotes, a review resolved, an ended fact
restored, a memory deleted and its receipt read, again after a reload.

Expectations come from the data the test wrote and the design (every quote lies in a segment of the
conversation it cites; accepting a review ends the fact it names; a restore makes the fact
current; a delete is answered by a receipt), never from the console's code. Waits are on what the
page shows. The screenshots (a desktop and a phone width) are checked and, with
``STRATA_CONSOLE_SHOTS=docs/img``, copied there (the README's picture).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.bootstrap import Context
from strata_dev.localstack.stack import REPO_ROOT
from strata_dev.samples import sample_paths
from tests.e2e.test_as_of import _say
from tests.support import js_client
from tests.support.firestore_checks import all_docs, wait_for, write_conversation

pytestmark = pytest.mark.e2e
CHROMIUM = Path(os.environ.get("STRATA_CHROMIUM", "/usr/bin/chromium"))
DRIVER = REPO_ROOT / "tests" / "browser"
# Where the run's screenshots are kept: STRATA_CONSOLE_SHOTS=docs/img refreshes the committed ones.
SHOTS = os.environ.get("STRATA_CONSOLE_SHOTS", "")


@pytest.fixture(scope="module")
def site(stack: dict[str, Any]) -> Iterator[dict[str, str]]:
    """The console on the Hosting emulator and an Auth emulator (``console/serve.py``), for this module."""
    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: make setup installs Debian's chromium"
    assert (DRIVER / "node_modules" / "playwright-core").is_dir(), "tests/browser is not installed: run make setup"
    js_client.ensure_built(httpx.get(stack["api_url"] + "/openapi.json", timeout=60).json())
    subprocess.run([str(REPO_ROOT / "console" / "vendor.sh")], check=True, timeout=60)
    serve = subprocess.Popen([sys.executable, str(REPO_ROOT / "console" / "serve.py"), "--api", stack["api_url"],
                              "--auth", "--json"], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert serve.stdout is not None
        line = serve.stdout.readline()  # one line once the site answers, or EOF when it gave up
        assert line, f"console/serve.py ended ({serve.wait()}) without serving the site"
        yield dict(json.loads(line))
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()


def _sign_up(site: dict[str, str], email: str, password: str) -> str:
    answer = httpx.post(f"http://{site['auth']}/identitytoolkit.googleapis.com/v1/accounts:signUp",
                        params={"key": "any"}, json={"email": email, "password": password, "returnSecureToken": True},
                        timeout=60)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["localId"])


def _seed(stack: dict[str, Any], uid: str) -> dict[str, list[str]]:
    """The sample conversations, captured and consolidated; then a fact a later one ended, and a
    same-day change the owner has to decide. Answers each sample conversation's lines."""
    ctx = Context()
    said: dict[str, list[str]] = {}
    for path in sample_paths():
        doc = json.loads(path.read_text())
        said[doc["id"]] = [s["text"] for s in doc["transcript_segments"]]
        write_conversation(ctx, uid, doc["id"], doc)
    wait_for(lambda: set(said) <= set(all_docs(ctx, uid, "capture_runs")), timeout=180, interval=0.25,
             what="the trigger to capture every sample conversation")
    _say(ctx, stack, uid, "car", "2025-01-10", "I drive a Volvo.")  # consolidates the samples too
    _say(ctx, stack, uid, "sold", "2025-04-02", "I sold the Volvo.")
    # After the samples' "I moved to Lisbon" (16 November), or they would enter as its history.
    _say(ctx, stack, uid, "home", "2026-11-20", "I live in Seattle.")
    _say(ctx, stack, uid, "move", "2026-11-20", "I live in Boston.")  # the same day: the owner decides
    return said


def _drive(site: dict[str, str], email: str, password: str, shots: Path) -> dict[str, Any]:
    job = {"url": site["url"], "email": email, "password": password, "chromium": str(CHROMIUM),
           "shots": str(shots), "ended_before": "2025-03-01", "ended_word": "Volvo",
           "review_new": "Boston", "review_ends": "Seattle", "lookup": "c-empty-chatter"}
    run = subprocess.run(["node", str(DRIVER / "console_flow.mjs")], env=dict(os.environ, CONSOLE_JOB=json.dumps(job)),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:] + Path(site["log"]).read_text()[-2000:]
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


def test_console_walks_memories_review_restore_and_delete(stack: dict[str, Any], site: dict[str, str],
                                                          tmp_path: Path) -> None:
    email, password = f"console-{uuid.uuid4().hex[:8]}@example.com", "console-pass-1"
    uid = _sign_up(site, email, password)
    said = _seed(stack, uid)
    shots = tmp_path / "shots"
    seen = _drive(site, email, password, shots)

    assert seen["unnamed"] == []  # every visible control is labelled (signed in by the keyboard)
    # Memories by layer, each citing words of the conversation it names (a quote lies in one segment).
    layers = seen["layers"]
    assert set(layers) == {"Short-term", "Long-term", "Archive"}
    assert layers["Long-term"], layers
    cited = {card["source"] for cards in layers.values() for card in cards if card["source"] in said}
    assert {"c-dinner-plans", "c-doctor", "c-morning-standup"} <= cited
    for card in (c for cards in layers.values() for c in cards if c["source"] in said):
        assert card["quotes"], card
        for quote in card["quotes"]:
            assert any(quote in line for line in said[card["source"]]), (quote, card)
    # Newest first: Long-term's dates (the page's "added" dates) never rise down the list.
    added = [c["added"] for c in layers["Long-term"] if c["added"]]
    assert added == sorted(added, reverse=True)
    conversations = {row["id"]: row["state"] for row in seen["conversations"]}
    assert {c: conversations.get(c) for c in ("c-dinner-plans", "c-doctor")} == {"c-dinner-plans": "captured",
                                                                                 "c-doctor": "captured"}

    assert seen["looked_up"][:2] == ["c-empty-chatter", "captured"]  # small talk: captured, nothing cited
    # The review named the fact it would end; accepting it ended that fact.
    assert "Boston" in seen["review"]["new"] and "Seattle" in seen["review"]["would_end"]
    assert not any("Boston" in entry for entry in seen["after_review"]["queue"])
    assert not any("Seattle" in c for c in seen["after_review"]["current"])
    assert any("Boston" in c for c in seen["after_review"]["current"])

    # The ended fact, seen as of a day it was true, restored: current again, its history says so.
    assert seen["restore"]["ended_badge"] and "Volvo" in seen["restore"]["content"]
    assert seen["restore"]["current_after"] is True
    statuses = seen["restore"]["history_statuses"]
    assert statuses[-2:] == ["superseded", "active"], statuses

    # The delete's receipt: shown at once, and read again after a reload.
    deleted = seen["delete"]
    assert deleted["content"] not in seen["delete"]["current_after"]
    for receipt in (deleted["receipt"], deleted["receipt_after_reload"]):
        assert receipt["title"].startswith("Receipt ")
        assert {"memory items", "keyword index", "vector index"} <= set(receipt["stores"])
    assert deleted["receipt"]["title"] == deleted["receipt_after_reload"]["title"]

    # The pictures (docs/img with STRATA_CONSOLE_SHOTS), from this run.
    for name in ("console.png", "console-phone.png"):
        assert (shots / name).stat().st_size > 10_000
        if SHOTS:
            (REPO_ROOT / SHOTS).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shots / name, REPO_ROOT / SHOTS / name)

"""Model-based lifecycle test (issue 20): random sequences of ordinary user actions on the real
stack, checked after every step against a pure reference model (``tests/support/lifecycle_model``).

Every step goes through a deployed path: conversations are written to (or deleted from) Firestore
and the emulator's trigger runs ``on_conversation_complete`` / ``delete_cascade`` through the
Eventarc relay, or they go through the HTTP ``api`` function; consolidation is a Cloud Task on the
Tasks emulator that calls the ``consolidate`` function; projection runs on Pub/Sub push to
``outbox_drain``. Redelivery rules post the same CloudEvent / Pub/Sub push body again, late.

After every step (once the asynchronous paths settled: deadlines on observable events — the relay
reports the function answered, the task's pass is recorded, the outbox is empty):

* ``GET /v1/memories`` lists exactly the model's facts, each once; ``GET /v1/memories/{id}`` agrees
  and every deleted id answers 404; keyword search finds no deleted text;
* no deleted text anywhere: a byte scan of every document under ``users/{uid}`` (recursively, review
  rows included), the user's Typesense documents and Pinecone vectors, the export, the
  knowledge-graph page and the review queue the API serves;
* both indexes hold exactly the spec's projectable items; the ledger is gapless; every stored item
  is legal per the legal-states table (docs/data-model.md); no request or trigger delivery answered 5xx.

A device-scoped read (a rule like the others) lists exactly the model's facts captured on the
scope's devices (each conversation and explicit memory comes from a device fixed by its key), and a
scoped search shows nothing outside them.

Which facts each transcript line yields (and what a lone consolidation does with them) is learned
once from the stack by a calibration user; later steps are held to it.

Historical rows (issue 27) are seeded in the original's shapes, in both collections (``memories``,
the retired ``short_term``), active or hidden by their own fields, citing a conversation or not;
a rule edits one's content. ``test_issue_27_legacy_sequence`` replays fixed runs of them.

``test_issue_20_sequence`` replays the sequences issue 20 reports (and a few neighbours) as fixed
runs of the same actions, each checked the same way, so a fix can be checked against each.

Run it alone: ``make lifecycle`` (short, fixed seed) or ``make soak`` (long, seed list printed on
failure). ``STRATA_LIFECYCLE_EXAMPLES`` / ``STRATA_LIFECYCLE_STEPS`` size a run;
``STRATA_LIFECYCLE_SHRINK=1`` lets hypothesis shrink a failure to a minimal sequence.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from core.bootstrap import Context
from strata_dev.localstack.tokens import emulator_token
from tests.support import trace
from tests.support.cloudevents import conversation_written
from tests.support.firestore_checks import (
    all_docs,
    assert_all_items_legal,
    assert_ledger_gapless,
    assert_wipe_receipt_content_free,
    relay_deliveries,
    user_documents,
    wait_for,
)
from tests.support.lifecycle_model import (
    EXPLICIT_TEXTS,
    LEGACY_STATES,
    LEGACY_TEXTS,
    OTHER_LINES,
    OWNER_LINES,
    SCOPED_DEVICES,
    Fact,
    LifecycleModel,
    LineFacts,
    device_for,
)

pytestmark = pytest.mark.e2e
PROJECT = "demo-strata"
DEADLINE_S = 90.0
SOAK = bool(os.environ.get("STRATA_SOAK_EXAMPLES"))
EXAMPLES = int(os.environ.get("STRATA_SOAK_EXAMPLES") or os.environ.get("STRATA_LIFECYCLE_EXAMPLES") or 4)
STEPS = int(os.environ.get("STRATA_LIFECYCLE_STEPS") or (25 if SOAK else 12))
SHRINK = os.environ.get("STRATA_LIFECYCLE_SHRINK") == "1"


def _auth(uid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {emulator_token(uid, PROJECT)}"}


def device_headers(device: str | None) -> dict[str, str]:
    """The headers a client on ``device`` (``{platform}_{hash}``) sends."""
    if device is None:
        return {}
    platform, raw_hash = device.split("_")
    return {"X-Device-Id-Hash": raw_hash, "X-App-Platform": platform}


def conversation_doc(cid: str, owner: tuple[str, ...], other: str) -> dict[str, Any]:
    lines = [(OWNER_LINES[k], True) for k in owner] + [(other, False)]
    segments = [{"id": f"{cid}-s{i}", "text": text, "speaker": "SPEAKER_00" if mine else "SPEAKER_01",
                 "speaker_id": 0 if mine else 1, "is_user": mine, "start": i * 5.0, "end": i * 5.0 + 4.0}
                for i, (text, mine) in enumerate(lines)]
    device = device_for(cid)  # the device the app recorded it on (none for some)
    return {"status": "completed", "discarded": False, "source": "omi", "language": "en",
            "structured": {"title": cid, "overview": ""}, "transcript_segments": segments,
            **({"client_device_id": device, "client_platform": device.split("_")[0]} if device else {})}


def push_body(uid: str) -> dict[str, Any]:
    import base64

    message_id = f"msg-{uuid.uuid4().hex[:10]}"
    data = base64.b64encode(json.dumps({"uid": uid, "sequence": 1}).encode()).decode()
    return {"message": {"data": data, "messageId": message_id, "message_id": message_id,
                        "publishTime": datetime.now(UTC).isoformat(), "attributes": {}},
            "subscription": f"projects/{PROJECT}/subscriptions/strata-projection-push"}


class Driver:
    """The real stack, as the steps use it; records every HTTP status it saw."""

    def __init__(self, stack: dict[str, Any], uid: str) -> None:
        self.stack, self.uid, self.ctx = stack, uid, Context()
        self.statuses: list[tuple[str, int]] = []

    def api(self, method: str, path: str, *, retryable: tuple[int, ...] = (), device: str | None = None,
            **kwargs: Any) -> httpx.Response:
        """One request (from ``device``, when given); a 5xx fails the step unless the caller retries on
        that status (``retryable``)."""
        response = httpx.request(method, self.stack["api_url"] + path,
                                 headers={**_auth(self.uid), **device_headers(device)}, timeout=DEADLINE_S, **kwargs)
        self.statuses.append((f"{method} {path}", response.status_code))
        assert response.status_code < 500 or response.status_code in retryable, (
            f"{method} {path} answered {response.status_code}: {response.text}")
        return response

    def document(self, cid: str) -> str:
        return f"users/{self.uid}/conversations/{cid}"

    def wait_delivered(self, cid: str, before: int, function: str = "on_conversation_complete") -> None:
        wait_for(lambda: relay_deliveries(self.stack, self.document(cid), function) > before, timeout=DEADLINE_S,
                 interval=0.1, what=f"{function} to answer the event for {cid}")

    def deliveries(self, cid: str, function: str = "on_conversation_complete") -> int:
        return relay_deliveries(self.stack, self.document(cid), function)

    def relay_failures(self) -> list[str]:
        log = Path(self.stack["state_dir"]) / "logs" / "relay.log"
        needle = f"users/{self.uid}/"
        return [line for line in log.read_text(errors="replace").splitlines()
                if needle in line and ("failed" in line or "giving up" in line)] if log.exists() else []

    def settle(self) -> None:
        """Wait until projection delivery (Pub/Sub push → outbox_drain) emptied the outbox."""
        wait_for(lambda: not trace.outbox(self.ctx, self.uid), timeout=DEADLINE_S, interval=0.2,
                 what="the outbox to drain through Pub/Sub")

    def listed(self, scope: dict[str, str] | None = None, device: str | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = None
        for _ in range(20):
            params = {"limit": "100", **(scope or {}), **({"cursor": cursor} if cursor else {})}
            page = self.api("GET", "/v1/memories", params=params, device=device).json()
            out.extend(page["memories"])
            cursor = page.get("next_cursor")
            if not cursor:
                return out
        raise AssertionError("the list did not end in 20 pages")


# ------------------------------------------------------------------------------------ calibration
@pytest.fixture(scope="module")
def line_facts(stack: dict[str, Any]) -> LineFacts:
    """Learn, once, which facts each owner line yields and what a lone pass does with them."""
    driver = Driver(stack, f"lc-cal-{uuid.uuid4().hex[:8]}")
    keys = tuple(OWNER_LINES)
    doc = conversation_doc("cal", keys, OTHER_LINES[0])
    before = driver.deliveries("cal")
    driver.ctx.paths.doc(driver.uid, "conversations", "cal").set(doc)
    driver.wait_delivered("cal", before)
    memories = driver.listed()
    task = f"lc-cal-{uuid.uuid4().hex[:10]}"
    driver.ctx.tasks.enqueue(stack["consolidate_url"], {"uid": driver.uid}, task_id=task)
    wait_for(lambda: _pass_ran(driver, task), timeout=DEADLINE_S, what="the calibration pass")
    stored = all_docs(driver.ctx, driver.uid, "memory_items")
    by_line: dict[str, list[Fact]] = {}
    for memory in memories:
        segment = memory["evidence"][0]["quote_refs"][0]["segment_id"]
        line = keys[int(segment.rsplit("-s", 1)[1])]
        quotes = tuple(q["quote"] for e in memory["evidence"] for q in e["quote_refs"])
        by_line.setdefault(line, []).append(Fact(memory["content"], quotes, stored[memory["id"]].get("route")))
    assert by_line, "the calibration conversation yielded no facts"
    return LineFacts({k: tuple(v) for k, v in by_line.items()})


def _pass_ran(driver: Driver, task: str) -> bool:
    snap = driver.ctx.paths.doc(driver.uid, "memory_state", "last_consolidation").get()
    trigger = ((snap.to_dict() or {}).get("trigger") or {}) if snap.exists else {}
    return str(trigger.get("task_name") or "").endswith(task)


# ---------------------------------------------------------------------------------- the machine
class Lifecycle(RuleBasedStateMachine):
    stack: dict[str, Any]
    calibrated: LineFacts

    def __init__(self) -> None:
        super().__init__()
        self.uid = f"lc-{uuid.uuid4().hex[:10]}"
        self.driver = Driver(self.stack, self.uid)
        self.model = LifecycleModel(self.calibrated)
        self.sent: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []  # (cid, doc, old) written
        self.next_cid = 0
        self.texts_used: set[str] = set()
        self.legacy_used: set[str] = set()
        self.wipe_receipt: str | None = None  # the account wipe's receipt id, once wiped

    # ------------------------------------------------------------------ conversations
    @initialize()
    def start(self) -> None:
        self.driver.settle()

    def _write(self, cid: str, owner: tuple[str, ...], other: str, *, via_api: bool) -> None:
        doc = conversation_doc(cid, owner, other)
        old_ref = self.driver.ctx.paths.doc(self.uid, "conversations", cid)
        old = old_ref.get().to_dict() if cid in self.model.conversations else None
        before = self.driver.deliveries(cid)
        if via_api:
            response = self.driver.api("POST", "/v1/conversations", json={"id": cid, **doc})
            assert response.status_code == 201, response.text
        else:
            old_ref.set(doc)
        self.driver.wait_delivered(cid, before)
        self.sent.append((cid, old_ref.get().to_dict(), old))
        self.model.write(cid, owner, other)
        self.model.captured_on(cid, device_for(cid))

    # Plain actions (the rules below draw their arguments; fixed sequences call these directly).
    def do_write(self, owner: tuple[str, ...], other: str = OTHER_LINES[0], *, via_api: bool = False) -> str:
        cid = f"c{self.next_cid}"
        self.next_cid += 1
        self._write(cid, owner, other, via_api=via_api)
        return cid

    def do_edit(self, cid: str, owner: tuple[str, ...], other: str) -> None:
        self._write(cid, owner, other, via_api=False)

    def do_delete_conversation(self, cid: str, *, via_api: bool) -> None:
        before = self.driver.deliveries(cid, "delete_cascade")
        if via_api:
            response = self.driver.api("DELETE", f"/v1/conversations/{cid}")
            assert response.status_code == 200, response.text
        else:
            self.driver.ctx.paths.doc(self.uid, "conversations", cid).delete()
        self.driver.wait_delivered(cid, before, "delete_cascade")
        self.model.delete_conversation(cid)

    def do_reprocess(self, cid: str) -> None:
        response = self.driver.api("POST", f"/v1/conversations/{cid}/reprocess")
        assert response.status_code == 200, response.text
        self.model.reprocessed(cid)

    def do_create_explicit(self, text: str) -> str:
        self.texts_used.add(text)
        response = self.driver.api("POST", "/v3/memories", json={"content": text}, device=device_for(text))
        assert response.status_code == 201, response.text
        assert response.json()["content"] == text
        self.model.add_explicit(response.json()["id"], text)
        self.model.captured_on(response.json()["id"], device_for(text))
        return str(response.json()["id"])

    def do_edit_explicit(self, memory_id: str) -> None:
        history = self.model.explicit[memory_id].history
        text = f"{history[0]} (edit {len(history)})"
        response = self.driver.api("PATCH", f"/v3/memories/{memory_id}", params={"value": text})
        assert response.status_code == 200, response.text
        self.model.edit_explicit(memory_id, text)

    def do_delete_content(self, content: str) -> None:
        rows = [m for m in self.driver.listed() if m["content"] == content]
        assert rows, f"{content!r} is not listed before its delete"
        response = self.driver.api("DELETE", f"/v3/memories/{rows[0]['id']}")
        assert response.status_code == 200, response.text
        self.model.delete_content(content, {rows[0]["id"], *response.json().get("deleted", [])})

    def do_delete_all(self) -> None:
        ids = {m["id"] for m in self.driver.listed()}
        response = self.driver.api("DELETE", "/v3/memories")
        assert response.status_code == 200, response.text
        self.model.delete_all(ids)

    def do_wipe(self) -> None:
        # The contract: 503 means call again (here: a drain still holds a projection lease).
        for _ in range(20):
            response = self.driver.api("DELETE", "/v1/users/delete-account", retryable=(503,))
            if response.status_code == 200 and response.json().get("state") == "completed":
                self.wipe_receipt = response.json()["receipt_id"]
                break
            assert response.status_code in (200, 503), response.text
            time.sleep(0.5)
        else:
            raise AssertionError("the account wipe never completed")
        self.model.wipe()

    def do_consolidate(self) -> None:
        task = f"lc-{uuid.uuid4().hex[:12]}"
        self.driver.ctx.tasks.enqueue(self.stack["consolidate_url"], {"uid": self.uid}, task_id=task)
        wait_for(lambda: _pass_ran(self.driver, task), timeout=DEADLINE_S, interval=0.2,
                 what="the Cloud Task to run the consolidate function")
        self.model.consolidated()

    def do_resolve(self, decision: str, pick: int = 0) -> None:
        reviews = self.waiting_reviews()
        entry = reviews[pick % len(reviews)]
        body: dict[str, Any] = {"decision": decision}
        correction = None
        if decision == "correct":
            correction = f"User is training for the Porto half marathon ({len(self.model.corrected) + 1})"
            body["correction"] = correction
        response = self.driver.api("POST", f"/v3/memories/review-queue/{entry['review_id']}/resolve", json=body)
        assert response.status_code == 200, response.text
        self.model.resolve(entry["content"], decision, correction)

    def waiting_reviews(self) -> list[dict[str, Any]]:
        """The review queue, checked against the model: exactly the facts waiting in review."""
        reviews = self.driver.api("GET", "/v3/memories/review-queue").json()["reviews"]
        waiting = {self.model.corrected.get(k, k[1]) for k in self.model.reviewed}
        assert {r["content"] for r in reviews} == waiting, "the review queue is not what the model expects"
        return sorted(reviews, key=lambda r: r["review_id"])

    def do_revise_in_review(self, kind: str, pick: int = 0) -> None:
        """A visibility or review-flag edit of a fact waiting in review (issue 27, point 8)."""
        reviews = self.waiting_reviews()
        entry = reviews[pick % len(reviews)]
        path = f"/v3/memories/{entry['memory_id']}"
        if kind == "visibility":
            response = self.driver.api("PATCH", f"{path}/visibility",
                                       params={"value": "public" if pick % 2 == 0 else "private"})
        else:
            response = self.driver.api("POST", f"{path}/review", params={"value": "true" if pick % 2 else "false"})
        assert response.status_code == 200, response.text
        self.model.revised_in_review(entry["content"])

    def do_redeliver(self, index: int) -> None:
        """The same Firestore CloudEvent again, late (after whatever happened since)."""
        cid, doc, old = self.sent[index % len(self.sent)]
        body, headers = conversation_written(self.uid, cid, doc, old)
        response = httpx.post(self.stack["function_urls"]["on_conversation_complete"], content=body,
                              headers=headers, timeout=DEADLINE_S)
        assert response.status_code < 300, f"redelivery answered {response.status_code}: {response.text}"

    def do_redeliver_push(self) -> None:
        """A Pub/Sub push for this user again (a duplicate or late nudge of the drain)."""
        response = httpx.post(self.stack["function_urls"]["outbox_drain"], json=push_body(self.uid),
                              timeout=DEADLINE_S)
        assert 200 <= response.status_code < 300, response.status_code

    def do_device_read(self, scope: str, pick: int) -> None:
        """A read scoped to devices (the spec's universal retrieval filter): ``current`` from one of
        the devices, or ``explicit`` naming one, both, or one no memory was captured on."""
        self.driver.settle()
        if scope == "current":
            device: str | None = SCOPED_DEVICES[pick % len(SCOPED_DEVICES)]
            devices, params = {device}, {"device_scope": "current"}
        else:
            device = None
            devices = [{SCOPED_DEVICES[0]}, {SCOPED_DEVICES[1]}, set(SCOPED_DEVICES), {"web_99999999"}][pick % 4]
            params = {"device_scope": "explicit", "device_ids": ",".join(sorted(devices))}
        rows = self.driver.listed(params, device)
        expected = self.model.visible_on(devices)
        got = {m["content"] for m in rows}
        assert got == expected, (f"GET /v1/memories {params} (from {device}): unexpected {sorted(got - expected)}, "
                                 f"missing {sorted(expected - got)}")
        outside = [m["id"] for m in rows if not set(m["capture_device_ids"]) & devices]
        assert not outside, f"listed under {params} but captured on none of {sorted(devices)}: {outside}"
        assert got <= {m["content"] for m in self.driver.listed()}  # a scope only narrows the default read
        for text in sorted(self.model.visible())[:2]:  # a scoped search shows nothing outside the scope
            found = self.driver.api("GET", "/v1/memories/search", params={"q": text, "limit": "20", **params},
                                    device=device).json()["memories"]
            assert {m["content"] for m in found} <= expected, (text, params, [m["content"] for m in found])

    # Historical rows (issue 27): seeded in the original's shapes, as the original left them.
    def do_seed_legacy(self, collection: str, text: str, cites: str | None, state: str = "active") -> str:
        memory_id = f"leg-{len(self.legacy_used)}"
        self.legacy_used.add(text)
        row: dict[str, Any] = {"content": text, "created_at": datetime.now(UTC) - timedelta(days=400),
                               "category": "hobbies"}
        if collection == "short_term":
            row["status"] = "rejected" if state == "gone" else "pending_consolidation"
        elif state == "gone":
            row["deleted"] = True
        if state == "superseded":
            row["superseded_by"] = "leg-long-gone"
        elif state == "invalidated":
            row["invalid_at"] = datetime.now(UTC) - timedelta(days=100)
        if cites is not None:  # the original's older rows name the conversation ``memory_id``
            row["memory_id" if collection == "memories" and len(self.legacy_used) % 2 else "conversation_id"] = cites
        self.driver.ctx.paths.doc(self.uid, collection, memory_id).set(row)
        self.model.seed_legacy(memory_id, collection, text, cites, state)
        return memory_id

    def do_edit_legacy(self, memory_id: str) -> None:
        text = f"{self.model.legacy[memory_id].content} (edited)"
        response = self.driver.api("PATCH", f"/v3/memories/{memory_id}", params={"value": text})
        assert response.status_code == 200, response.text
        assert (response.json()["id"], response.json()["content"]) == (memory_id, text)
        self.model.edit_legacy(memory_id, text)

    def check(self) -> None:
        self.surfaces_equal_the_model()
        self.no_deleted_text_anywhere()
        self.stores_are_sound()

    # ------------------------------------------------------------------ rules
    @precondition(lambda self: not self.model.wiped)
    @rule(owner=st.lists(st.sampled_from(sorted(OWNER_LINES)), min_size=1, max_size=3, unique=True),
          other=st.sampled_from(OTHER_LINES), via_api=st.booleans())
    def write_conversation(self, owner: list[str], other: str, via_api: bool) -> None:
        self.do_write(tuple(owner), other, via_api=via_api)

    @precondition(lambda self: not self.model.wiped and self.model.conversations)
    @rule(data=st.data())
    def edit_conversation(self, data: st.DataObject) -> None:
        cid = data.draw(st.sampled_from(sorted(self.model.conversations)), label="conversation")
        conv = self.model.conversations[cid]
        kind = data.draw(st.sampled_from(["other_speaker", "drop_line", "add_line"]), label="edit")
        owner, other = conv.owner, conv.other
        if kind == "other_speaker":
            other = data.draw(st.sampled_from([t for t in OTHER_LINES if t != conv.other]), label="other")
        elif kind == "drop_line" and len(owner) > 1:
            drop = data.draw(st.sampled_from(owner), label="drop")
            owner = tuple(k for k in owner if k != drop)
        else:
            extra = [k for k in sorted(OWNER_LINES) if k not in owner]
            if extra:
                owner = (*owner, data.draw(st.sampled_from(extra), label="add"))
        self.do_edit(cid, owner, other)

    @precondition(lambda self: not self.model.wiped and self.model.conversations)
    @rule(data=st.data(), via_api=st.booleans())
    def delete_conversation(self, data: st.DataObject, via_api: bool) -> None:
        self.do_delete_conversation(data.draw(st.sampled_from(sorted(self.model.conversations)),
                                              label="conversation"), via_api=via_api)

    @precondition(lambda self: not self.model.wiped and self.model.conversations)
    @rule(data=st.data())
    def reprocess(self, data: st.DataObject) -> None:
        self.do_reprocess(data.draw(st.sampled_from(sorted(self.model.conversations)), label="conversation"))

    @precondition(lambda self: not self.model.wiped)
    @rule(data=st.data())
    def create_explicit(self, data: st.DataObject) -> None:
        unused = [t for t in EXPLICIT_TEXTS if t not in self.texts_used]
        if unused:
            self.do_create_explicit(data.draw(st.sampled_from(unused), label="text"))

    @precondition(lambda self: not self.model.wiped and self.model.explicit)
    @rule(data=st.data())
    def edit_explicit(self, data: st.DataObject) -> None:
        self.do_edit_explicit(data.draw(st.sampled_from(sorted(self.model.explicit)), label="memory"))

    @precondition(lambda self: not self.model.wiped and self.model.visible())
    @rule(data=st.data())
    def delete_memory(self, data: st.DataObject) -> None:
        self.do_delete_content(data.draw(st.sampled_from(sorted(self.model.visible())), label="content"))

    @precondition(lambda self: not self.model.wiped and self.model.visible())
    @rule()
    def delete_all(self) -> None:
        self.do_delete_all()

    # Late in a run: a wipe ends what the other rules can do with this user (redelivery goes on).
    @precondition(lambda self: not self.model.wiped and len(self.model.ever_conversations) >= 2)
    @rule()
    def wipe_account(self) -> None:
        self.do_wipe()

    @precondition(lambda self: not self.model.wiped)
    @rule()
    def consolidate(self) -> None:
        self.do_consolidate()

    @precondition(lambda self: not self.model.wiped and self.model.reviewed)
    @rule(pick=st.integers(0, 5), decision=st.sampled_from(["accept", "reject", "correct"]))
    def resolve_review(self, pick: int, decision: str) -> None:
        self.do_resolve(decision, pick)

    @precondition(lambda self: not self.model.wiped)
    @rule(scope=st.sampled_from(["current", "explicit"]), pick=st.integers(0, 3))
    def device_scoped_read(self, scope: str, pick: int) -> None:
        self.do_device_read(scope, pick)

    @precondition(lambda self: not self.model.wiped and len(self.legacy_used) < len(LEGACY_TEXTS))
    @rule(data=st.data(), collection=st.sampled_from(["memories", "short_term"]),
          state=st.sampled_from(LEGACY_STATES))
    def seed_legacy_row(self, data: st.DataObject, collection: str, state: str) -> None:
        text = data.draw(st.sampled_from([t for t in LEGACY_TEXTS if t not in self.legacy_used]), label="text")
        cites = data.draw(st.sampled_from([None, "old-conversation", *sorted(self.model.conversations)]),
                          label="cites")
        self.do_seed_legacy(collection, text, cites, state)

    @precondition(lambda self: not self.model.wiped
                  and any(r.state == "active" for r in self.model.legacy.values()))
    @rule(data=st.data())
    def edit_legacy_row(self, data: st.DataObject) -> None:
        active = sorted(m for m, r in self.model.legacy.items() if r.state == "active")
        self.do_edit_legacy(data.draw(st.sampled_from(active), label="legacy row"))

    @precondition(lambda self: not self.model.wiped and self.model.reviewed)
    @rule(pick=st.integers(0, 5), kind=st.sampled_from(["visibility", "review_flag"]))
    def revise_in_review(self, pick: int, kind: str) -> None:
        self.do_revise_in_review(kind, pick)

    @precondition(lambda self: self.sent)
    @rule(index=st.integers(0, 50))
    def redeliver_capture_event(self, index: int) -> None:
        self.do_redeliver(index)

    @rule()
    def redeliver_projection_push(self) -> None:
        self.do_redeliver_push()

    def teardown(self) -> None:
        if os.environ.get("STRATA_LIFECYCLE_VERBOSE") == "1":
            print(f"\n{self.uid}: {len(self.driver.statuses)} requests; conversations "
                  f"{sorted(self.model.conversations)}; visible {sorted(self.model.visible())}; "
                  f"forbidden {sorted(self.model.forbidden())}; wiped {self.model.wiped}")

    # ------------------------------------------------------------------ invariants
    @invariant()
    def surfaces_equal_the_model(self) -> None:
        self.driver.settle()
        rows = self.driver.listed()
        counts = Counter(m["content"] for m in rows)
        twice = sorted(f"{c!r} x{n}" for c, n in counts.items() if n > self.model.max_rows(c))
        assert not twice, f"listed more often than the lineages allow (one logical memory per fact): {twice}"
        expected = self.model.visible()
        assert set(counts) == expected, (f"GET /v1/memories: unexpected {sorted(set(counts) - expected)}, "
                                         f"missing {sorted(expected - set(counts))}")
        listed_ids = {m["id"] for m in rows}
        for m in rows:
            one = self.driver.api("GET", f"/v1/memories/{m['id']}")
            assert one.status_code == 200 and one.json()["content"] == m["content"], one.text
        for memory_id in sorted(self.model.deleted_ids - listed_ids):
            gone = self.driver.api("GET", f"/v1/memories/{memory_id}")
            assert gone.status_code == 404, f"deleted memory {memory_id} answers {gone.status_code}: {gone.text}"

    @invariant()
    def no_deleted_text_anywhere(self) -> None:
        self.driver.settle()
        forbidden = sorted(self.model.forbidden())
        if not forbidden:
            return
        places: dict[str, str] = {f"firestore:{p}": json.dumps(d, default=str)
                                  for p, d in user_documents(self.driver.ctx, self.uid).items()}
        for doc in trace.typesense_docs(self.driver.ctx, self.uid):
            places[f"typesense:{doc.get('id')}"] = json.dumps(doc)
        for vid, record in trace.pinecone_vectors(self.driver.ctx, self.uid).items():
            places[f"pinecone:{vid}"] = json.dumps(record.get("metadata") or {})
        places["export"] = self.driver.api("GET", "/v1/memories/export").text
        places["knowledge-graph"] = self.driver.api("GET", "/v1/knowledge-graph", params={"limit": "2000"}).text
        places["review-queue"] = self.driver.api("GET", "/v3/memories/review-queue", params={"limit": "500"}).text
        hits = sorted({f"{text!r} in {where}" for text in forbidden for where, blob in places.items()
                       if text.casefold() in blob.casefold()})
        assert not hits, "deleted text survives:\n  " + "\n  ".join(hits[:40])
        for text in forbidden[:3]:
            found = self.driver.api("GET", "/v1/memories/search", params={"q": text, "limit": "20"}).json()
            assert not [m for m in found["memories"] if text.casefold() in m["content"].casefold()], text
        trace.assert_forgotten(self.driver.ctx, self.uid, self.model.deleted_ids, forbidden)

    @invariant()
    def every_waiting_review_is_listed(self) -> None:
        """Each fact the model holds in review is in the queue (and nothing else is), so the user
        can still answer it (issue 27: a revision must not strand an item in review)."""
        self.driver.settle()
        self.waiting_reviews()

    @invariant()
    def stores_are_sound(self) -> None:
        self.driver.settle()
        if self.model.wiped:
            left = sorted(user_documents(self.driver.ctx, self.uid))
            assert not left, f"documents left after the account wipe: {left[:20]}"
            # What the wipe leaves outside the subtree on purpose: its receipt, ids and times only.
            assert self.wipe_receipt is not None
            assert_wipe_receipt_content_free(self.driver.ctx, self.uid, self.wipe_receipt)
            keyword, vector = trace.provider_sets(self.driver.ctx, self.uid)
            assert not keyword and not vector, "index entries left after the account wipe"
            return
        trace.assert_converged(self.driver.ctx, self.uid)
        assert_ledger_gapless(self.driver.ctx, self.uid)
        assert_all_items_legal(self.driver.ctx, self.uid)
        failures = self.driver.relay_failures()
        assert not failures, "trigger deliveries failed (5xx or no answer):\n  " + "\n  ".join(failures[:10])


def test_lifecycle_sequences_keep_every_promise(stack: dict[str, Any], line_facts: LineFacts) -> None:
    Lifecycle.stack = stack
    Lifecycle.calibrated = line_facts
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if SHRINK else [])
    run_state_machine_as_test(Lifecycle, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=not SOAK, phases=phases,
        print_blob=True, suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.verbose if os.environ.get("STRATA_LIFECYCLE_VERBOSE") == "1" else Verbosity.normal))


# ----------------------------------------------------------------------- issue 20's sequences
# The sequences issue 20 reports, as fixed runs of the same actions and checks (each must hold
# after the lifecycle fixes; before them each fails on the invariant named in its id).
def _deleted_fact_comes_back(m: Lifecycle) -> None:
    cid = m.do_write(("lisbon", "dog"))
    m.do_delete_content("User moved to Lisbon in March")
    m.check()
    m.do_edit(cid, ("lisbon", "dog"), OTHER_LINES[1])  # another speaker's line: the owner's facts are unchanged
    m.check()
    m.do_reprocess(cid)


def _rejected_fact_keeps_content_after_conversation_delete(m: Lifecycle) -> None:
    cid = m.do_write(("marathon",))
    m.do_consolidate()
    m.do_resolve("reject")
    m.check()
    m.do_delete_conversation(cid, via_api=True)


def _capture_redelivered_after_wipe(m: Lifecycle) -> None:
    m.do_write(("dog",))
    m.do_write(("acme",))
    m.do_wipe()
    m.check()
    m.do_redeliver(0)


def _deleted_long_term_text_survives(m: Lifecycle) -> None:
    m.do_create_explicit(EXPLICIT_TEXTS[0])
    m.do_consolidate()
    m.check()
    m.do_delete_content(EXPLICIT_TEXTS[0])


def _one_fact_two_conversations_one_pass(m: Lifecycle) -> None:
    m.do_write(("meat",))
    m.do_write(("meat",))
    m.do_consolidate()


def _stale_capture_event_after_an_edit(m: Lifecycle) -> None:
    cid = m.do_write(("lisbon", "dog"))
    m.do_edit(cid, ("lisbon",), OTHER_LINES[0])
    m.check()
    m.do_redeliver(0)  # the first revision's event, late


def _delete_all_then_reprocess(m: Lifecycle) -> None:
    cid = m.do_write(("dog", "hiking"))
    m.do_delete_all()
    m.check()
    m.do_reprocess(cid)


def _capture_event_after_conversation_delete(m: Lifecycle) -> None:
    cid = m.do_write(("cello",))
    m.do_delete_conversation(cid, via_api=False)
    m.check()
    m.do_redeliver(0)  # the create event again, after the conversation is gone


def _delete_all_scrubs_a_rejected_fact(m: Lifecycle) -> None:
    m.do_write(("marathon", "dog"))
    m.do_consolidate()
    m.do_resolve("reject")
    m.check()
    m.do_delete_all()


def _device_scoped_reads(m: Lifecycle) -> None:
    """Issue 27: a fact said on two devices is in both scopes, on one after that statement goes."""
    first = m.do_write(("meat", "dog"))  # c0: the iPhone
    m.do_write(("meat",), via_api=True)  # c1: the Android phone
    m.do_write(("cello",))  # c2: no known device
    m.do_create_explicit(EXPLICIT_TEXTS[3])  # the iPhone
    for scope, pick in (("current", 0), ("current", 1), ("explicit", 2), ("explicit", 3)):
        m.do_device_read(scope, pick)
    m.do_consolidate()  # the two statements of "meat" become one lineage
    m.check()
    for scope, pick in (("current", 0), ("current", 1), ("explicit", 2)):
        m.do_device_read(scope, pick)
    m.do_delete_conversation(first, via_api=True)
    m.check()
    for scope, pick in (("current", 0), ("current", 1)):
        m.do_device_read(scope, pick)


def _corrected_review_then_conversation_delete(m: Lifecycle) -> None:
    """Issue 27 (1): the correction stands on its own; the words it replaced go with the conversation."""
    cid = m.do_write(("marathon", "dog"))
    m.do_consolidate()
    m.do_resolve("correct")
    m.check()
    m.do_delete_conversation(cid, via_api=True)


def _edits_of_a_fact_in_review_keep_it_answerable(m: Lifecycle) -> None:
    cid = m.do_write(("marathon", "dog"))
    m.do_consolidate()
    m.do_revise_in_review("visibility")
    m.check()
    m.do_revise_in_review("review_flag", 1)
    m.do_edit(cid, ("marathon", "dog"), OTHER_LINES[2])  # captured again: the fact's evidence is revised
    m.check()
    m.do_resolve("correct")


SEQUENCES = {
    "1-deleted-fact-comes-back": _deleted_fact_comes_back,
    "2-rejected-fact-scrubbed-on-conversation-delete": _rejected_fact_keeps_content_after_conversation_delete,
    "3-capture-redelivered-after-wipe": _capture_redelivered_after_wipe,
    "4-deleted-long-term-text-survives": _deleted_long_term_text_survives,
    "5-one-fact-two-conversations-one-pass": _one_fact_two_conversations_one_pass,
    "late-stale-capture-event": _stale_capture_event_after_an_edit,
    "1b-delete-all-then-reprocess": _delete_all_then_reprocess,
    "3b-capture-event-after-conversation-delete": _capture_event_after_conversation_delete,
    "2b-delete-all-scrubs-a-rejected-fact": _delete_all_scrubs_a_rejected_fact,
    "27-device-scoped-reads": _device_scoped_reads,
    "27-1-corrected-review-then-conversation-delete": _corrected_review_then_conversation_delete,
    "27-8-edits-of-a-fact-in-review-keep-it-answerable": _edits_of_a_fact_in_review_keep_it_answerable,
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_issue_20_sequence(stack: dict[str, Any], line_facts: LineFacts, name: str) -> None:
    Lifecycle.stack = stack
    Lifecycle.calibrated = line_facts
    machine = Lifecycle()
    machine.start()
    SEQUENCES[name](machine)
    machine.check()


# ------------------------------------------------------------------- issue 27's historical rows
# Fixed runs of the historical-row rules (both collections), checked the same way after each step.
def _legacy_rows_follow_their_conversation(m: Lifecycle) -> None:
    cid = m.do_write(("dog",))
    m.do_seed_legacy("memories", LEGACY_TEXTS[0], cid)
    m.do_seed_legacy("short_term", LEGACY_TEXTS[1], cid)
    m.do_seed_legacy("memories", LEGACY_TEXTS[2], cid, "invalidated")
    m.do_seed_legacy("short_term", LEGACY_TEXTS[3], None)
    m.check()
    m.do_consolidate()  # consolidation leaves historical rows alone (no backfill)
    m.check()
    m.do_reprocess(cid)  # Q7: the rows citing it go; the uncited one stays
    m.check()
    m.do_edit(cid, ("dog", "cello"), OTHER_LINES[1])


def _edited_legacy_rows_stay_listed(m: Lifecycle) -> None:
    cid = m.do_write(("acme",))
    first = m.do_seed_legacy("memories", LEGACY_TEXTS[4], cid)
    second = m.do_seed_legacy("short_term", LEGACY_TEXTS[5], cid)
    m.do_edit_legacy(first)
    m.do_edit_legacy(second)
    m.check()
    m.do_consolidate()
    m.check()
    m.do_delete_conversation(cid, via_api=True)  # the edits are the user's own words now: they stay
    m.check()
    m.do_delete_content(f"{LEGACY_TEXTS[4]} (edited)")


def _delete_all_removes_every_legacy_row(m: Lifecycle) -> None:
    m.do_write(("hiking",))
    for index, state in enumerate(LEGACY_STATES):
        m.do_seed_legacy("memories" if index % 2 else "short_term", LEGACY_TEXTS[index], "old-conversation", state)
    m.check()
    m.do_delete_all()


LEGACY_SEQUENCES = {
    "27-legacy-rows-follow-their-conversation": _legacy_rows_follow_their_conversation,
    "27-edited-legacy-rows-stay-listed": _edited_legacy_rows_stay_listed,
    "27-delete-all-removes-every-legacy-row": _delete_all_removes_every_legacy_row,
}


@pytest.mark.parametrize("name", sorted(LEGACY_SEQUENCES))
def test_issue_27_legacy_sequence(stack: dict[str, Any], line_facts: LineFacts, name: str) -> None:
    Lifecycle.stack = stack
    Lifecycle.calibrated = line_facts
    machine = Lifecycle()
    machine.start()
    LEGACY_SEQUENCES[name](machine)
    machine.check()

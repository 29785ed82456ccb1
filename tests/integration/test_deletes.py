"""Issue 6 on the whole local stack: deletes that stick, checked by the trace check.

An integration test, not e2e, and it says so: to build each user quickly and deterministically it
captures in this process (``trace.capture_now``), calls ``consolidation.run_pass`` directly and lets
``trace.converge`` make backing-off outbox events due now. The deletes themselves go through the
deployed paths (the HTTP API, a Firestore delete that fires ``delete_cascade``); the e2e lifecycle
test (``tests/e2e/test_lifecycle_model.py``) covers the same deletes with every step deployed.

Every user here is built the same way (captured conversations, consolidated by the rule router):

* ``ca`` says "moved to Lisbon", "stopped eating meat" and "blood pressure ... cutting down on
  coffee" → four Long-term facts (the blood-pressure one restricted);
* ``cb`` repeats Lisbon and the meat statement → two archived aliases; the Long-term facts absorb
  ``cb``'s evidence (two conversations now support each);
* ``cc`` says "moved to Porto" and "training for the Lisbon half marathon" → Porto ends Lisbon (a
  later value of where the user lives), the marathon waits in the review queue.

Each delete (single, lineage, delete-all, conversation cascade by API and by a direct Firestore
delete, reprocess retract, account delete) is followed by a drain and the trace check, once with the
providers up and once with Typesense and the Pinecone endpoint stopped during the delete.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from core.api.auth import emulator_token
from core.bootstrap import Context
from core.domain.states import Status
from core.services import consolidation
from strata_dev.localstack import faults
from tests.support import trace
from tests.support.firestore_checks import assert_wipe_receipt_content_free

pytestmark = pytest.mark.integration

LISBON = "User moved to Lisbon in March"
MEAT = "User is vegetarian and stopped eating meat about two years ago"
PRESSURE = "User's blood pressure is a bit high, according to their doctor"
COFFEE = "User is cutting down on coffee"
PORTO = "User moved to Porto in May"
MARATHON = "User is training for the Lisbon half marathon in October"

CONVERSATIONS = {
    "ca": ["By the way I moved to Lisbon in March.", "I stopped eating meat about two years ago.",
           "The doctor said my blood pressure is a bit high, so I'm cutting down on coffee."],
    "cb": ["I stopped eating meat about two years ago.", "By the way I moved to Lisbon in March."],
    "cc": ["Actually I moved to Porto in May.", "Also I'm training for the Lisbon half marathon in October."],
}


@dataclass
class User:
    uid: str
    ctx: Context
    stack: dict[str, Any]
    ids: dict[str, list[str]] = field(default_factory=dict)  # content → memory ids (survivor first)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {emulator_token(self.uid, 'demo-strata')}"}

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.stack["api_url"] + path, headers=self.headers, timeout=60, **kwargs)

    def one(self, content: str, layer: str = "long_term") -> str:
        found = [m for m in trace.items(self.ctx, self.uid).values() if m.content == content and m.layer == layer]
        assert len(found) == 1, (content, layer, found)
        return found[0].id

    def with_content(self, *contents: str) -> list[str]:
        return sorted(m.id for m in trace.items(self.ctx, self.uid).values() if m.content in contents)


def _uid() -> str:
    return f"u-del-{uuid.uuid4().hex[:10]}"


def build_user(stack: dict[str, Any]) -> User:
    ctx = Context()
    user = User(_uid(), ctx, stack)
    trace.capture_now(ctx, user.uid, "ca", trace.conversation_doc("ca", CONVERSATIONS["ca"]))
    assert consolidation.run_pass(ctx, user.uid)["routes"].get("promote") == 4
    trace.capture_now(ctx, user.uid, "cb", trace.conversation_doc("cb", CONVERSATIONS["cb"]))
    assert consolidation.run_pass(ctx, user.uid)["routes"].get("archive") == 2
    trace.capture_now(ctx, user.uid, "cc", trace.conversation_doc("cc", CONVERSATIONS["cc"]))
    routes = consolidation.run_pass(ctx, user.uid)["routes"]
    assert routes.get("promote") == 1 and routes.get("review") == 1, routes
    trace.converge(ctx, user.uid)
    items = trace.items(ctx, user.uid)
    by = {m.content: m for m in items.values() if m.layer != "archive"}
    assert by[LISBON].status == Status.SUPERSEDED and by[PORTO].supersedes == [by[LISBON].id]
    assert by[MEAT].status == Status.ACTIVE and {e.source_id for e in by[MEAT].evidence} == {"ca", "cb"}
    assert by[PRESSURE].restricted
    assert any(s.to_dict()["memory_id"] == by[MARATHON].id for s in ctx.paths.col(user.uid, "memory_review_queue").stream())
    trace.assert_converged(ctx, user.uid)
    return user


def build_users(stack: dict[str, Any], count: int) -> list[User]:
    # One at a time: parallel builders made the emulator's pessimistic locks time out under load.
    return [build_user(stack) for _ in range(count)]


def _wait(predicate: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.25)
    return value


# ------------------------------------------------------------------------------------ scenarios
@dataclass
class Outcome:
    memory_ids: list[str]
    contents: list[str]
    check_after: Callable[[], None] | None = None  # extra assertions once projections converged


def single_delete(user: User) -> Outcome:
    target = user.one(COFFEE)
    response = user.call("DELETE", f"/v3/memories/{target}")
    assert response.status_code == 200, response.text
    assert response.json()["deleted"] == [target]
    return Outcome([target], [COFFEE])


def lineage_delete(user: User) -> Outcome:
    """Deleting the ended Lisbon fact deletes it with its alias (its lineage), never Porto, the fact
    that ended it (issue 44: supersession is not lineage); Porto forgets it ended Lisbon."""
    porto, lisbon = user.one(PORTO), user.one(LISBON)
    alias = user.one(LISBON, layer="archive")
    response = user.call("DELETE", f"/v3/memories/{lisbon}")
    assert response.status_code == 200, response.text
    assert sorted(response.json()["deleted"]) == sorted([lisbon, alias])

    def porto_stays() -> None:
        item = trace.items(user.ctx, user.uid)[porto]
        assert item.status == Status.ACTIVE and item.supersedes == []

    return Outcome([lisbon, alias], [LISBON], porto_stays)


def delete_all(user: User) -> Outcome:
    every = trace.items(user.ctx, user.uid)
    response = user.call("DELETE", "/v3/memories")
    assert response.status_code == 200, response.text
    assert response.json()["deleted"] == len(every)

    def nothing_left() -> None:
        assert trace.provider_sets(user.ctx, user.uid) == (set(), set())
        assert not list(user.ctx.paths.col(user.uid, "knowledge_edges").stream())

    return Outcome(sorted(every), sorted({m.content for m in every.values()}), nothing_left)


def _supersession_undone(user: User, lisbon: str) -> Callable[[], None]:
    def check() -> None:
        item = trace.items(user.ctx, user.uid)[lisbon]
        assert item.status == Status.ACTIVE and item.layer == "long_term" and item.superseded_by is None
        assertion = user.ctx.paths.doc(user.uid, "memory_graph_assertions", lisbon).get().to_dict()
        assert assertion and assertion["status"] == "active" and assertion["assertion_id"] == item.graph_assertion_id
        edges = [s.to_dict() for s in user.ctx.paths.col(user.uid, "knowledge_edges").stream()]
        assert any(lisbon in e["memory_ids"] for e in edges)
        assert trace.expected_provider_ids(user.ctx, user.uid) >= {trace.ids.provider_id(user.uid, lisbon)}
        trace.assert_converged(user.ctx, user.uid)

    return check


def cascade_by_api(user: User) -> Outcome:
    porto, marathon, lisbon = user.one(PORTO), user.one(MARATHON, layer="short_term"), user.one(LISBON)
    response = user.call("DELETE", "/v1/conversations/cc")
    assert response.status_code == 200, response.text
    assert response.json()["cascade"]["retracted"] == 2
    assert not user.ctx.paths.doc(user.uid, "conversations", "cc").get().exists
    return Outcome([porto, marathon], [PORTO, MARATHON], _supersession_undone(user, lisbon))


def cascade_by_trigger(user: User) -> Outcome:
    porto, marathon, lisbon = user.one(PORTO), user.one(MARATHON, layer="short_term"), user.one(LISBON)
    user.ctx.paths.doc(user.uid, "conversations", "cc").delete()  # an app deleting the document itself
    items = lambda: trace.items(user.ctx, user.uid)  # noqa: E731
    _wait(lambda: all(items()[m].status == Status.TOMBSTONED for m in (porto, marathon)), 60,
          "the delete_cascade trigger to retract the conversation's memories")
    return Outcome([porto, marathon], [PORTO, MARATHON], _supersession_undone(user, lisbon))


def reprocess_retract(user: User) -> Outcome:
    porto, marathon, lisbon = user.one(PORTO), user.one(MARATHON, layer="short_term"), user.one(LISBON)
    user.ctx.paths.doc(user.uid, "conversations", "cc").update({"transcript_segments": []})
    response = user.call("POST", "/v1/conversations/cc/reprocess")
    assert response.status_code == 200, response.text
    assert response.json()["created"] == 0
    return Outcome([porto, marathon], [PORTO, MARATHON], _supersession_undone(user, lisbon))


def account_delete(user: User, *, providers_down: bool = False) -> Outcome:
    every = trace.items(user.ctx, user.uid)
    response = user.call("DELETE", "/v1/users/delete-account")
    if providers_down:
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "provider_unavailable"
        fence = user.ctx.paths.account_deletion(user.uid).get().to_dict()
        assert fence["state"] == "fenced"
        # While the fence stands, every write for the user is refused.
        refused = user.call("POST", "/v3/memories", json={"content": "I like green tea"})
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "writes_blocked", refused.text
        return Outcome(sorted(every), sorted({m.content for m in every.values()}))
    assert response.status_code == 200, response.text
    receipt_id = response.json()["receipt_id"]
    return Outcome(sorted(every), sorted({m.content for m in every.values()}), lambda: _account_gone(user, receipt_id))


def _account_gone(user: User, receipt_id: str) -> None:
    left = {c.id: [(d.id, d.to_dict()) for d in c.stream()] for c in user.ctx.paths.user(user.uid).collections()}
    assert not left, f"the wiped account still has {left}"
    # Outside the subtree, besides the wipe record: the wipe's receipt, ids and times only.
    assert_wipe_receipt_content_free(user.ctx, user.uid, receipt_id)
    assert not user.ctx.paths.user(user.uid).get().exists
    wipe = user.ctx.paths.account_deletion(user.uid).get().to_dict()
    assert wipe["state"] == "completed"
    # The stack's api holds the search-only key: the outbox drain purged Typesense and said so.
    assert wipe["keyword_purged"] == wipe["generation"], wipe
    assert trace.provider_sets(user.ctx, user.uid) == (set(), set())
    assert not trace.typesense_search(user.ctx, user.uid, "")


SCENARIOS: dict[str, Callable[[User], Outcome]] = {
    "single": single_delete, "lineage": lineage_delete, "delete_all": delete_all,
    "cascade_api": cascade_by_api, "cascade_trigger": cascade_by_trigger, "reprocess": reprocess_retract,
    "account": account_delete,
}


def _settle_and_trace(user: User, outcome: Outcome) -> None:
    trace.converge(user.ctx, user.uid)
    trace.assert_forgotten(user.ctx, user.uid, outcome.memory_ids, outcome.contents)
    if outcome.check_after is not None:
        outcome.check_after()
    trace.assert_converged(user.ctx, user.uid)


def test_every_delete_leaves_no_trace(stack: dict[str, Any]) -> None:
    users = dict(zip(SCENARIOS, build_users(stack, len(SCENARIOS)), strict=True))
    for name, scenario in SCENARIOS.items():
        user = users[name]
        outcome = scenario(user)
        try:
            _settle_and_trace(user, outcome)
        except AssertionError as exc:
            raise AssertionError(f"scenario {name}: {exc}") from exc


def test_every_delete_leaves_no_trace_with_providers_down(stack: dict[str, Any]) -> None:
    users = dict(zip(SCENARIOS, build_users(stack, len(SCENARIOS)), strict=True))
    outcomes: dict[str, Outcome] = {}
    with faults.stopped(stack["state_dir"], "typesense", "pinecone"):
        for name, scenario in SCENARIOS.items():
            user = users[name]
            if name == "account":
                outcomes[name] = account_delete(user, providers_down=True)
                continue
            outcomes[name] = scenario(user)
            # Success was reported: canonical state is durable now, provider cleanup is queued.
            items = trace.items(user.ctx, user.uid)
            for memory_id in outcomes[name].memory_ids:
                assert items[memory_id].status == Status.TOMBSTONED and not items[memory_id].content, (name, memory_id)
            queued = {e["memory_id"] for _, e in trace.outbox(user.ctx, user.uid)}
            assert set(outcomes[name].memory_ids) <= queued, (name, set(outcomes[name].memory_ids) - queued)
    # Providers are back: the account delete is retried and succeeds; everything converges.
    account = users["account"]
    retried = account.call("DELETE", "/v1/users/delete-account")
    assert retried.status_code == 200, retried.text
    receipt_id = retried.json()["receipt_id"]
    outcomes["account"].check_after = lambda: _account_gone(account, receipt_id)
    for name, outcome in outcomes.items():
        try:
            _settle_and_trace(users[name], outcome)
        except AssertionError as exc:
            raise AssertionError(f"scenario {name} (providers were down): {exc}") from exc


def test_conversation_support_keeps_fact_until_last_source_is_deleted(stack: dict[str, Any]) -> None:
    user = build_user(stack)
    meat = user.one(MEAT)
    alias = user.one(MEAT, layer="archive")
    response = user.call("DELETE", "/v1/conversations/ca")
    assert response.status_code == 200, response.text
    trace.converge(user.ctx, user.uid)
    item = trace.items(user.ctx, user.uid)[meat]
    assert item.status == Status.ACTIVE and item.layer == "long_term" and item.content == MEAT
    assert [e.source_id for e in item.evidence if e.status == "active"] == ["cb"]
    assert trace.ids.provider_id(user.uid, meat) in trace.provider_sets(user.ctx, user.uid)[0]
    edges = [s.to_dict() for s in user.ctx.paths.col(user.uid, "knowledge_edges").stream()]
    assert any(meat in e["memory_ids"] for e in edges)
    search = user.call("GET", "/v1/memories/search", params={"q": "stopped eating meat"}).json()["memories"]
    assert [m["id"] for m in search][:1] == [meat]
    # ca's own facts are gone (coffee, blood pressure had no other source).
    trace.assert_forgotten(user.ctx, user.uid, user.with_content(COFFEE, PRESSURE), [COFFEE, PRESSURE])

    response = user.call("DELETE", "/v1/conversations/cb")
    assert response.status_code == 200, response.text
    trace.converge(user.ctx, user.uid)
    trace.assert_forgotten(user.ctx, user.uid, [meat, alias], [MEAT])
    trace.assert_converged(user.ctx, user.uid)


def test_write_racing_delete_all_is_tombstoned_or_fails_clearly(stack: dict[str, Any]) -> None:
    user = User(_uid(), Context(), stack)
    for i in range(30):
        assert user.call("POST", "/v3/memories", json={"content": f"Seed fact number {i} about tea"}).status_code == 201
    stop = threading.Event()
    written: list[str] = []

    def writer() -> None:
        n = 0
        while not stop.is_set():
            response = user.call("POST", "/v3/memories", json={"content": f"Racing fact {n} about coffee"})
            if response.status_code == 201:
                written.append(response.json()["id"])
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        # The race is on once the writer has landed a write (an event, not a sleep).
        _wait(lambda: written or not thread.is_alive(), 60, "the racing writer's first write")
        response = user.call("DELETE", "/v3/memories")
    finally:
        stop.set()
        thread.join()
    assert written, "the racing writer never wrote"
    items = trace.items(user.ctx, user.uid)
    # Both outcomes are the spec's (delete-all under concurrent writes either observes a stable
    # empty rescan or answers an error, never a partial success); which one depends on the race.
    if response.status_code == 200:
        stable = response.json()["stable_at_sequence"]
        survivors = [m for m in items.values() if m.status != Status.TOMBSTONED and m.ledger_sequence <= stable]
        assert not survivors, f"delete-all reported success but these survive: {survivors}"
        seeds = [m for m in items.values() if m.content.startswith("Seed")]
        assert not seeds
    else:
        assert response.status_code == 409, response.text
        error = response.json()["error"]
        assert error["code"] == "delete_all_contended" and "try again" in error["message"]
    # Once the writer has stopped, delete-all succeeds and leaves nothing.
    response = user.call("DELETE", "/v3/memories")
    assert response.status_code == 200, response.text
    every = trace.items(user.ctx, user.uid)
    assert all(m.status == Status.TOMBSTONED and not m.content for m in every.values())
    trace.converge(user.ctx, user.uid)
    trace.assert_forgotten(user.ctx, user.uid, sorted(every), [])


def test_export_streams_everything_the_user_owns_in_the_public_shape(stack: dict[str, Any]) -> None:
    user = build_user(stack)
    ctx, uid = user.ctx, user.uid
    # Rows of the original's stores, as they are (the export reads them; it never materialises them).
    ctx.paths.doc(uid, "memories", "leg-ghent").set({
        "id": "leg-ghent", "uid": uid, "content": "I used to live in Ghent", "category": "core", "visibility": "public",
        "created_at": ctx.now(), "deleted": False, "scoring": "01_998_0000000001", "kg_extracted": True})
    ctx.paths.doc(uid, "memories", "leg-gone").set({"content": "I once lived in Bruges", "deleted": True})
    ctx.paths.doc(uid, "memories", "leg-bad").set({"content": 7})
    ctx.paths.doc(uid, "short_term", "st-dutch").set({"content": "I am learning Dutch", "status": "pending_consolidation",
                                                      "allowed_uses": ["chat"], "scope": "user"})
    device = {**user.headers, "X-Device-Id-Hash": "0a1b2c3d", "X-App-Platform": "ios"}
    assert httpx.get(stack["api_url"] + "/v1/memories", headers=device, timeout=60).status_code == 200
    coffee = next(m for m in trace.items(ctx, uid).values() if m.content == COFFEE)
    assert user.call("DELETE", f"/v3/memories/{coffee.id}").status_code == 200
    # The knowledge graph is a projection the outbox drain updates after the delete commits: wait for
    # it, so the export below is read once every projection has converged.
    trace.converge(ctx, uid)

    with httpx.stream("GET", stack["api_url"] + "/v1/memories/export", headers=user.headers, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        assert "content-length" not in response.headers  # streamed (chunked), not built whole first
        lines = [json.loads(line) for line in response.iter_lines() if line.strip()]
    summary = lines.pop()
    assert summary["kind"] == "summary"
    by_kind: dict[str, dict[str, dict[str, Any]]] = {}
    for line in lines:
        assert set(line) == {"kind", "id", "data"}, line
        by_kind.setdefault(line["kind"], {})[line["id"]] = line["data"]
    assert summary["counts"] == {kind: len(rows) for kind, rows in by_kind.items()}
    required = {"memory", "conversation", "knowledge_node", "knowledge_edge", "graph_assertion", "review",
                "client_device"}
    assert required <= set(by_kind) <= required | {"action_item", "goal"}  # no commits, operations, outbox, state

    # Memories: every one the user may see (any layer, the superseded Lisbon included), in the Memory JSON.
    items = trace.items(ctx, uid)
    seeable = {m.id for m in items.values() if m.status in ("active", "superseded")}
    # Historical rows are grandfathered Long-term memories (not the deleted one nor the malformed one).
    assert set(by_kind["memory"]) == seeable | {"leg-ghent", "st-dutch"}
    assert {m["layer"] for m in by_kind["memory"].values()} >= {"long_term", "archive"}
    assert {m["content"] for m in by_kind["memory"].values()} >= {LISBON, PORTO, MEAT, PRESSURE}
    public = {"id", "content", "layer", "category", "visibility", "created_at", "updated_at", "conversation_id",
              "source_ids", "evidence", "canonical_memory_id", "expires_at", "expired", "reviewed", "user_review",
              "manually_added", "edited", "capture_device_ids", "subject_attribution", "restricted",
              "valid_from", "valid_to", "superseded_by", "slot"}
    for memory in by_kind["memory"].values():
        assert set(memory) <= public, set(memory) - public
    # Nothing the backend keeps for itself, anywhere in the export.
    body = json.dumps(lines)
    for internal in ("processing_state", "admission_receipt", "receipt_id", "ledger_commit_id", "ledger_sequence",
                     "content_hash", "plan_hash", "read_class", "pending_route", "source_commit_id", "lease_epoch",
                     "reprocess_token", "scoring", COFFEE):
        assert internal not in body, internal
    # Every other collection the user owns, whole.
    for kind, collection in (("conversation", "conversations"), ("action_item", "action_items"), ("goal", "goals"),
                             ("knowledge_node", "knowledge_nodes"), ("knowledge_edge", "knowledge_edges"),
                             ("review", "memory_review_queue"), ("client_device", "client_devices")):
        stored = {s.id for s in ctx.paths.col(uid, collection).stream()}
        assert set(by_kind.get(kind, {})) == stored, kind
    active = {s.id: s.to_dict() for s in ctx.paths.col(uid, "memory_graph_assertions").stream()
              if s.to_dict().get("status") == "active"}
    assert set(by_kind["graph_assertion"]) == set(active) and active
    for memory_id, assertion in by_kind["graph_assertion"].items():
        assert assertion["memory_id"] == memory_id and {"subject", "predicate", "object"} <= set(assertion)
    assert any(r["memory_id"] == next(m.id for m in items.values() if m.content == MARATHON)
               for r in by_kind["review"].values())
    assert set(by_kind["client_device"]) == {"ios_0a1b2c3d"}
    ghent, dutch = by_kind["memory"]["leg-ghent"], by_kind["memory"]["st-dutch"]
    assert (ghent["content"], ghent["layer"], ghent["category"], ghent["visibility"], ghent["subject_attribution"]) == (
        "I used to live in Ghent", "long_term", "system", "public", "legacy_assumed")
    assert (dutch["content"], dutch["layer"]) == ("I am learning Dutch", "short_term")  # a retired Short-term row

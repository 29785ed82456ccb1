"""``strata rebuild --provider typesense --all`` after the collection is dropped, over a population
of its own.

The session's emulator holds every other test's users, so ``--all`` runs against a private
Firestore project id on the same emulator, with a private Typesense collection and vector
namespace: the CLI reads them from the environment (``STRATA_PROJECT_ID``,
``STRATA_TYPESENSE_COLLECTION``, ``STRATA_PINECONE_NAMESPACE``), so the rebuild walks only the
users this test made. The private project has no triggers and no push subscription (the stack
wires those for its own project only): the rebuild's nudges go to a topic nobody reads, and the
drain runs in this process with the Context that projected the users before the drop (a worker
that was warm when the collection vanished).

While the rebuild walks, right after its first user is done, one memory of that already-rebuilt
user and one of a user not yet walked are deleted through the deletion service. The expectations come from the spec (the
reference model's projectability on the stored documents, and the deletes): afterwards
``strata doctor --all`` finds no drift for any user, the collection holds every live projectable
memory exactly once, the deleted memories' text is nowhere in it, and the run record says done.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from core import config
from core.bootstrap import Context
from core.domain import ids
from core.services import deletion, rebuild
from strata_dev.cli import main as cli
from tests.support import trace

pytestmark = pytest.mark.integration

LINES = [
    ["I live in Lisbon with my partner.", "My favourite food is grilled sardines.",
     "I work as a nurse at the city hospital."],
    ["I play the cello in an amateur orchestra.", "My sister lives in Porto.",
     "My brother collects vintage postcards."],
    ["I drive a green Fiat to work.", "My daughter studies marine biology.",
     "I grow tomatoes on my balcony."],
]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert cli.main([*argv, "--json"]) == code
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture
def private_project(stack: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[config.Settings]:
    """Settings (and the CLI's environment) for a project id, collection and namespace of this test
    alone; everything is removed at the end."""
    tag = uuid.uuid4().hex[:10]
    private = {"STRATA_PROJECT_ID": f"demo-rebuild-{tag}", "GOOGLE_CLOUD_PROJECT": f"demo-rebuild-{tag}",
               "STRATA_TYPESENSE_COLLECTION": f"memories_rebuild_{tag}",
               "STRATA_PINECONE_NAMESPACE": f"rebuild-{tag}"}
    for name, value in private.items():
        monkeypatch.setenv(name, value)
    settings = config.load()
    assert (settings.project_id, settings.typesense_collection, settings.pinecone_namespace) == (
        private["STRATA_PROJECT_ID"], private["STRATA_TYPESENSE_COLLECTION"], private["STRATA_PINECONE_NAMESPACE"])
    assert settings.firestore_emulator_host == stack["firestore_emulator_host"]
    # The CLI's Context publishes real nudges: the private project needs its topic (no subscription).
    from google.cloud import pubsub_v1  # type: ignore[attr-defined]

    publisher = pubsub_v1.PublisherClient()
    topic = publisher.topic_path(settings.project_id, settings.projection_topic)
    publisher.create_topic(request={"name": topic})
    try:
        yield settings
    finally:
        url, headers = settings.typesense_url.rstrip("/"), {"X-TYPESENSE-API-KEY": settings.typesense_api_key}
        httpx.delete(f"{url}/collections/{settings.typesense_collection}", headers=headers, timeout=30)
        httpx.post(f"{settings.pinecone_host.rstrip('/')}/vectors/delete", headers={"Api-Key": "local"},
                   json={"deleteAll": True, "namespace": settings.pinecone_namespace}, timeout=30)
        httpx.delete(f"http://{settings.firestore_emulator_host}/emulator/v1/projects/{settings.project_id}"
                     "/databases/(default)/documents", timeout=30)
        publisher.delete_topic(request={"topic": topic})


def _collection(settings: config.Settings) -> tuple[str, dict[str, str]]:
    url = f"{settings.typesense_url.rstrip('/')}/collections/{settings.typesense_collection}"
    return url, {"X-TYPESENSE-API-KEY": settings.typesense_api_key}


def _every_document(settings: config.Settings) -> list[dict[str, Any]]:
    """The whole private collection, straight from the server's export endpoint."""
    url, headers = _collection(settings)
    answer = httpx.get(f"{url}/documents/export", headers=headers, timeout=30)
    answer.raise_for_status()
    return [json.loads(line) for line in answer.text.splitlines() if line.strip()]


def _search_everyone(settings: config.Settings, text: str) -> int:
    """How many documents of any user match every word of ``text`` exactly (no typos, no prefixes)."""
    url, headers = _collection(settings)
    answer = httpx.get(f"{url}/documents/search", headers=headers, timeout=30, params={
        "q": text, "query_by": "content", "num_typos": 0, "prefix": "false", "drop_tokens_threshold": 0,
        "per_page": 250})
    answer.raise_for_status()
    return int(answer.json()["found"])


def test_rebuild_all_after_a_dropped_collection_converges_and_keeps_concurrent_deletes_deleted(
        private_project: config.Settings, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = private_project
    ctx = Context(settings, publisher=trace.QuietPublisher())
    tag = uuid.uuid4().hex[:8]
    uids = [f"u-rball-{tag}-{n}" for n in range(len(LINES))]
    for uid, lines in zip(uids, LINES, strict=True):
        trace.capture_now(ctx, uid, "c1", trace.conversation_doc("c1", lines), write_doc=False)
        trace.converge(ctx, uid)
        trace.assert_converged(ctx, uid)
    before = {uid: trace.expected_provider_ids(ctx, uid) for uid in uids}
    assert all(len(expected) >= 2 for expected in before.values())
    assert {d["uid"] for d in _every_document(settings)} == set(uids)  # nobody else lives here

    url, headers = _collection(settings)
    assert httpx.delete(url, headers=headers, timeout=30).status_code == 200
    assert httpx.get(url, headers=headers, timeout=30).status_code == 404  # nothing creates it before the drain

    walked: list[str] = []
    deleted: dict[str, dict[str, str]] = {}  # uid → memory id → its content when deleted
    real_rebuild_user = rebuild.rebuild_user

    def delete_one(uid: str, index: int) -> None:
        projectable = sorted(((mid, item) for mid, item in trace.items(ctx, uid).items()
                              if ids.provider_id(uid, mid) in before[uid]), key=lambda pair: pair[0])
        memory_id, item = projectable[index]
        deletion.delete_memory(ctx, uid, memory_id)
        deleted.setdefault(uid, {})[memory_id] = item.content

    def walk_then_delete(walker: Context, uid: str, *args: Any, **kwargs: Any) -> None:
        real_rebuild_user(walker, uid, *args, **kwargs)
        walked.append(uid)
        if len(walked) == 1:  # the first user's events are queued, no other user is walked yet
            delete_one(walked[0], 0)
            delete_one(next(uid for uid in reversed(uids) if uid != walked[0]), 1)

    monkeypatch.setattr(rebuild, "rebuild_user", walk_then_delete)
    [row] = _cli(capsys, "rebuild", "--provider", "typesense", "--all")
    assert sorted(walked) == sorted(uids) and len(walked) == len(uids)
    [already] = [uid for uid in deleted if uid == walked[0]]
    [not_yet] = [uid for uid in deleted if uid != walked[0]]
    # One purge per user, one rebuild event per memory projectable when its user was walked.
    assert row["users"] == len(uids) and row["skipped_users"] == 0 and row["resumed_users"] == 0
    assert row["enqueued"] == len(uids) + sum(map(len, before.values())) - len(deleted[not_yet])
    run = ctx.client.collection("projection_rebuilds").document("typesense").get().to_dict()
    assert run["run_id"] == row["run_id"] and run["done"] is True
    for uid in uids:
        state = ctx.paths.doc(uid, "memory_state", "rebuild_typesense").get().to_dict()
        assert state["run_id"] == row["run_id"] and state["done"] is True
    # Maintenance drains the outbox before it parses rows and after (the spec's rule): the user whose
    # delete came before its walk was left with no event, the delete's nor the rebuild's.
    assert trace.outbox(ctx, not_yet) == []

    for uid in uids:
        trace.converge(ctx, uid)
    [report] = _cli(capsys, "doctor", "--all", "--json", code=0)
    assert report["users"] == len(uids) and report["findings"] == []
    after = {uid: before[uid] - {ids.provider_id(uid, m) for m in deleted.get(uid, {})} for uid in uids}
    assert {uid: trace.expected_provider_ids(ctx, uid) for uid in uids} == after  # the spec agrees
    assert report["canonical"] == sum(map(len, after.values()))

    documents = _every_document(settings)
    assert sorted(d["id"] for d in documents) == sorted(set().union(*after.values()))  # each once
    gone = {(uid, m) for uid, memories in deleted.items() for m in memories}
    assert not [d for d in documents if (d["uid"], d["memory_id"]) in gone]
    texts = [text for memories in deleted.values() for text in memories.values()]
    assert len(texts) == 2 and all(texts)
    live = documents[0]["content"]
    assert _search_everyone(settings, live) >= 1  # the search does find a memory that is there
    for text in texts:
        assert not [d for d in documents if text.casefold() in str(d.get("content", "")).casefold()]
        assert _search_everyone(settings, text) == 0, text
    for uid in (already, not_yet):
        trace.assert_forgotten(ctx, uid, list(deleted[uid]), list(deleted[uid].values()))
    for uid in uids:
        trace.assert_converged(ctx, uid)

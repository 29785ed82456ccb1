"""Least-privilege provider keys and ``strata setup`` on the local Typesense and Pinecone server.

``strata setup`` (run with the admin key) creates the collection and two keys scoped to it: the
write key (outbox drain, operators) and the read key every other function mounts. The read key is
what the api function holds in a deployment: with it the api's adapter searches and purges but
cannot import, upsert, update or create anything (Typesense answers 401/403, which the adapter
reports as a permanent error). Deployed functions (``STRATA_PROVIDER_SETUP=check``) never create the
collection: their start check fails naming ``strata setup``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from core import config
from core.adapters.typesense_index import TypesenseIndex
from core.bootstrap import Context
from core.errors import ConfigurationError, PermanentError
from core.ports import ProjectionDoc
from core.start_check import start_check
from strata_dev import setup

pytestmark = pytest.mark.integration


def _doc(uid: str, memory_id: str, content: str) -> ProjectionDoc:
    return ProjectionDoc(provider_id=f"{uid}-{memory_id}", uid=uid, memory_id=memory_id, layer="long_term",
                         revision=1, content=content, quote="", category="hobbies", updated_at=time.time())


@pytest.fixture(scope="module")
def collection() -> str:
    return "setup_" + uuid.uuid4().hex[:10]


@pytest.fixture(scope="module")
def settings(stack: dict[str, Any], collection: str) -> config.Settings:
    return config.load(typesense_collection=collection)


@pytest.fixture(scope="module")
def made(settings: config.Settings) -> dict[str, Any]:
    first = setup.run(settings, keys=True)
    return first


def test_setup_creates_the_collection_and_keys_once(made: dict[str, Any], settings: config.Settings) -> None:
    ts = made["typesense"]
    assert ts["created"] is True and ts["schema"] == "ok"
    assert ts["keys"]["write"]["created"] and ts["keys"]["read"]["created"]
    assert ts["keys"]["write"]["value"] and ts["keys"]["read"]["value"]
    assert made["pinecone"]["dimension"] == settings.embedding_dim == 384
    assert made["pinecone"]["metric"] == "cosine" and made["pinecone"]["namespace"] == settings.pinecone_namespace
    # Idempotent: a second run creates nothing and shows no key value again.
    again = setup.run(settings, keys=True)
    assert again["typesense"]["created"] is False
    for kind in ("write", "read"):
        assert again["typesense"]["keys"][kind]["created"] is False
        assert "value" not in again["typesense"]["keys"][kind]
        assert again["typesense"]["keys"][kind]["id"] == made["typesense"]["keys"][kind]["id"]


def test_the_keys_are_scoped_to_the_collection(made: dict[str, Any], settings: config.Settings,
                                               stack: dict[str, Any]) -> None:
    url = stack["typesense_url"]
    for kind in ("write", "read"):
        key = made["typesense"]["keys"][kind]["value"]
        other = httpx.get(f"{url}/collections", headers={"X-TYPESENSE-API-KEY": key}, timeout=10)
        assert other.status_code in (401, 403), (kind, other.text)  # listing every collection is not granted
        created = httpx.post(f"{url}/collections", headers={"X-TYPESENSE-API-KEY": key}, timeout=10,
                             json={"name": settings.typesense_collection + "_x", "fields": [{"name": "a", "type": "string"}]})
        assert created.status_code in (401, 403), (kind, created.text)


def test_the_api_cannot_write_with_its_key(made: dict[str, Any], settings: config.Settings) -> None:
    write = TypesenseIndex(settings.typesense_url, made["typesense"]["keys"]["write"]["value"],
                           settings.typesense_collection, create=False)
    api = TypesenseIndex(settings.typesense_url, made["typesense"]["keys"]["read"]["value"],
                         settings.typesense_collection, create=False)
    uid = "keys-" + uuid.uuid4().hex[:8]
    write.upsert([_doc(uid, "m1", "likes sourdough bread")])  # the drain's key writes
    hits = api.search(uid, "sourdough", layers=["long_term"], limit=5)
    assert [h.memory_id for h in hits] == ["m1"]
    with pytest.raises(PermanentError):
        api.upsert([_doc(uid, "m2", "forged memory")])
    with pytest.raises(PermanentError):
        api._call("import", api._documents.import_, [{"id": "x", "uid": uid, "memory_id": "m3", "layer": "long_term",
                                                       "revision": 1, "content": "forged", "category": "x",
                                                       "updated_at": 1.0}], {"action": "create"})
    with pytest.raises(PermanentError):
        api._call("update", api._documents[f"{uid}-m1"].update, {"content": "rewritten"})
    assert [h.memory_id for h in api.search(uid, "forged", layers=["long_term"], limit=5)] == []
    assert [h.memory_id for h in api.search(uid, "sourdough", layers=["long_term"], limit=5)] == ["m1"]
    # The account purge (DELETE /v1/account) is the one deletion it may make.
    api.purge_user(uid)
    assert api.search(uid, "sourdough", layers=["long_term"], limit=5) == []


def test_deployed_functions_check_and_never_create(stack: dict[str, Any], settings: config.Settings,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    missing = "missing_" + uuid.uuid4().hex[:8]
    checking = settings.replace(typesense_collection=missing, provider_setup="check")
    index = Context(checking).keyword_index
    with pytest.raises(ConfigurationError, match="strata setup"):
        index.ensure_ready()
    # The start check of every function that uses the providers fails the same way.
    import core.start_check as start

    monkeypatch.setattr(start, "default_context", lambda: Context(checking))
    monkeypatch.setattr(config, "load", lambda **kw: checking)
    for name in ("api", "outbox_drain", "consolidate", "delete_cascade"):
        with pytest.raises(ConfigurationError, match="strata setup"):
            start_check(name)
    start_check("on_conversation_complete")  # uses no provider
    assert httpx.get(f"{settings.typesense_url}/collections/{missing}",
                     headers={"X-TYPESENSE-API-KEY": settings.typesense_api_key}, timeout=10).status_code == 404
    # Once set up, the same check passes.
    setup.run(checking.replace(provider_setup="create"))
    start_check("api")


def test_a_pinecone_index_of_another_dimension_is_refused(settings: config.Settings) -> None:
    with pytest.raises(ConfigurationError, match="dimension"):
        setup.pinecone(settings.replace(embedding_dim=768), index_name=None, cloud="aws", region="us-east-1")

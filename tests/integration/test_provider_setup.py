"""Least-privilege provider keys and ``strata setup`` on the local Typesense and Pinecone server.

``strata setup`` (run with the admin key) creates the collection and two keys scoped to it: the
write key (outbox drain, operators) and the search key every other function mounts. The search key
is what the api function holds in a deployment (and on the local stack): with it the api's adapter
searches but cannot delete, import, upsert, update or create anything (Typesense answers 401/403,
which the adapter reports as a permanent error); an account wipe's keyword purge is asked of the
drain, which holds the write key. Deployed functions (``STRATA_PROVIDER_SETUP=check``) never create the
collection: their start check fails naming ``strata setup``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest
from typesense import exceptions as ts_errors

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
    assert ts["keys"]["write"]["created"] and ts["keys"]["search"]["created"]
    assert ts["keys"]["write"]["value"] and ts["keys"]["search"]["value"]
    assert ts["keys"]["search"]["actions"] == ["documents:search", "collections:get"]
    assert made["pinecone"]["dimension"] == settings.embedding_dim == 384
    assert made["pinecone"]["metric"] == "cosine" and made["pinecone"]["namespace"] == settings.pinecone_namespace
    # Idempotent: a second run creates nothing and shows no key value again.
    again = setup.run(settings, keys=True)
    assert again["typesense"]["created"] is False
    for kind in ("write", "search"):
        assert again["typesense"]["keys"][kind]["created"] is False
        assert "value" not in again["typesense"]["keys"][kind]
        assert again["typesense"]["keys"][kind]["id"] == made["typesense"]["keys"][kind]["id"]


def test_the_keys_are_scoped_to_the_collection(made: dict[str, Any], settings: config.Settings,
                                               stack: dict[str, Any]) -> None:
    url = stack["typesense_url"]
    for kind in ("write", "search"):
        key = made["typesense"]["keys"][kind]["value"]
        other = httpx.get(f"{url}/collections", headers={"X-TYPESENSE-API-KEY": key}, timeout=10)
        assert other.status_code in (401, 403), (kind, other.text)  # listing every collection is not granted
        created = httpx.post(f"{url}/collections", headers={"X-TYPESENSE-API-KEY": key}, timeout=10,
                             json={"name": settings.typesense_collection + "_x", "fields": [{"name": "a", "type": "string"}]})
        assert created.status_code in (401, 403), (kind, created.text)


def test_the_api_cannot_write_with_its_key(made: dict[str, Any], settings: config.Settings) -> None:
    write = TypesenseIndex(settings.typesense_url, made["typesense"]["keys"]["write"]["value"],
                           settings.typesense_collection, create=False)
    api = TypesenseIndex(settings.typesense_url, made["typesense"]["keys"]["search"]["value"],
                         settings.typesense_collection, create=False)
    uid = "keys-" + uuid.uuid4().hex[:8]
    write.upsert([_doc(uid, "m1", "likes sourdough bread"), _doc(uid, "m2", "likes rye bread")])  # the drain's key
    hits = api.search(uid, "sourdough", layers=["long_term"], limit=5)
    assert [h.memory_id for h in hits] == ["m1"]
    row = {"id": f"{uid}-m3", "uid": uid, "memory_id": "m3", "layer": "long_term", "revision": 1,
           "content": "forged", "quote": "", "category": "x", "updated_at": 1.0}
    refused = {
        "upsert": lambda: api.upsert([_doc(uid, "m3", "forged memory")]),
        "import": lambda: api._call("import", api._documents.import_, [row], {"action": "create"}),
        "create": lambda: api._call("create", api._documents.create, row),
        "update": lambda: api._call("update", api._documents[f"{uid}-m1"].update, {"content": "rewritten"}),
        "delete one": lambda: api._call("delete", api._documents[f"{uid}-m1"].delete),
        "delete some": lambda: api.delete(uid, ["m1"]),
        "purge": lambda: api.purge_user(uid),
        "create collection": lambda: api._call("create collection", api._client.collections.create,
                                               {"name": settings.typesense_collection + "_y",
                                                "fields": [{"name": "a", "type": "string"}]}),
    }
    for what, attempt in refused.items():
        with pytest.raises(PermanentError) as caught:
            attempt()
        assert isinstance(caught.value.__cause__, (ts_errors.RequestUnauthorized, ts_errors.RequestForbidden)), what
    # Nothing changed: both memories are still found as they were, nothing forged is.
    assert [h.memory_id for h in api.search(uid, "forged rewritten", layers=["long_term"], limit=5)] == []
    assert sorted(h.memory_id for h in api.search(uid, "bread", layers=["long_term"], limit=5)) == ["m1", "m2"]
    # The account purge is the drain's, with the write key.
    write.purge_user(uid)
    assert api.search(uid, "bread", layers=["long_term"], limit=5) == []


def test_the_local_stack_gives_the_api_the_search_key(stack: dict[str, Any]) -> None:
    """The stack mounts keys as Terraform does: its api, consolidate and delete_cascade run with a
    search-only key scoped to the functions' collection (the account tests then prove the wipe
    works without a write key in the api)."""
    collection = config.load().typesense_collection
    api = TypesenseIndex(stack["typesense_url"], stack["typesense_search_key"], collection, create=False)
    admin = TypesenseIndex(stack["typesense_url"], stack["typesense_api_key"], collection, create=False)
    uid = "stack-keys-" + uuid.uuid4().hex[:8]
    admin.upsert([_doc(uid, "m1", "likes sourdough bread")])
    assert [h.memory_id for h in api.search(uid, "sourdough", layers=["long_term"], limit=5)] == ["m1"]
    for attempt in (lambda: api.purge_user(uid), lambda: api.upsert([_doc(uid, "m2", "forged")])):
        with pytest.raises(PermanentError):
            attempt()
    admin.purge_user(uid)
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

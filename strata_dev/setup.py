"""``strata setup``: create or check the provider schema once, as an operator (docs/deploy.md).

Deployed functions never create provider schema (``STRATA_PROVIDER_SETUP=check``): they check at
start (:func:`core.functions_entry.start_check`) and fail naming this command. ``strata setup`` is idempotent; run it with the Typesense admin
key (``STRATA_TYPESENSE_API_KEY``) before the first deploy and after a schema change:

* **Typesense**: creates the collection (``STRATA_TYPESENSE_COLLECTION``) with Strata's schema or
  checks an existing one; with ``--typesense-keys`` also creates the two keys the functions mount,
  both scoped to that collection: the *write key* (``documents:*``, ``collections:get``: the outbox
  drain and operators) and the *search key* (``documents:search``, ``collections:get``: api,
  consolidate, delete_cascade; it cannot create, import, upsert, update or delete anything: an
  account wipe's keyword purge is done by the outbox drain, asked by the api). Typesense shows a key's value only when it is created, so existing
  keys (found by description) are reported, not made again.
* **Pinecone**: checks the index behind ``STRATA_PINECONE_HOST`` has dimension
  ``STRATA_EMBEDDING_DIM`` (vectors are compared by cosine similarity); with ``--pinecone-index
  NAME`` and ``PINECONE_API_KEY`` it first creates that serverless index through Pinecone's control
  plane when missing (``--pinecone-cloud``, ``--pinecone-region``) and prints its host. Vectors live
  in the namespace ``STRATA_PINECONE_NAMESPACE``, one per deployment (ids carry the uid; every query
  filters by uid).

Prints one JSON object: what it created and what it found.
"""

from __future__ import annotations

import sys
from typing import Any

from core.config import Settings
from core.errors import ConfigurationError
from strata_dev.cli.output import Output

METRIC = "cosine"
WRITE_KEY = ("write", ["documents:*", "collections:get"])
SEARCH_KEY = ("search", ["documents:search", "collections:get"])


def key_description(kind: str, collection: str) -> str:
    return f"strata {kind} key ({collection})"


def typesense(settings: Settings, *, keys: bool) -> dict[str, Any]:
    from core.adapters.typesense_index import TypesenseIndex

    index = TypesenseIndex(settings.typesense_url, settings.typesense_api_key, settings.typesense_collection)
    existed = _collection_exists(index)
    index.ensure_ready()  # creates when missing, checks the fields either way
    out: dict[str, Any] = {"collection": settings.typesense_collection, "created": not existed, "schema": "ok"}
    if keys:
        out["keys"] = typesense_keys(index, settings.typesense_collection)
    return out


def _collection_exists(index: Any) -> bool:
    from typesense import exceptions as ts_errors

    try:
        index._client.collections[index.collection].retrieve()
        return True
    except ts_errors.ObjectNotFound:
        return False


def typesense_keys(index: Any, collection: str) -> dict[str, Any]:
    """The write and search keys scoped to ``collection``: created when missing, values shown once."""
    existing = {k.get("description"): k for k in index._client.keys.retrieve().get("keys", [])}
    out: dict[str, Any] = {}
    for kind, actions in (WRITE_KEY, SEARCH_KEY):
        description = key_description(kind, collection)
        found = existing.get(description)
        if found:
            out[kind] = {"created": False, "id": found.get("id"), "prefix": found.get("value_prefix"),
                         "actions": found.get("actions")}
            continue
        made = index._client.keys.create({"description": description, "actions": actions,
                                          "collections": [collection]})
        out[kind] = {"created": True, "id": made.get("id"), "value": made.get("value"), "actions": actions}
    return out


def pinecone(settings: Settings, *, index_name: str | None, cloud: str, region: str) -> dict[str, Any]:
    from core.adapters.pinecone_index import PineconeIndex

    out: dict[str, Any] = {"namespace": settings.pinecone_namespace, "metric": METRIC,
                           "dimension": settings.embedding_dim}
    host = settings.pinecone_host
    if index_name:
        from pinecone import Pinecone, ServerlessSpec

        control = Pinecone(api_key=settings.pinecone_api_key)
        if not control.has_index(index_name):
            control.create_index(name=index_name, dimension=settings.embedding_dim, metric=METRIC,
                                 spec=ServerlessSpec(cloud=cloud, region=region))
            out["created"] = index_name
        described = control.describe_index(index_name)
        if described.dimension != settings.embedding_dim or described.metric != METRIC:
            raise ConfigurationError(
                f"pinecone index {index_name!r} has dimension {described.dimension} and metric {described.metric}; "
                f"Strata needs {settings.embedding_dim} and {METRIC} (STRATA_EMBEDDING_DIM): create another index")
        host = str(described.host) if str(described.host).startswith("http") else f"https://{described.host}"
        out["host"] = host
    if not host:
        raise ConfigurationError("no Pinecone index: set STRATA_PINECONE_HOST, or pass --pinecone-index to create one")
    dimension = PineconeIndex(settings.pinecone_api_key, host, settings.pinecone_namespace).dimension
    if dimension != settings.embedding_dim:
        raise ConfigurationError(f"pinecone index at {host} has dimension {dimension}, "
                                 f"STRATA_EMBEDDING_DIM is {settings.embedding_dim}: they must be equal")
    out["checked_host"] = host
    return out


def run(settings: Settings, *, keys: bool = False, index_name: str | None = None, cloud: str = "aws",
        region: str = "us-east-1") -> dict[str, Any]:
    return {"typesense": typesense(settings, keys=keys),
            "pinecone": pinecone(settings, index_name=index_name, cloud=cloud, region=region)}


def main(args: Any) -> int:
    from core import config

    try:
        result = run(config.load(), keys=args.typesense_keys, index_name=args.pinecone_index,
                     cloud=args.pinecone_cloud, region=args.pinecone_region)
    except ConfigurationError as exc:
        sys.stderr.write(f"strata setup: {exc.message}\n")
        return 1
    Output(bool(getattr(args, "json", False))).result(result, title="provider setup")
    return 0

"""Firestore client construction, and SDK references for the paths of :mod:`core.domain.paths`."""

from __future__ import annotations

import functools
from typing import Any

from core.adapters.firestore import codec
from core.config import Settings
from core.domain import paths


@functools.lru_cache(maxsize=4)
def _client(project_id: str, emulator: str) -> Any:
    from google.cloud import firestore

    if emulator:
        from google.auth.credentials import AnonymousCredentials

        return firestore.Client(project=project_id, credentials=AnonymousCredentials())
    return firestore.Client(project=project_id)


def firestore_client(settings: Settings) -> Any:
    """A cached client per (project, emulator host). The SDK reads FIRESTORE_EMULATOR_HOST itself."""
    return _client(settings.project_id, settings.firestore_emulator_host)


class Paths:
    """Document and collection references for one Firestore client."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def user(self, uid: str) -> Any:
        return self.client.document(paths.user(uid))

    def col(self, uid: str, name: str) -> Any:
        return self.client.collection(paths.col(uid, name))

    def doc(self, uid: str, collection: str, doc_id: str) -> Any:
        return self.client.document(paths.doc(uid, collection, doc_id))

    def control(self, uid: str) -> Any:
        return self.client.document(paths.control(uid))

    def global_controls(self) -> Any:
        return self.client.document(paths.CONTROLS_GLOBAL)

    def account_deletion(self, uid: str) -> Any:
        return self.client.document(paths.account_deletion(uid))


def stream_dicts(query: Any) -> list[tuple[Any, dict[str, Any]]]:
    """``query``'s documents as (reference, data); see :func:`stream_docs`."""
    return [(ref, data) for ref, data, _ in stream_docs(query)]


def stream_docs(query: Any) -> list[tuple[Any, dict[str, Any], Any]]:
    """``query``'s documents as (reference, data, update time), decoded straight from the RunQuery
    protobufs.

    The SDK's snapshots wrap every value in proto-plus objects and deep-copy each document twice,
    about a quarter of a 100-document page's latency; the list endpoint is the hot read path, so it
    decodes the wire messages itself. Relies on the pinned SDK's query-to-protobuf hook; without it
    (another SDK version) this falls back to the snapshots.
    """
    client = query._client
    try:
        parent, _ = query._parent._parent_info()
        request = {"parent": parent, "structured_query": query._to_protobuf()}
        api, metadata = client._firestore_api, client._rpc_metadata
    except AttributeError:
        return [(snap.reference, snap.to_dict() or {}, snap.update_time) for snap in query.stream()]
    from google.api_core.datetime_helpers import DatetimeWithNanoseconds

    reference = codec.client_references(client)
    out = []
    for response in api.run_query(request=request, metadata=metadata):
        pb = response._pb
        if pb.HasField("document"):
            path = codec.document_path(pb.document.name)
            out.append((client.document(path), codec.decode_fields(pb.document.fields, reference),
                        DatetimeWithNanoseconds.from_timestamp_pb(pb.document.update_time)))
    return out

"""Firestore documents to and from the wire protobufs, without the SDK's proto-plus wrappers.

The SDK wraps every value of a document in proto-plus objects, on the way out (``set``) as on the
way in (snapshots). For the apply path's commits — a few hundred documents of nested maps each —
building those wrappers is most of the CPU a commit costs in this process (a delete-all of 2,000
memories spent 8.9 of its 22.5 s in ``pbs_for_set_no_merge``). Here a document is encoded straight
into the upb protobuf the RPC sends and decoded straight from the one it receives.

Values go through :mod:`core.adapters.firestore.codec` (``None``, ``bool``, ``int``, ``float``,
``str``, ``bytes``, datetimes, lists, tuples, dicts, document references, geo points). Anything
else — a sentinel such as ``SERVER_TIMESTAMP``, a vector, a BSON value — makes
:func:`set_document` hand the document to the SDK's own ``set``, which keeps its exact semantics
(and its errors).
"""

from __future__ import annotations

from typing import Any

from google.cloud.firestore_v1.types import write as write_types

from core.adapters.firestore import codec

_WRITE = write_types.Write.pb()


def encode_document(path: str, data: dict[str, Any]) -> Any:
    """The ``Write`` protobuf of ``set(data)`` (no merge) on the document at ``path`` (its full
    resource name); raises ``TypeError`` for a value only the SDK encodes."""
    write = _WRITE()
    write.update.name = path
    codec.fill_fields(write.update.fields, data)
    return write


def set_document(writer: Any, ref: Any, data: dict[str, Any]) -> None:
    """``writer.set(ref, data)`` for a transaction or write batch, encoded here when every value
    allows it."""
    try:
        write = encode_document(ref._document_path, data)
    except (TypeError, ValueError, OverflowError):  # a value only the SDK encodes, or refuses
        writer.set(ref, data)
        return
    writer._add_write_pbs([write])


class Snapshot:
    """A document read by :func:`get_all`: its reference, whether it exists, and its fields,
    decoded from the wire protobuf on each :meth:`to_dict` (a fresh dict each time, as the SDK's
    snapshots give)."""

    __slots__ = ("_client", "_pb", "reference")

    def __init__(self, reference: Any, pb: Any, client: Any) -> None:
        self.reference, self._pb, self._client = reference, pb, client

    @property
    def id(self) -> str:
        return str(self.reference.id)

    @property
    def exists(self) -> bool:
        return self._pb is not None

    def to_dict(self) -> dict[str, Any] | None:
        if self._pb is None:
            return None
        return codec.decode_fields(self._pb.fields, codec.client_references(self._client))


def get_all(client: Any, refs: list[Any], transaction: Any = None) -> list[Any]:
    """``client.get_all(refs, transaction=transaction)`` as :class:`Snapshot` objects decoded
    straight from the BatchGetDocuments protobufs (the SDK's own snapshots when its request hook
    is missing, in another SDK version)."""
    from google.api_core import gapic_v1

    try:
        request, reference_map, kwargs = client._prep_get_all(refs, None, transaction, gapic_v1.method.DEFAULT, None)
        api, metadata = client._firestore_api, client._rpc_metadata
    except AttributeError:
        return list(client.get_all(refs, transaction=transaction))
    out: list[Any] = []
    for response in api.batch_get_documents(request=request, metadata=metadata, **kwargs):
        pb = response._pb
        kind = pb.WhichOneof("result")
        if kind == "found":
            out.append(Snapshot(reference_map[pb.found.name], pb.found, client))
        elif kind == "missing":
            out.append(Snapshot(reference_map[pb.missing], None, client))
        else:
            raise ValueError(f"a BatchGetDocuments response with neither found nor missing ({kind})")
    return out


def get_all_beginning(client: Any, refs: list[Any], transaction: Any, retry_id: bytes | None) -> list[Any]:
    """The first read of read-write ``transaction`` (not begun yet): one BatchGetDocuments that also
    begins it (the API's ``new_transaction`` option; the SDK's ``Transaction`` always spends a
    BeginTransaction round trip first). Sets the transaction's id from the answer; ``retry_id`` names
    the attempt this one retries, as the SDK's own retries do."""
    options = _begin_options(retry_id)
    by_path = {ref._document_path: ref for ref in refs}
    request = {"database": client._database_string, "documents": list(by_path), "new_transaction": options}
    out: list[Any] = []
    for response in client._firestore_api.batch_get_documents(request=request, metadata=client._rpc_metadata):
        pb = response._pb
        if pb.transaction:
            transaction._id = pb.transaction
        kind = pb.WhichOneof("result")
        if kind == "found":
            out.append(Snapshot(by_path[pb.found.name], pb.found, client))
        elif kind == "missing":
            out.append(Snapshot(by_path[pb.missing], None, client))
        elif kind is not None:
            raise ValueError(f"a BatchGetDocuments response with neither found nor missing ({kind})")
    if not transaction._id:
        raise ValueError("BatchGetDocuments began no transaction")
    return out


def run_query_beginning(client: Any, query: Any, transaction: Any, retry_id: bytes | None) -> list[tuple[str, dict[str, Any]]]:
    """The first read of read-write ``transaction`` when it is a query: one RunQuery that also begins
    it (``new_transaction``), as :func:`get_all_beginning` does for a lookup. (slash path, data) of
    each document found."""
    parent, _ = query._parent._parent_info()
    request = {"parent": parent, "structured_query": query._to_protobuf(),
               "new_transaction": _begin_options(retry_id)}
    reference = codec.client_references(client)
    out: list[tuple[str, dict[str, Any]]] = []
    for response in client._firestore_api.run_query(request=request, metadata=client._rpc_metadata):
        pb = response._pb
        if pb.transaction:
            transaction._id = pb.transaction
        if pb.HasField("document"):
            out.append((codec.document_path(pb.document.name), codec.decode_fields(pb.document.fields, reference)))
    if not transaction._id:
        raise ValueError("RunQuery began no transaction")
    return out


def _begin_options(retry_id: bytes | None) -> Any:
    from google.cloud.firestore_v1.types import common

    return common.TransactionOptions(read_write=common.TransactionOptions.ReadWrite(retry_transaction=retry_id or b""))

"""Deterministic identifiers.

Every id is a short prefix plus a slice of a *contract hash*: sha256 of ``namespace|canonical JSON``
(sorted keys, compact separators). The same inputs always give the same id, so replays are
idempotent; ids never carry content in clear. The client device id is never a hash input.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any


def canonical_json(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def contract_hash(namespace: str, payload: Any) -> str:
    return hashlib.sha256(f"{namespace}|{canonical_json(payload)}".encode()).hexdigest()


def _id(prefix: str, namespace: str, payload: Any, length: int = 24) -> str:
    return prefix + contract_hash(namespace, payload)[:length]


def normalise_content(content: str) -> str:
    return " ".join(content.split())


def content_hash(content: str) -> str:
    return contract_hash("content", normalise_content(content))


def extracted_memory_id(uid: str, source_id: str, content: str, subject_label: str | None = None) -> str:
    payload: dict[str, Any] = {"uid": uid, "source_id": source_id, "content": normalise_content(content)}
    if subject_label:
        payload["subject"] = subject_label.casefold()
    return _id("mem_", "memory", payload)


def explicit_memory_id(uid: str, content: str, key: str = "", salt: int = 0) -> str:
    payload: dict[str, Any] = {"uid": uid, "content": normalise_content(content).casefold(), "key": key}
    if salt:
        payload["salt"] = salt
    return _id("mem_", "memory.explicit", payload)


def evidence_id(source_id: str, source_type: str, source_signal: str, extractor_id: str,
                extractor_version: str, artifact_ref: Any) -> str:
    return _id("ev_", "evidence", {
        "source_id": source_id, "source_type": source_type, "source_signal": source_signal,
        "extractor": f"{extractor_id}/{extractor_version}", "artifact_ref": artifact_ref,
    })


def operation_id(uid: str, kind: str, key: Any) -> str:
    return _id("op_", "operation", {"uid": uid, "kind": kind, "key": key})


def commit_id(uid: str, sequence: int, operation: str) -> str:
    return _id("mc_", "commit", {"uid": uid, "sequence": sequence, "operation": operation})


def outbox_event_id(commit: str, memory_id: str, action: str) -> str:
    return _id("ob_", "outbox", {"commit": commit, "memory_id": memory_id, "action": action})


def provider_id(uid: str, memory_id: str) -> str:
    """Q5: one user-scoped projection id for Typesense and Pinecone."""
    return "memproj:" + contract_hash("memproj", {"uid": uid, "memory_id": memory_id})[:40]


def receipt_id(payload: Mapping[str, Any]) -> str:
    return _id("padm_", "admission_receipt", dict(payload), 32)


def graph_plan_hash(plan: Mapping[str, Any]) -> str:
    return contract_hash("graph_plan", dict(plan))


def graph_assertion_id(uid: str, memory_id: str, revision: int, content_h: str, plan_h: str) -> str:
    return _id("mga_", "graph_assertion", {
        "uid": uid, "memory_id": memory_id, "revision": revision, "content_hash": content_h, "plan_hash": plan_h,
    })


def entity_id(label: str) -> str:
    if label == "user":
        return "user"
    return _id("ent_", "entity", " ".join(label.casefold().split()), 20)


def edge_id(source: str, target: str, label: str) -> str:
    return _id("edge_", "edge", {"source": source, "target": target, "label": label}, 20)


def review_id(memory_id: str, revision: int, conflicting: Iterable[str] = ()) -> str:
    return f"review:{memory_id}:r{revision}:{','.join(sorted(conflicting))}"


def device_id(platform: str, install_hash: str) -> str:
    return f"{platform}_{install_hash}"


def to_token(raw: bytes) -> str:
    """``raw`` as URL-safe base64 without padding (cursors, token segments)."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def from_token(token: str) -> bytes:
    """The bytes of a :func:`to_token` text, its padding restored; ValueError when it is not base64."""
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))

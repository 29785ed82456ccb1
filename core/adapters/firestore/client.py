"""Firestore client construction and the path layout of the contract (section 5)."""

from __future__ import annotations

import functools
from typing import Any

from core.config import Settings

CONTROLS_GLOBAL = ("memory_controls", "global")
APPLY_CONTROL = ("memory_state", "apply_control")


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
        return self.client.collection("users").document(uid)

    def col(self, uid: str, name: str) -> Any:
        return self.user(uid).collection(name)

    def doc(self, uid: str, collection: str, doc_id: str) -> Any:
        return self.col(uid, collection).document(doc_id)

    def control(self, uid: str) -> Any:
        return self.doc(uid, *APPLY_CONTROL)

    def global_controls(self) -> Any:
        return self.client.collection(CONTROLS_GLOBAL[0]).document(CONTROLS_GLOBAL[1])

    def account_deletion(self, uid: str) -> Any:
        return self.client.collection("account_deletions").document(uid)

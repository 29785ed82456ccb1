"""Document paths of the store layout (contract section 5), as slash-separated strings.

Services name documents by these paths and hand them to :class:`core.ports.Store`; only the store
adapter turns them into SDK references.
"""

from __future__ import annotations

USERS = "users"
CONTROLS_GLOBAL = "memory_controls/global"
APPLY_CONTROL = ("memory_state", "apply_control")


def user(uid: str) -> str:
    return f"{USERS}/{uid}"


def col(uid: str, collection: str) -> str:
    return f"{USERS}/{uid}/{collection}"


def doc(uid: str, collection: str, doc_id: str) -> str:
    return f"{USERS}/{uid}/{collection}/{doc_id}"


def control(uid: str) -> str:
    return doc(uid, *APPLY_CONTROL)


def account_deletion(uid: str) -> str:
    return f"account_deletions/{uid}"


def doc_id(path: str) -> str:
    """The last segment of a document path."""
    return path.rsplit("/", 1)[-1]


def owner(path: str) -> str | None:
    """The uid of a path under ``users/{uid}/...``, else None."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == USERS else None


API_KEY_LOOKUP = "api_key_hashes"


def api_key(uid: str, key_id: str) -> str:
    """A personal API key's record (name, scope, times, the secret's hash), listed by its owner."""
    return doc(uid, "api_keys", key_id)


def api_key_lookup(digest: str) -> str:
    """The global lookup of a key by its secret's SHA-256 (hex): verifying a key is one read."""
    return f"{API_KEY_LOOKUP}/{digest}"

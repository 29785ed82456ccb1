"""The store layout (contract section 5): every collection Strata reads or writes and every document
path, as slash-separated strings, named once.

Services, the unit of work, the queries and the adapters name documents only through this module
and hand the paths to :class:`core.ports.Store`; only the store adapter turns them into SDK
references. ``tests/unit/test_path_layout.py`` fails on a collection name spelled as a string
anywhere else in ``core``.

Two places are an app's choice (:class:`Layout`; ``STRATA_DATA_ROOT``, ``STRATA_CONVERSATIONS_PATH``):
the document under which Strata keeps a user's collections (``users/{uid}``) and the collection
the app writes conversations to (``users/{uid}/conversations``, the capture trigger's source). The
composition root (:class:`core.bootstrap.Context`) sets the process's layout from its settings with
:func:`configure`; every path below is built against it. Collection ids (``memory_items``, ...)
and the top-level collections are fixed: Firestore's indexes name them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- collections under the user's root (users/{uid}) ---------------------------------------------

CONVERSATIONS = "conversations"  # written by the app; the capture trigger's source (its own path)
MEMORY_ITEMS = "memory_items"  # the canonical memory records
CAPTURE_RUNS = "capture_runs"  # one marker per conversation: capture progress, cascade state
COMMITS = "memory_commits"  # the ledger: one journal entry per applied change, gapless per user
OPERATIONS = "memory_operations"  # replay records of applied operations (idempotency)
STATE = "memory_state"  # per-user singletons: the apply control (head, fence), leases, markers
OUTBOX = "memory_outbox"  # projection events the drain delivers to the indexes and the graph
REVIEW_QUEUE = "memory_review_queue"  # review rows
GRAPH_ASSERTIONS = "memory_graph_assertions"  # the admitted graph plan of each Long-term fact
KNOWLEDGE_NODES = "knowledge_nodes"  # the graph projection's entities
KNOWLEDGE_EDGES = "knowledge_edges"  # and its edges
CONSOLIDATION_ATTEMPTS = "consolidation_attempts"  # router failures per item
DELETION_RECEIPTS = "deletion_receipts"  # receipts of deletes (also top level, hashed, for a wipe)
WEBHOOK_CONFIGS = "developer_webhooks"
WEBHOOK_DELIVERIES = "webhook_deliveries"
CLIENT_DEVICES = "client_devices"
API_KEYS = "api_keys"
LEGACY_MEMORIES = "memories"  # the original system's rows, read and migrated in place
LEGACY_SHORT_TERM = "short_term"
ACTION_ITEMS = "action_items"  # the original system's conversation-derived rows, removed with it
GOALS = "goals"
REQUEST_KEYS = "request_keys"  # an Idempotency-Key's first answer, for routes that do not journal it

USER_COLLECTIONS = (
    MEMORY_ITEMS, CAPTURE_RUNS, COMMITS, OPERATIONS, STATE, GRAPH_ASSERTIONS, OUTBOX, REVIEW_QUEUE,
    KNOWLEDGE_NODES, KNOWLEDGE_EDGES, ACTION_ITEMS, GOALS, CLIENT_DEVICES, WEBHOOK_CONFIGS,
    WEBHOOK_DELIVERIES, LEGACY_MEMORIES, LEGACY_SHORT_TERM, CONSOLIDATION_ATTEMPTS, DELETION_RECEIPTS, API_KEYS,
    REQUEST_KEYS,
)
"""The collections under the user's root (``users/{uid}``) the backend writes (the app writes the
conversations, at :attr:`Layout.conversations`): what an account wipe deletes, with the conversations
when ``STRATA_WIPE_CONVERSATIONS`` says so. Nothing else under the root is Strata's: the root document
and any other subcollection are the app's, and the wipe leaves them. ``tests/unit/test_wipe_scope.py``
fails on a per-user collection named in ``core`` that is not here."""

# -- top-level collections -------------------------------------------------------------------------

ACCOUNT_DELETIONS = "account_deletions"  # the account fence: one per uid while or after a wipe
CONTROLS = "memory_controls"  # the global incident switches (one document, ``global``)
CONSOLIDATION_SCHEDULE = "consolidation_schedule"  # the per-user registry of scheduled passes
PROJECTION_REBUILDS = "projection_rebuilds"  # a ``rebuild --all`` run per provider
API_KEY_LOOKUP = "api_key_hashes"  # a personal key by its secret's SHA-256
SCHEDULER_JOBS = "scheduler_jobs"  # the local stack's pause switches (``strata scheduler``)
CONSOLIDATION_WALK = "consolidation_walk"  # the safety-net walk's cursor (one document, ``cursor``)
RATE_LIMITS = "rate_limits"  # per-user request counters, one per (user hash, kind, window, shard)
SERVER_KEYS = "server_keys"  # an operator's server keys for an app's backend (core/services/server_keys.py)
SERVER_KEY_LOOKUP = "server_key_hashes"  # a server key by its secret's SHA-256
SERVER_KEY_USERS = "users"  # under server_keys/{key_id}: each user the key wrote for

TOP_LEVEL_COLLECTIONS = (ACCOUNT_DELETIONS, CONTROLS, CONSOLIDATION_SCHEDULE, PROJECTION_REBUILDS, RATE_LIMITS)
"""The top-level collections the backend writes besides ``api_key_hashes`` and
``deletion_receipts`` (both readable by no client)."""

CONTROLS_GLOBAL = f"{CONTROLS}/global"
WALK_CURSOR = f"{CONSOLIDATION_WALK}/cursor"
APPLY_CONTROL = (STATE, "apply_control")
CONSOLIDATION_LEASE = "consolidation_lease"
PROJECTION_LEASE = "projection_lease"
LAST_CONSOLIDATION = "last_consolidation"

# -- the layout an app chooses -------------------------------------------------------------------

UID = "{uid}"
STRATA_COLLECTION_IDS = frozenset({*USER_COLLECTIONS, *TOP_LEVEL_COLLECTIONS, API_KEY_LOOKUP, DELETION_RECEIPTS,
                                   CONSOLIDATION_WALK, SCHEDULER_JOBS, SERVER_KEYS, SERVER_KEY_LOOKUP})
"""Every collection id Strata writes: an app's chosen names may not reuse one (infra/terraform's
validations list the same ids)."""
DEFAULT_DATA_ROOT = "users/{uid}"
DEFAULT_CONVERSATIONS_PATH = "users/{uid}/conversations"
_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,100}")


def layout_problems(data_root: str, conversations: str) -> list[tuple[str, str]]:
    """(``data_root`` or ``conversations_path``, what is wrong) for each way the two templates fail: both
    are slash-separated segments of letters, digits, ``_`` and ``-`` (no ``__x__``), with ``{uid}``
    exactly once as a whole segment in a document id's place; ``data_root`` is a document ending in
    ``{uid}``, ``conversations`` a collection whose id is none of Strata's own collections'."""
    found: list[tuple[str, str]] = []
    for name, template, document in (("data_root", data_root, True), ("conversations_path", conversations, False)):
        parts = template.split("/")
        bad = [p for p in parts if p != UID and (not _SEGMENT.fullmatch(p) or re.fullmatch(r"__.*__", p))]
        if bad:
            found.append((name, f"segment {bad[0]!r}: each is letters, digits, '_' or '-' (not __x__), or {UID}"))
        elif parts.count(UID) != 1 or parts.index(UID) % 2 != 1:
            found.append((name, f"needs {UID} once, as a document id (an even segment: users/{UID}/...)"))
        elif document and parts[-1] != UID:
            found.append((name, f"is a document path ending in {UID} (users/{UID}, strata_users/{UID})"))
        elif not document and len(parts) % 2 == 0:
            found.append((name, "is a collection path (an odd number of segments: users/{uid}/conversations)"))
        elif (collection := parts[-2 if document else -1]) in STRATA_COLLECTION_IDS:
            found.append((name, f"{collection!r} is one of Strata's collection ids"))
    return found


@dataclass(frozen=True)
class Layout:
    """Where Strata keeps a user's collections (``data_root``, a document path with ``{uid}``) and
    where the app writes the conversations (``conversations``, a collection path with ``{uid}``)."""

    data_root: str = DEFAULT_DATA_ROOT
    conversations: str = DEFAULT_CONVERSATIONS_PATH

    def __post_init__(self) -> None:
        problems = layout_problems(self.data_root, self.conversations)
        if problems:
            values = {"data_root": self.data_root, "conversations_path": self.conversations}
            raise ValueError("; ".join(f"{name} {values[name]!r} {what}" for name, what in problems))

    def trigger_pattern(self, uid: str = "uid", conversation_id: str = "conversation_id") -> str:
        """The conversations' document path pattern (the capture and cascade triggers',
        ``users/{uid}/conversations/{conversation_id}``), with these wildcard names."""
        return self.conversations.replace(UID, "{" + uid + "}") + "/{" + conversation_id + "}"


_layout = Layout()


def configure(data_root: str = DEFAULT_DATA_ROOT, conversations: str = DEFAULT_CONVERSATIONS_PATH) -> Layout:
    """Make (``data_root``, ``conversations``) the process's layout (a ``ValueError`` when malformed)."""
    global _layout
    _layout = Layout(data_root, conversations)
    return _layout


def layout() -> Layout:
    """The process's layout."""
    return _layout


def _match(template: str, path: str) -> str | None:
    """The uid where ``path`` starts with ``template``'s segments, else None."""
    want, parts = template.split("/"), path.split("/")
    if len(parts) < len(want):
        return None
    uid = ""
    for pattern, part in zip(want, parts, strict=False):
        if pattern == UID:
            uid = part
        elif pattern != part:
            return None
    return uid or None


# -- paths -------------------------------------------------------------------------------------------


def user(uid: str) -> str:
    """The user's root: the document Strata's per-user collections hang under."""
    return _layout.data_root.replace(UID, uid)


def users_collection() -> str:
    """The collection whose documents are users' roots (``users``)."""
    return _layout.data_root.rsplit("/", 1)[0]


def conversations_parent(uid: str) -> tuple[str, str]:
    """(the document the user's conversations collection hangs under, that collection's id)."""
    parent, _, name = _layout.conversations.replace(UID, uid).rpartition("/")
    return parent, name


def col(uid: str, collection: str) -> str:
    """One of the user's collections: under the user's root, the conversations at their own path."""
    if collection == CONVERSATIONS:
        return _layout.conversations.replace(UID, uid)
    return f"{user(uid)}/{collection}"


def doc(uid: str, collection: str, doc_id: str) -> str:
    return f"{col(uid, collection)}/{doc_id}"


def rel(collection: str, doc_id: str) -> str:
    """``collection/doc_id``: a top-level document, or one under the user's root as a plan names it
    (``memory_graph_assertions/m1``)."""
    return f"{collection}/{doc_id}"


def memory_item(uid: str, memory_id: str) -> str:
    return doc(uid, MEMORY_ITEMS, memory_id)


def conversation(uid: str, conversation_id: str) -> str:
    return doc(uid, CONVERSATIONS, conversation_id)


def capture_run(uid: str, conversation_id: str) -> str:
    return doc(uid, CAPTURE_RUNS, conversation_id)


def commit(uid: str, commit_id: str) -> str:
    """A ledger (journal) entry."""
    return doc(uid, COMMITS, commit_id)


def operation(uid: str, op_id: str) -> str:
    return doc(uid, OPERATIONS, op_id)


def outbox_event(uid: str, event_id: str) -> str:
    return doc(uid, OUTBOX, event_id)


def review_row(uid: str, review_id: str) -> str:
    return doc(uid, REVIEW_QUEUE, review_id)


def graph_assertion(uid: str, memory_id: str) -> str:
    return doc(uid, GRAPH_ASSERTIONS, memory_id)


def state(uid: str, name: str) -> str:
    """A per-user singleton under ``memory_state`` (a lease, a marker)."""
    return doc(uid, STATE, name)


def control(uid: str) -> str:
    """The apply control document: the ledger head and the user's fence."""
    return doc(uid, *APPLY_CONTROL)


def consolidation_lease(uid: str) -> str:
    return state(uid, CONSOLIDATION_LEASE)


def projection_lease(uid: str) -> str:
    return state(uid, PROJECTION_LEASE)


def last_consolidation(uid: str) -> str:
    return state(uid, LAST_CONSOLIDATION)


def rebuild_marker(uid: str, provider: str) -> str:
    """Where a user's rebuild for ``provider`` resumes."""
    return state(uid, f"rebuild_{provider}")


def rebuild_run(provider: str) -> str:
    """A ``rebuild --all`` run for ``provider``."""
    return rel(PROJECTION_REBUILDS, provider)


def deletion_receipt(uid: str, receipt_id: str) -> str:
    return doc(uid, DELETION_RECEIPTS, receipt_id)


def account_receipt(hashed: str) -> str:
    """The wipe's receipt, top level, keyed by a hash that names neither uid nor receipt id."""
    return rel(DELETION_RECEIPTS, hashed)


def account_deletion(uid: str) -> str:
    return rel(ACCOUNT_DELETIONS, uid)


def schedule_entry(uid: str) -> str:
    """The user's entry in the consolidation registry."""
    return rel(CONSOLIDATION_SCHEDULE, uid)


def doc_id(path: str) -> str:
    """The last segment of a document path."""
    return path.rsplit("/", 1)[-1]


def owner(path: str) -> str | None:
    """The uid of a path below the user's root (``users/{uid}/...``) or in the user's conversations,
    else None."""
    depth = len(path.split("/"))
    for template in (_layout.data_root, _layout.conversations):
        if depth > len(template.split("/")) and (uid := _match(template, path)):
            return uid
    return None


def conversation_of(path: str) -> tuple[str, str] | None:
    """(uid, conversation id) of a conversation document's path, else None."""
    parts = path.split("/")
    if len(parts) == len(_layout.conversations.split("/")) + 1 and (uid := _match(_layout.conversations, path)):
        return uid, parts[-1]
    return None


def api_key(uid: str, key_id: str) -> str:
    """A personal API key's record (name, scope, times, the secret's hash), listed by its owner."""
    return doc(uid, API_KEYS, key_id)


def api_key_lookup(digest: str) -> str:
    """The global lookup of a key by its secret's SHA-256 (hex): verifying a key is one read."""
    return rel(API_KEY_LOOKUP, digest)


def server_key(key_id: str) -> str:
    """An operator's server key record (name, scope, times, the secret's hash; kept once revoked)."""
    return rel(SERVER_KEYS, key_id)


def server_key_lookup(digest: str) -> str:
    """The lookup of a server key by its secret's SHA-256 (hex): verifying one is one read."""
    return rel(SERVER_KEY_LOOKUP, digest)


def server_key_users(key_id: str) -> str:
    """The users a server key wrote for (one document each, by uid): what its revoke walks."""
    return f"{server_key(key_id)}/{SERVER_KEY_USERS}"


def request_key(uid: str, digest: str) -> str:
    """The record of an ``Idempotency-Key`` a route took (by a digest of the route and the key)."""
    return doc(uid, REQUEST_KEYS, digest)


def rate_counter(name: str) -> str:
    """A rate-limit counter (top level: a write never lands under a user being wiped)."""
    return rel(RATE_LIMITS, name)

"""`strata uid-hash UID` | `strata uid-hash --find uh_…`: between a user and the ``uid_hash`` of the logs.

Log lines and spans name a user by ``uid_hash``, an HMAC-SHA256 of the uid under the
``log_hash_key`` setting (:func:`core.logs.hash_uid`), so whoever reads the logs cannot check a
guessed uid against it. An operator who holds the key (``STRATA_LOG_HASH_KEY``, the secret the
functions mount) maps it back: ``--find`` hashes every uid it can list in the project's Firestore (or
the running local stack) and prints the users whose hash it is: the users' root documents (with
or without fields), the users of the conversations collection when the app's path differs, the
consolidation registry and the account-deletion fences. Given uids, it prints each one's hash.
Exit 1 when ``--find`` finds no user.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any


def _context() -> Any:
    from strata_dev.cli.common import context as stack_context

    return stack_context()


def known_uids(ctx: Any) -> Iterator[str]:
    """Every uid the store lists (each once): users' roots, the conversations' user documents, the
    consolidation registry, the account-deletion fences."""
    from core.domain import paths

    seen: set[str] = set()
    collections = [paths.users_collection()]
    conversations_root = paths.layout().conversations.split("/")[0]
    if conversations_root not in collections:
        collections.append(conversations_root)
    collections += [paths.CONSOLIDATION_SCHEDULE, paths.ACCOUNT_DELETIONS]
    for collection in collections:
        for uid in ctx.store.children(collection):
            if uid not in seen:
                seen.add(uid)
                yield uid


def find(ctx: Any, uid_hash: str, key: str | None = None) -> tuple[list[str], int]:
    """(the uids whose hash is ``uid_hash``, how many uids were hashed)."""
    from core.logs import hash_uid

    matches, count = [], 0
    for uid in known_uids(ctx):
        count += 1
        if hash_uid(uid, key) == uid_hash:
            matches.append(uid)
    return matches, count


def _warn_unkeyed() -> None:
    from core import config

    settings = config.load()
    if not settings.log_hash_key and not settings.local:
        sys.stderr.write("warning: STRATA_LOG_HASH_KEY is empty: the hashes are the local key's, not the "
                         "deployment's (read its secret into the variable)\n")


def cmd_uid_hash(args: argparse.Namespace) -> int:
    from core.logs import hash_uid

    _warn_unkeyed()
    if args.find:
        ctx = _context()
        matches, count = find(ctx, args.find.strip())
        if args.json:
            sys.stdout.write(json.dumps({"uid_hash": args.find, "uids": matches, "searched": count}) + "\n")
        elif matches:
            sys.stdout.write("".join(f"{uid}\n" for uid in matches))
        if not matches:
            sys.stderr.write(f"strata uid-hash: no user of the {count} listed has the hash {args.find}\n")
            return 1
        return 0
    if not args.uid:
        sys.stderr.write("strata uid-hash: give a uid, or --find UID_HASH\n")
        return 2
    for uid in args.uid:
        if args.json:
            sys.stdout.write(json.dumps({"uid": uid, "uid_hash": hash_uid(uid)}) + "\n")
        else:
            sys.stdout.write(f"{uid}  {hash_uid(uid)}\n")
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``uid-hash`` to the CLI's sub-command parsers (``sub``: the CLI's ``_Subparsers``)."""
    p = sub.add_parser("uid-hash", help="operator: the uid_hash log lines carry for a uid, or (--find) the user "
                                        "a uid_hash names; keyed by STRATA_LOG_HASH_KEY")
    p.add_argument("uid", nargs="*", help="uids to hash")
    p.add_argument("--find", metavar="UID_HASH", help="the user whose hash this is (hashes every uid the store "
                                                      "lists); exits 1 when none is")
    p.set_defaults(func=cmd_uid_hash)

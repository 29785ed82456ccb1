"""`strata server-key create | list | revoke | writes`: the operator's server keys for an app's backend.

A server key (:mod:`core.services.server_keys`) lets an app's own server act on ``/v1`` for the
user it names in ``X-Strata-User``. Only an operator makes one, with this command against the
project's Firestore (or the running local stack); the secret is printed once and only its SHA-256
is stored. ``revoke`` stops the key at once and prints, per user it acted for, what it wrote (the
memories its commits touched, the conversations it created); ``writes`` prints that again later.
Output is JSON (one object; indented unless ``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _context() -> Any:
    from strata_dev.cli.common import context as stack_context

    return stack_context()


def _print(args: argparse.Namespace, value: Any) -> None:
    sys.stdout.write(json.dumps(value, default=str, indent=None if args.json else 2) + "\n")


def cmd_create(args: argparse.Namespace) -> int:
    from core.services import server_keys

    created = server_keys.create(_context(), args.name, args.scope, args.restricted)
    _print(args, created)
    if not args.json:
        sys.stderr.write("the secret is shown this once: give it to the backend as "
                         f"'Authorization: Bearer <secret>' with '{server_keys.USER_HEADER}: <uid>'\n")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from core.services import server_keys

    _print(args, {"keys": server_keys.list_keys(_context())})
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    from core.errors import NotFound
    from core.services import server_keys

    try:
        _print(args, server_keys.revoke(_context(), args.key_id))
    except NotFound as exc:
        sys.stderr.write(f"strata server-key revoke: {exc.message}\n")
        return 1
    return 0


def cmd_writes(args: argparse.Namespace) -> int:
    from core.errors import NotFound
    from core.services import server_keys

    try:
        _print(args, {"id": args.key_id, "written": server_keys.writes(_context(), args.key_id)})
    except NotFound as exc:
        sys.stderr.write(f"strata server-key writes: {exc.message}\n")
        return 1
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``server-key {create,list,revoke,writes}`` to the CLI's sub-command parsers (``sub``: the
    CLI's ``_Subparsers``, whose parsers take the shared ``--json``)."""
    parser = sub.add_parser("server-key", help="operator: server keys an app's backend uses to act for a user on "
                                               "/v1 (Authorization: Bearer strata_sk_... with X-Strata-User)")
    keys = type(sub)(parser.add_subparsers(dest="server_key_command", required=True), common)
    p = keys.add_parser("create", help="a new server key; its secret is printed once, only its hash is stored")
    p.add_argument("--name", required=True, help="which backend holds it")
    p.add_argument("--scope", required=True, choices=["read", "read+write"],
                   help="read: list, search and read; read+write: also create, edit and delete")
    p.add_argument("--restricted", action="store_true",
                   help="its reads also show users' restricted memories (health, finances, ...)")
    p.set_defaults(func=cmd_create)
    p = keys.add_parser("list", help="every server key (revoked ones too), never a secret")
    p.set_defaults(func=cmd_list)
    p = keys.add_parser("revoke", help="revoke a server key (its next request is a 401) and print what it wrote, "
                                       "per user; exits 1 for an unknown key")
    p.add_argument("key_id")
    p.set_defaults(func=cmd_revoke)
    p = keys.add_parser("writes", help="what a server key (revoked or not) wrote, per user it acted for")
    p.add_argument("key_id")
    p.set_defaults(func=cmd_writes)



def main(argv: list[str] | None = None) -> int:
    """``python -m strata_dev.cli.server_key_cmd …``: the same command outside ``strata``."""
    from strata_dev.cli.common import Subparsers as _Subparsers

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="one JSON object on one line")
    parser = argparse.ArgumentParser(prog="strata")
    register(_Subparsers(parser.add_subparsers(dest="command", required=True), common), common)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

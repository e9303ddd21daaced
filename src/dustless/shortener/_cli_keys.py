"""``dustless shortener key create|list|revoke``: the API keys of a shortener database."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

from dustless.errors import UsageError

from ._auth import hash_key, new_key
from ._model import ApiKey
from ._store import DEFAULT_DB
from ._views import iso

__all__ = ["configure_keys", "key_json", "run_keys"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")


def _db(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=DEFAULT_DB,
        metavar="URL",
        help=f"sqlite:///PATH or postgresql://USER@HOST/DB (default {DEFAULT_DB})",
    )


def _json(p: argparse.ArgumentParser, text: str) -> None:
    p.add_argument("--json", action="store_true", help=text)


def key_json(key: ApiKey) -> dict[str, object]:
    """A key as ``key list --json`` shows it (never the key: only its name and dates)."""
    return {
        "id": key.id,
        "name": key.name,
        "admin": key.admin,
        "createdAt": iso(key.created_at),
        "revokedAt": iso(key.revoked_at),
        "active": key.active,
    }


def configure_keys(parser: argparse.ArgumentParser) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="key_action", metavar="KEY_ACTION", required=True)
    create = sub.add_parser(
        "create",
        help="make a new API key and print it (once)",
        description="Make a new API key and print it on stdout. Only its SHA-256 is stored: "
        "keep the key now, it cannot be shown again.",
        formatter_class=fmt,
        epilog="examples:\n  dustless shortener key create alice --db sqlite:///./shortener.db",
    )
    create.add_argument(
        "name", metavar="NAME", help="a name for the key: 1-64 of A-Z a-z 0-9 _ . @ -"
    )
    create.add_argument(
        "--admin",
        action="store_true",
        help="the key sees and manages every link (an author key only its own)",
    )
    _db(create)
    _json(create, "print the key and its name, role and date as JSON (the key only this once)")
    listing = sub.add_parser(
        "list",
        help="list the keys (names, roles, dates; never the keys)",
        description="List the API keys: id, name, role, when made, when revoked.",
        formatter_class=fmt,
        epilog="examples:\n  dustless shortener key list",
    )
    _db(listing)
    _json(listing, "print the keys as JSON")
    revoke = sub.add_parser(
        "revoke",
        help="revoke a key: it stops working within seconds on every instance",
        description="Revoke a key by name. Its links stay; requests with it get 401 (each "
        "server remembers a checked key for up to 5 seconds).",
        formatter_class=fmt,
        epilog="examples:\n  dustless shortener key revoke alice",
    )
    revoke.add_argument("name", metavar="NAME", help="the key's name")
    _db(revoke)
    _json(revoke, "print the revoked key as JSON")


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(ts))


async def run_keys(args: argparse.Namespace) -> int:
    from ._open import store_for

    now = time.time()
    if args.key_action == "create" and not _NAME.fullmatch(args.name):
        raise UsageError(f"key name {args.name!r}: use 1-64 of A-Z a-z 0-9 _ . @ -")
    async with store_for(args.db) as store:
        if args.key_action == "create":
            key = new_key()
            made = await store.add_key(args.name, hash_key(key), args.admin, now)
            if args.json:
                print(json.dumps({**key_json(made), "key": key}, indent=2))
            else:
                print(key)
            role = "admin" if made.admin else "author"
            print(
                f"key {made.name!r} ({role}) created; this is the only time it is shown",
                file=sys.stderr,
            )
        elif args.key_action == "list":
            keys = await store.list_keys()
            if args.json:
                print(json.dumps({"keys": [key_json(k) for k in keys]}, indent=2))
                return 0
            print("id\tname\trole\tcreated\trevoked")
            for k in keys:
                role = "admin" if k.admin else "author"
                print(f"{k.id}\t{k.name}\t{role}\t{_when(k.created_at)}\t{_when(k.revoked_at)}")
        else:
            revoked = await store.revoke_key(args.name, now)
            if revoked is None:
                raise UsageError(f"no key named {args.name!r} in {args.db}")
            if args.json:
                print(json.dumps(key_json(revoked), indent=2))
            else:
                print(f"key {revoked.name!r} revoked", file=sys.stderr)
    return 0

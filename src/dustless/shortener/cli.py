"""``dustless shortener``: serve the URL shortener, and administer its database."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator

from dustless.errors import InvalidOption, UsageError

from .config import ShortenerConfig
from .model import AliasTaken, NewLink, Redirect
from .store import DEFAULT_DB, Store, open_store
from .validate import Rejected, UrlChecker, check_alias, parse_expiry

__all__ = ["HELP", "configure", "run"]

HELP = "the URL shortener service (seed 003 ch. 8) and its admin commands"

_EPILOG = """examples:
  dustless shortener serve                              # http://127.0.0.1:8000, one worker per core
  dustless shortener serve --db postgresql://app@db/short --port 8080 \\
      --base-url https://sho.rt --redirect 301 --blocklist blocked.txt --rate-limit 2
  dustless shortener add https://example.com/a/very/long/path
  dustless shortener add https://example.com/ --alias home --redirect 301
  dustless shortener stats 3fK9xQa
  dustless shortener export > links.csv
  dustless shortener import --db postgresql://app@db/short links.csv
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {text}")
    return value


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"must be >= 0 (0 disables it): {text}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0: {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    def db_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--db",
            default=DEFAULT_DB,
            help=f"sqlite:///PATH or postgresql://… (default {DEFAULT_DB})",
        )

    def base_url_option(p: argparse.ArgumentParser, default: str | None) -> None:
        p.add_argument(
            "--base-url",
            default=default,
            help="what short URLs start with (default http://HOST:PORT)",
        )

    fmt = argparse.RawDescriptionHelpFormatter
    serve = sub.add_parser(
        "serve",
        help="serve the HTTP API and the web page",
        formatter_class=fmt,
        epilog="example:\n  dustless shortener serve --port 8080 --workers 2 --redirect 301",
    )
    db_option(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=_port, default=8000, help="port (default 8000)")
    serve.add_argument(
        "--workers", type=_positive_int, default=None, help="processes (default: number of cores)"
    )
    serve.add_argument(
        "--redirect",
        type=int,
        choices=(301, 302),
        default=302,
        help="default redirect: 302 counts every click, 301 is cached by browsers (default 302)",
    )
    base_url_option(serve, None)
    serve.add_argument("--blocklist", help="file of Safe Browsing expressions to refuse (403)")
    serve.add_argument(
        "--rate-limit",
        type=_rate,
        default=1.0,
        help="creates per second per client after a burst of 100; 0 disables (default 1)",
    )
    serve.add_argument(
        "--trust-proxy",
        action="append",
        default=[],
        metavar="CIDR",
        help="believe X-Forwarded-For from this proxy address or network (repeatable)",
    )
    serve.add_argument(
        "--policy", default="rfc3986", help="normalization policy for 'same long URL'"
    )
    serve.add_argument(
        "--click-interval",
        type=_seconds,
        default=1.0,
        metavar="S",
        help="seconds between two batches of click counts; a crash loses at most the last "
        "(default 1)",
    )
    serve.add_argument("--log-level", default="info", help="uvicorn log level")

    add = sub.add_parser(
        "add",
        help="shorten one URL in a local database",
        formatter_class=fmt,
        epilog="example:\n  dustless shortener add https://example.com/long --alias ex",
    )
    add.add_argument("url", help="the long URL (http or https)")
    db_option(add)
    add.add_argument("--alias", help="custom code (3-64 of A-Z a-z 0-9 _ -)")
    add.add_argument("--redirect", type=int, choices=(301, 302), default=302)
    add.add_argument("--expires", help="expiry, RFC 3339 (e.g. 2030-01-01T00:00:00Z)")
    base_url_option(add, "http://127.0.0.1:8000")
    add.add_argument("--policy", default="rfc3986", help="normalization policy")

    stats = sub.add_parser(
        "stats",
        help="a link's clicks by day, referrer hosts and browsers",
        formatter_class=fmt,
        epilog="example:\n  dustless shortener stats 3fK9xQa --json",
    )
    stats.add_argument("code", help="the code or alias")
    db_option(stats)
    stats.add_argument("--json", action="store_true", help="print JSON")

    export = sub.add_parser(
        "export",
        help="write every link as CSV",
        formatter_class=fmt,
        epilog="example:\n  dustless shortener export --db sqlite:///./old.db > links.csv",
    )
    db_option(export)
    export.add_argument("--output", "-o", help="file to write (default stdout)")

    imp = sub.add_parser(
        "import",
        help="read links from CSV (as written by export), keeping their codes",
        formatter_class=fmt,
        epilog="example:\n  dustless shortener import --db postgresql://app@db/short links.csv",
    )
    imp.add_argument("file", help="CSV file, or - for stdin")
    db_option(imp)
    imp.add_argument("--policy", default="rfc3986", help="normalization policy")


@contextlib.asynccontextmanager
async def _store(db: str) -> AsyncIterator[Store]:
    store = await open_store(db)
    try:
        yield store
    finally:
        await store.close()


async def _add(args: argparse.Namespace) -> int:
    config = ShortenerConfig(base_url=args.base_url)
    checker = UrlChecker(args.policy, ())
    now = time.time()
    try:
        checked = checker.check(args.url)
        alias = check_alias(args.alias) if args.alias else None
        new = NewLink(
            checked.stored,
            checked.key,
            Redirect(args.redirect),
            now,
            alias,
            parse_expiry(args.expires, now),
        )
    except Rejected as exc:
        raise UsageError(
            str(exc).replace("longUrl", "URL").replace("expiresAt", "--expires")
        ) from None
    async with _store(args.db) as store:
        try:
            result = await store.create(new)
        except AliasTaken as exc:
            raise UsageError(str(exc)) from None
    print(config.short_prefix + result.link.code)
    if not result.created:
        print("(this URL already had this code)", file=sys.stderr)
    return 0


async def _stats(args: argparse.Namespace) -> int:
    async with _store(args.db) as store:
        link = await store.get(args.code)
        if link is None:
            raise UsageError(f"no link '{args.code}' in {args.db}")
        stats = await store.stats(link)
    if args.json:
        print(
            json.dumps(
                {
                    "code": link.code,
                    "longUrl": link.long_url,
                    "redirect": int(link.redirect),
                    "clicks": stats.total,
                    "byDay": dict(stats.by_day),
                    "referrers": dict(stats.referrers),
                    "userAgents": dict(stats.user_agents),
                },
                indent=2,
            )
        )
        return 0
    print(f"{link.code} → {link.long_url}")
    print(f"redirect {int(link.redirect)}, {stats.total} clicks")
    if link.redirect is Redirect.MOVED_PERMANENTLY:
        print("(301 is cached by browsers: repeat clicks are not counted)")
    for title, rows in (
        ("by day", stats.by_day),
        ("referrers", stats.referrers),
        ("browsers", stats.user_agents),
    ):
        if rows:
            print(f"{title}:")
            for key, n in rows:
                print(f"  {key or '(direct)'}\t{n}")
    return 0


async def _export(args: argparse.Namespace) -> int:
    from .csvio import write_links

    async with _store(args.db) as store:
        links = await store.export_links()
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as out:
            n = write_links(links, out)
    else:
        n = write_links(links, sys.stdout)
    print(f"exported {n} links", file=sys.stderr)
    return 0


async def _import(args: argparse.Namespace) -> int:
    from .csvio import read_links

    checker = UrlChecker(args.policy, ())
    # Read and check every row before writing any: a bad file imports nothing.
    if args.file == "-":
        rows = list(read_links(sys.stdin, "<stdin>", checker))
    else:
        try:
            with open(args.file, encoding="utf-8", newline="") as source:
                rows = list(read_links(source, args.file, checker))
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    async with _store(args.db) as store:
        added = await store.import_links(rows)
    print(f"imported {added} links ({len(rows) - added} already present)", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "serve":
        from .server import serve

        if args.blocklist and not os.path.isfile(args.blocklist):
            raise InvalidOption(f"--blocklist {args.blocklist}: no such file")
        base_url = args.base_url or f"http://{args.host}:{args.port}"
        config = ShortenerConfig(
            db=args.db,
            base_url=base_url,
            redirect=Redirect(args.redirect),
            policy=args.policy,
            blocklist=args.blocklist,
            rate_limit=args.rate_limit,
            trusted_proxies=tuple(args.trust_proxy),
            click_interval=args.click_interval,
        )
        UrlChecker(config.policy, ())  # an unknown --policy fails here (InvalidPolicy)
        _check_proxies(config.trusted_proxies)
        serve(config, args.host, args.port, args.workers, args.log_level)
        return 0
    actions = {"add": _add, "stats": _stats, "export": _export, "import": _import}
    return asyncio.run(actions[args.action](args))


def _check_proxies(proxies: tuple[str, ...]) -> None:
    import ipaddress

    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise InvalidOption(
                f"--trust-proxy {proxy!r} is not an IP address or network"
            ) from None

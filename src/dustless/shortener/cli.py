"""``dustless shortener``: serve the URL shortener, and administer its database."""

from __future__ import annotations

import argparse
import asyncio
import io
import itertools
import json
import os
import sys
import time
from typing import TYPE_CHECKING, TextIO

from dustless.errors import InvalidOption, UsageError

from ._config import ShortenerConfig
from ._model import AliasTaken, ImportCounts, NewLink, Redirect
from ._open import store_for
from ._store import DEFAULT_DB
from ._validate import (
    Rejected,
    UrlChecker,
    check_alias,
    parse_expiry,
    parse_max_visits,
    parse_since,
    parse_tags,
    parse_title,
)

__all__ = ["HELP", "configure", "run"]

HELP = "the URL shortener service (seed 003 ch. 8) and its admin commands"

_DESCRIPTION = """\
The URL shortener of seed 003 ch. 8: 7-character codes, 301/302 redirects, click statistics
(people and potential bots apart), API keys, links that end, QR codes. 'serve' runs the HTTP
service and its web page; the other actions work on the database directly."""

_EPILOG = """examples:
  dustless shortener key create alice               # prints a new API key, once
  dustless shortener serve                          # http://127.0.0.1:8000, one worker per core
  dustless shortener serve --db postgresql://app@db/short --port 8080 \\
      --base-url https://sho.rt --redirect 301 --blocklist blocked.txt --rate-limit 2
  dustless shortener add https://example.com/a/very/long/path
  dustless shortener add https://example.com/ --slug home --redirect 301 --max-visits 100
  dustless shortener add https://example.com/launch --valid-since 2030-01-01T09:00:00Z
  dustless shortener stats 3fK9xQa --json
  dustless shortener export > shortener.jsonl        # keys, links, owners, clicks
  dustless shortener import --db postgresql://app@db/short shortener.jsonl
"""

_FMT = argparse.RawDescriptionHelpFormatter


def _number(text: str, kind: type[int] | type[float], low: float, what: str) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= low or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be {what}: {text}")
    return value


def _positive_int(text: str) -> int:
    return int(_number(text, int, 1, "at least 1"))


def _port(text: str) -> int:
    value = int(_number(text, int, 0, "a port number from 0 to 65535"))
    if value > 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {text}")
    return value


def _rate(text: str) -> float:
    return _number(text, float, 0, ">= 0 (0 disables it)")


def _seconds(text: str) -> float:
    value = _number(text, float, 0, "a number of seconds > 0")
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0: {text}")
    return value


def _db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        default=DEFAULT_DB,
        metavar="URL",
        help=f"sqlite:///PATH or postgresql://USER@HOST/DB (default {DEFAULT_DB})",
    )


def _base_url_option(p: argparse.ArgumentParser, default: str | None) -> None:
    p.add_argument(
        "--base-url",
        default=default,
        metavar="URL",
        help="what short URLs start with, e.g. https://sho.rt "
        f"(default {default or 'http://HOST:PORT'})",
    )


def _redirect_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--redirect",
        type=int,
        choices=(301, 302),
        default=302,
        metavar="301|302",
        help=f"{what}: 302 sends every click through the service (all counted), 301 is "
        "cached by browsers (repeat clicks not counted) (default 302)",
    )


# What ``add_subparsers`` returns (a private class of argparse, named once here; not
# subscriptable at run time, so for the annotations only).
if TYPE_CHECKING:
    _Actions = argparse._SubParsersAction[argparse.ArgumentParser]


def _action(
    sub: _Actions,
    name: str,
    help_text: str,
    description: str,
    example: str,
) -> argparse.ArgumentParser:
    return sub.add_parser(
        name,
        help=help_text,
        description=description,
        formatter_class=_FMT,
        epilog="examples:\n  " + example,
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = _DESCRIPTION
    parser.epilog = _EPILOG
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    _configure_serve(sub)
    _configure_add(sub)
    _configure_stats(sub)
    _configure_export(sub)
    _configure_import(sub)
    _configure_key(sub)


def _configure_serve(sub: _Actions) -> None:
    """The ``serve`` action's arguments."""
    serve = _action(
        sub,
        "serve",
        "serve the HTTP API and the web page",
        "Serve the shortener's HTTP API, redirects and web page with uvicorn. Creating links "
        "needs an API key (see 'key create') unless --public is given.",
        "dustless shortener serve --port 8080 --workers 2 --base-url https://sho.rt",
    )
    _db_option(serve)
    serve.add_argument(
        "--host", default="127.0.0.1", metavar="ADDRESS", help="address to listen on"
    )
    serve.add_argument(
        "--port", type=_port, default=8000, metavar="PORT", help="port (default 8000)"
    )
    serve.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        metavar="N",
        help="processes (default: number of cores)",
    )
    _redirect_option(serve, "default redirect of new links")
    _base_url_option(serve, None)
    _serve_guards(serve)
    serve.add_argument(
        "--policy",
        default="rfc3986",
        metavar="POLICY",
        help="normalization policy deciding when two long URLs are the same (default rfc3986)",
    )
    serve.add_argument(
        "--click-interval",
        type=_seconds,
        default=1.0,
        metavar="S",
        help="seconds between two batches of click counts; a crash loses at most the last "
        "(default 1)",
    )
    serve.add_argument(
        "--log-level", default="info", metavar="LEVEL", help="uvicorn log level (default info)"
    )


def _serve_guards(serve: argparse.ArgumentParser) -> None:
    """``serve``'s limits: who may create links and read statistics, how fast, to where."""
    serve.add_argument(
        "--blocklist", metavar="FILE", help="file of Safe Browsing expressions to refuse (403)"
    )
    serve.add_argument(
        "--rate-limit",
        type=_rate,
        default=1.0,
        metavar="R",
        help="creates per second per API key after a burst of 100; without a key (--public) "
        "a tenth of it per address, burst 10; 0 disables both (default 1)",
    )
    serve.add_argument(
        "--public",
        action="store_true",
        help="let anyone create links without an API key (limited harder, per address)",
    )
    serve.add_argument(
        "--public-stats",
        action="store_true",
        help="let anyone read any link's statistics (by default only its key and admin keys)",
    )
    serve.add_argument(
        "--miss-limit",
        type=_rate,
        default=1.0,
        metavar="R",
        help="unknown codes (404) per second per address after a burst of 30, then 429; "
        "0 disables (default 1)",
    )
    serve.add_argument(
        "--trust-proxy",
        action="append",
        default=[],
        metavar="CIDR",
        help="believe X-Forwarded-For from this proxy address or network (repeatable)",
    )
    serve.add_argument(
        "--own-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name that reaches this service; long URLs to it are refused (repeatable)",
    )
    serve.add_argument(
        "--allow-private-targets",
        action="store_true",
        help="accept long URLs to private addresses (10/8, 192.168/16 …; never loopback)",
    )


def _configure_add(sub: _Actions) -> None:
    """The ``add`` action's arguments."""
    add = _action(
        sub,
        "add",
        "shorten one URL in the database",
        "Shorten one URL directly in the database (no server needed); prints the short URL.",
        "dustless shortener add https://example.com/long --slug ex --max-visits 10",
    )
    add.add_argument("url", metavar="URL", help="the long URL (http or https)")
    _db_option(add)
    add.add_argument(
        "--slug",
        "--alias",
        dest="alias",
        metavar="SLUG",
        help="custom code: 3-64 of A-Z a-z 0-9 _ -, not 7 letters and digits alone",
    )
    _redirect_option(add, "how the link redirects")
    add.add_argument(
        "--valid-until",
        "--expires",
        dest="expires",
        metavar="TIME",
        help="when the link ends (410 Gone after it), RFC 3339, e.g. 2030-01-01T00:00:00Z",
    )
    add.add_argument(
        "--valid-since",
        dest="since",
        metavar="TIME",
        help="when the link starts working (404 Not Found before it, as Shlink), RFC 3339",
    )
    add.add_argument("--title", metavar="TEXT", help="the link's title (up to 512 characters)")
    add.add_argument(
        "--max-visits",
        type=_positive_int,
        metavar="N",
        help="the link ends (410 Gone) after N redirects",
    )
    _base_url_option(add, "http://127.0.0.1:8000")
    add.add_argument(
        "--policy",
        default="rfc3986",
        metavar="POLICY",
        help="normalization policy (default rfc3986)",
    )
    add.add_argument(
        "--tag",
        action="append",
        default=[],
        dest="tags",
        metavar="TAG",
        help="a tag for the link (repeatable)",
    )
    add.add_argument(
        "--json", action="store_true", help="print the link as JSON (the API's shape, + created)"
    )


def _configure_stats(sub: _Actions) -> None:
    """The ``stats`` action's arguments."""
    stats = _action(
        sub,
        "stats",
        "a link's clicks by day, referrer hosts and browsers",
        "A link's clicks (people and potential bots apart) by day, referrer host and browser "
        "family; --json prints the same object as GET /api/v1/CODE/stats.",
        "dustless shortener stats 3fK9xQa --json",
    )
    stats.add_argument("code", metavar="CODE", help="the code or custom slug")
    _db_option(stats)
    _base_url_option(stats, "http://127.0.0.1:8000")
    stats.add_argument("--json", action="store_true", help="print JSON (the API's shape)")


def _configure_export(sub: _Actions) -> None:
    """The ``export`` action's arguments."""
    export = _action(
        sub,
        "export",
        "write the whole database (keys, links, owners, clicks) as JSON Lines",
        "Write everything needed to move a deployment to another database: API keys (their "
        "stored SHA-256, never a key), links with their owners, codes, limits and ends, and "
        "their click counts, as JSON Lines (a versioned header, then one record a line). "
        "--format csv writes the older links-only CSV (no owners, keys or clicks). A bad row "
        "is reported on stderr and never stops the export.",
        "dustless shortener export --db sqlite:///./old.db > shortener.jsonl",
    )
    _db_option(export)
    export.add_argument("--output", "-o", metavar="FILE", help="file to write (default stdout)")
    export.add_argument(
        "--format",
        choices=("jsonl", "csv"),
        default="jsonl",
        help="jsonl: everything (default); csv: links only, superseded",
    )


def _configure_import(sub: _Actions) -> None:
    """The ``import`` action's arguments."""
    imp = _action(
        sub,
        "import",
        "read an export (JSON Lines, or the older CSV), keeping codes and owners",
        "Read a file written by 'export' — JSON Lines (keys, owners, clicks too) or the older "
        "CSV, told apart by the first line — keeping every code. Every line is checked first: "
        "a bad one names its line and nothing is imported. Importing twice adds nothing; a "
        "code naming another URL, or a key name with another hash, refuses the whole file.",
        "dustless shortener import --db postgresql://app@db/short shortener.jsonl\n"
        "  dustless shortener import --from shlink short_urls.csv",
    )
    imp.add_argument("file", metavar="FILE", help="export file, or - for stdin")
    _db_option(imp)
    imp.add_argument(
        "--policy",
        default="rfc3986",
        metavar="POLICY",
        help="normalization policy (default rfc3986)",
    )
    imp.add_argument(
        "--from",
        dest="source",
        choices=("dustless", "shlink", "yourls"),
        default="dustless",
        help="whose export FILE is: dustless (default), shlink (the web client's short URL "
        "CSV) or yourls (the yourls_url table as CSV with a header row)",
    )
    imp.add_argument("--json", action="store_true", help="print what was imported as JSON")


def _configure_key(sub: _Actions) -> None:
    """The ``key`` action's arguments."""
    from ._cli_keys import configure_keys

    configure_keys(
        _action(
            sub,
            "key",
            "create, list and revoke API keys",
            "API keys: who may create links, and whose links a request sees. The key is shown "
            "once, when it is made; the database keeps only its SHA-256.",
            "dustless shortener key create alice && dustless shortener key revoke alice",
        )
    )


async def _add(args: argparse.Namespace) -> int:
    config = ShortenerConfig(base_url=args.base_url)
    checker = UrlChecker(args.policy, ())
    now = time.time()
    try:
        checked = checker.check(args.url)
        alias = check_alias(args.alias) if args.alias else None
        until = parse_expiry(args.expires, now, "--valid-until")
        new = NewLink(
            checked.stored,
            checked.key,
            Redirect(args.redirect),
            now,
            alias,
            until,
            max_visits=parse_max_visits(args.max_visits),
            tags=parse_tags(args.tags, "--tag"),
            valid_since=parse_since(args.since, until, "--valid-since"),
            title=parse_title(args.title, "--title"),
        )
    except Rejected as exc:
        message = (
            str(exc)
            .replace("longUrl", "URL")
            .replace("customSlug", "--slug")
            .replace("before validUntil", "before --valid-until")
        )
        raise UsageError(message) from None
    async with store_for(args.db) as store:
        try:
            result = await store.create(new)
        except AliasTaken as exc:
            raise UsageError(str(exc)) from None
        tags = (
            new.tags
            if result.created
            else (await store.tags_of([result.link.id])).get(result.link.id, ())
        )
    if args.json:
        from ._views import link_json

        body = link_json(result.link, config.short_prefix, time.time(), tags=tags)
        body["created"] = result.created
        print(json.dumps(body, indent=2))
        return 0
    print(config.short_prefix + result.link.code)
    if not result.created:
        print("(this URL already had this code)", file=sys.stderr)
    return 0


async def _stats(args: argparse.Namespace) -> int:
    from ._views import DIRECT, iso, stats_json

    config = ShortenerConfig(base_url=args.base_url)
    async with store_for(args.db) as store:
        link = await store.get(args.code)
        if link is None:
            raise UsageError(f"no link '{args.code}' in {args.db}")
        stats = await store.stats(link)
        tags = (await store.tags_of([link.id])).get(link.id, ())
    now = time.time()
    if args.json:
        print(json.dumps(stats_json(stats, config.short_prefix, now, tags), indent=2))
        return 0
    print(f"{link.code} → {link.long_url}")
    if link.title:
        print(f"title: {link.title}")
    if link.valid_since is not None:
        print(f"valid since {iso(link.valid_since)}")
    print(
        f"redirect {int(link.redirect)}, {stats.total} clicks: {stats.human} by people, "
        f"{stats.bots} by potential bots; {link.ended(now).value}"
    )
    if tags:
        print("tags: " + ", ".join(tags))
    if link.redirect is Redirect.MOVED_PERMANENTLY:
        print("(301 is cached by browsers: repeat clicks are not counted)")
    for title, rows in (
        ("by day", stats.by_day),
        ("referrers", stats.referrers),
        ("browsers", stats.user_agents),
        ("operating systems", stats.operating_systems),
    ):
        if rows:
            print(f"{title}:")
            for key, n in rows:
                print(f"  {key or DIRECT}\t{n}")
    return 0


async def _export(args: argparse.Namespace) -> int:
    from ._csvio import write_links
    from ._dump import write_dump

    def report(problem: str) -> None:
        print(f"dustless shortener export: warning: {problem}", file=sys.stderr)

    async with store_for(args.db) as store:
        if args.format == "csv":
            rows = await store.export_rows()
        else:
            raw = await store.export_dump()
    out = (
        open(args.output, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed below
        if args.output
        else sys.stdout
    )
    try:
        if args.format == "csv":
            written, skipped = write_links(rows, out, report)
            keys = ""
        else:
            n_keys, written, skipped = write_dump(raw, out, report, time.time())
            keys = f" and {n_keys} keys"
    finally:
        if out is not sys.stdout:
            out.close()
    left_out = f", {skipped} left out (see above)" if skipped else ""
    print(f"exported {written} links{keys}{left_out}", file=sys.stderr)
    return 1 if skipped else 0


async def _import(args: argparse.Namespace) -> int:
    checker = UrlChecker(args.policy, ())
    # Read and check every line before writing any: a bad file imports nothing.
    if args.file == "-":
        return await _import_from(sys.stdin, "<stdin>", args, checker)
    try:
        with open(args.file, encoding="utf-8", newline="") as source:
            return await _import_from(source, args.file, args, checker)
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.file}: not UTF-8 text ({exc.reason})") from None


async def _import_from(
    source: TextIO, name: str, args: argparse.Namespace, checker: UrlChecker
) -> int:
    from ._csvio import read_links
    from ._dump import is_dump, read_dump

    first = source.readline()
    if args.source != "dustless":
        from ._foreign import read_foreign

        records = read_foreign(
            io.StringIO(first.lstrip("\ufeff") + source.read()), name, args.source, checker
        )
        async with store_for(args.db) as store:
            counts = await store.import_dump((), records)
        kind = args.source
    elif is_dump(first):
        dump = read_dump(itertools.chain([first], source), name, checker)
        async with store_for(args.db) as store:
            counts = await store.import_dump(dump.keys, dump.links)
        kind = "jsonl"
    else:
        rows = list(read_links(io.StringIO(first + source.read()), name, checker))
        async with store_for(args.db) as store:
            added = await store.import_links(rows)
        counts = ImportCounts(0, 0, added, len(rows) - added, 0)
        kind = "csv"
    if args.json:
        print(json.dumps(_import_json(kind, counts), indent=2))
    elif kind != "csv":
        print(
            f"imported {counts.links_added} links ({counts.links_present} already present), "
            f"{counts.keys_added} keys ({counts.keys_present} already present), "
            f"{counts.clicks_added} clicks",
            file=sys.stderr,
        )
    else:
        print(
            f"imported {counts.links_added} links ({counts.links_present} already present)",
            file=sys.stderr,
        )
    return 0


def _import_json(kind: str, counts: ImportCounts) -> dict[str, object]:
    return {
        "format": kind,
        "linksAdded": counts.links_added,
        "linksPresent": counts.links_present,
        "keysAdded": counts.keys_added,
        "keysPresent": counts.keys_present,
        "clicksAdded": counts.clicks_added,
    }


def _serve(args: argparse.Namespace) -> int:
    from ._server import serve

    if args.blocklist and os.path.isdir(args.blocklist):
        raise InvalidOption(f"--blocklist {args.blocklist}: is a directory")
    if args.blocklist and not os.path.exists(args.blocklist):
        raise InvalidOption(f"--blocklist {args.blocklist}: no such file")
    base_url = args.base_url or f"http://{args.host}:{args.port}"
    config = ShortenerConfig(
        db=args.db,
        base_url=base_url,
        redirect=Redirect(args.redirect),
        policy=args.policy,
        blocklist=args.blocklist,
        rate_limit=args.rate_limit,
        public=args.public,
        public_stats=args.public_stats,
        miss_rate_limit=args.miss_limit,
        trusted_proxies=tuple(args.trust_proxy),
        own_hosts=tuple(args.own_host),
        allow_private_targets=args.allow_private_targets,
        click_interval=args.click_interval,
    )
    UrlChecker(config.policy, ())  # an unknown --policy fails here (InvalidPolicy)
    _check_proxies(config.trusted_proxies)
    serve(config, args.host, args.port, args.workers, args.log_level)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "serve":
        return _serve(args)
    if args.action == "key":
        from ._cli_keys import run_keys

        return asyncio.run(run_keys(args))
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

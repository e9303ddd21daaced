"""``dustless crawl DIR URL…``: crawl from seeds into a directory (crawl.db + warc/), resumable.

Everything the command line says is checked before the engine is imported (the store,
the fetcher), so a mistake is reported at once.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dustless.cli._crawlopts import add_crawl_settings, add_progress_options, positive_seconds
from dustless.cli._input import InputError, content_lines, numbered_lines
from dustless.cli._log import open_log, say, warn
from dustless.cli._source import check_db_reachable, check_db_url
from dustless.errors import InvalidOption, InvalidURL
from dustless.words import plural

if TYPE_CHECKING:
    from dustless.cli._outcome import CrawlOutcome
    from dustless.crawl.config import CrawlConfig
    from dustless.crawl.engine import CrawlResult

HELP = "crawl from seeds into a directory (crawl.db + warc/), resumable"

_USAGE = """dustless crawl DIR [URL ...] [--seeds FILE] [options]
       dustless crawl DIR --resume
       dustless crawl URL ... --out DIR [options]
       dustless crawl DIR [URL ...] --db postgresql://... [--worker NAME] [options]
       dustless crawl --db postgresql://... --status"""

_EPILOG = """examples:
  dustless crawl crawl1 https://example.org/
  dustless crawl crawl2 --seeds seeds.txt --scope domain --max-depth 3 --max-pages 10000
  dustless testweb --port 8400 &            # the synthetic test web on loopback
  dustless crawl tw http://site1.test:8400/ --resolve '*.test:127.0.0.1' --delay 0.05
  dustless crawl crawl1 --resume            # after Ctrl-C or a crash: continue where it was
  dustless crawl crawl2 --seeds seeds.txt --rules rules.xml   # learned rules (identities)
  dustless crawl crawl3 https://example.org/ --learn         # learn them while crawling
  dustless rules show crawl3                 # what it learned (crawl3/learned-rules.xml)
  dustless crawl c4 https://example.org/ --quiet --json | jq .errors   # summary as JSON
  nohup dustless crawl c5 --seeds seeds.txt --quiet --log-file c5.log &  # progress to a log
  dustless crawl web http://www.web.com/list.aspx?cate_id=467 --script web.xml
  dustless crawl news https://example.org/ --sitemaps --feeds   # pages no link reaches
  dustless crawl links https://example.org/ --store none   # link graph: only seeds.out.txt
  dustless crawl w1 https://example.org/ --db postgresql://crawler@dbhost/crawl  # machine 1
  dustless crawl w2 https://example.org/ --db postgresql://crawler@dbhost/crawl  # machine 2
  dustless crawl --db postgresql://crawler@dbhost/crawl --status     # workers, leases, rate

DIR comes first, as for every command that reads a crawl; `--out DIR` says the same (then
every argument is a seed URL). The directory holds crawl.db (SQLite), warc/*.warc.gz
(WARC 1.1) and, at the end, seeds.out.txt (every seed, the discovered ones too: the next
crawl's --seeds file).
With --db postgresql://... the crawl's state is in that database, shared by every worker
that names it; DIR holds this worker's WARC files. The first worker starts the crawl, the
same command on another machine joins it (see "Many machines" in docs/crawling.md).
Politeness: one request at a time per host, and a host rests
max(--delay, robots.txt Crawl-delay capped at 30 s, --delay-factor x the last fetch time)
between two requests; politeness, not the machine, sets a crawl's pace.
With --store none nothing is archived: no crawl.db, no WARC, no CDXJ; the frontier and
URL-seen live in memory, DIR gets seeds.out.txt alone, and the crawl cannot be resumed.
A crawl none of whose seeds could be fetched exits with status 1 and says why.
--json prints the end summary as one JSON document on stdout (its keys: docs/crawling.md,
"The summary as JSON"); --log-file appends progress, summary and warnings to a timed log.
See docs/crawling.md."""

# A progress line every this many seconds when stderr is not a terminal (a log file).
PROGRESS_INTERVAL = 10.0


def configure(parser: argparse.ArgumentParser) -> None:
    from dustless.crawl.config import CrawlConfig  # the defaults; not the engine

    d = CrawlConfig()
    parser.usage = _USAGE
    parser.epilog = _EPILOG
    parser.add_argument(
        "targets",
        nargs="*",
        metavar="DIR URL",
        help="the crawl directory, then seed URLs (with --out DIR, seed URLs only)",
    )
    parser.add_argument("--out", metavar="DIR", help="the crawl directory, when not given first")
    parser.add_argument(
        "--seeds",
        metavar="FILE",
        help="file of seed URLs, one a line (# comments), - for stdin; unlike seeds typed on "
        "the command line, its private or loopback addresses need --allow-private",
    )
    parser.add_argument(
        "--policy",
        default=d.policy,
        metavar="NAME",
        help=f"normalization policy: a URL's identity for URL-seen (default {d.policy})",
    )
    parser.add_argument(
        "--scope",
        choices=("host", "domain", "any"),
        default=d.scope.value,
        help="what a party's site is: its host, its registrable domain, or no boundary "
        "(default host)",
    )
    add_crawl_settings(parser, d)
    _add_rules_and_learning(parser, d)
    parser.add_argument(
        "--script",
        action="append",
        default=[],
        metavar="FILE.xml",
        help="seed 002 pattern script: on its sites follow only the links its patterns name, "
        "rewritten to targetAddr, javascript links too, detail pages first; repeatable",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the unfinished crawl in DIR with its own settings",
    )
    parser.add_argument(
        "--store",
        choices=("warc", "none"),
        default=d.store,
        help="what the crawl keeps: warc (default: DIR/crawl.db and WARC files, resumable) "
        "or none (link-graph and discovery crawls: the frontier in memory, DIR gets only "
        "seeds.out.txt, no --resume); example: --store none",
    )
    add_progress_options(parser, interval=PROGRESS_INTERVAL)
    _add_many_machines(parser, d)


def _add_rules_and_learning(parser: argparse.ArgumentParser, d: CrawlConfig) -> None:
    """Rules given (``--rules``) and learned while crawling (``--learn`` and its bounds)."""
    parser.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="FILE",
        help="learned rules or pattern script (dustless rules learn): its rules join the "
        "policy's site-rules step and merge identities; repeatable",
    )
    parser.add_argument(
        "--learn",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="learn each site's URL rules while crawling, from its content, redirects and "
        "rel=canonical, and apply them to the rest of the crawl (written to "
        "DIR/learned-rules.xml); on by default with --policy aggressive",
    )
    parser.add_argument(
        "--max-fp",
        type=float,
        default=d.max_fp,
        metavar="RATE",
        help=f"with --learn: the highest share of differing pairs a learned rule may merge "
        f"before it is retracted (default {d.max_fp}); a host alias is judged by the parts "
        "of the site it was checked in instead (docs/learning.md)",
    )
    parser.add_argument(
        "--min-support",
        type=int,
        default=d.min_support,
        metavar="N",
        help=f"with --learn: independent equal-content pairs a rule needs (default "
        f"{d.min_support})",
    )


def _add_many_machines(parser: argparse.ArgumentParser, d: CrawlConfig) -> None:
    """A crawl shared on PostgreSQL: the DB, this worker's name, its leases, the status."""
    many = parser.add_argument_group("many machines (a crawl shared on PostgreSQL)")
    many.add_argument(
        "--db",
        metavar="URL",
        help="postgresql://… : the crawl DB every worker shares; DIR holds this worker's WARC "
        "files (default: DIR/crawl.db, SQLite, this machine alone)",
    )
    many.add_argument(
        "--worker",
        metavar="NAME",
        help="this worker's name in leases, fetch rows and WARC file names "
        "(default MACHINE-PID; --resume keeps the name DIR was started with)",
    )
    many.add_argument(
        "--lease-ttl",
        type=positive_seconds,
        default=d.lease_ttl,
        metavar="S",
        help="seconds a host lease lasts unrenewed: a killed worker's hosts are taken over "
        f"after it (default {d.lease_ttl:g}; set by the worker that starts the crawl)",
    )
    many.add_argument(
        "--status",
        action="store_true",
        help="with --db: print the workers, their leases, the queue and the rates, and exit "
        "(--json: as one JSON document)",
    )


def _looks_like_url(text: str) -> bool:
    return "://" in text


def _directory_and_urls(args: argparse.Namespace) -> tuple[Path, list[str]]:
    targets: list[str] = list(args.targets)
    if args.out is not None:
        return Path(args.out), targets
    if not targets:
        raise InvalidOption("no crawl directory: dustless crawl DIR URL… (or --out DIR)")
    first = targets[0]
    if _looks_like_url(first):
        raise InvalidOption(
            f"no crawl directory: {first!r} is a URL; the directory comes first: "
            f"dustless crawl DIR {first} (or add --out DIR)"
        )
    return Path(first), targets[1:]


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")  # RFC 3986 §3.1


def _seed(url: str, where: str) -> str:
    """A seed in its rfc3986 form, or one line saying what is wrong with it and where."""
    from dustless.url import normalize

    scheme = _SCHEME.match(url)
    # "example.com:8080/" is a host and a port, not the scheme "example.com" (RFC 3986 §3.1
    # allows dots in a scheme, so only what follows the colon tells them apart).
    if scheme is None or url[scheme.end() :][:1].isdigit():
        guess = "http://" + url.lstrip("/")
        raise InvalidOption(f"{where}{url!r} has no scheme: did you mean {guess}?")
    if scheme.group(1).lower() not in ("http", "https"):
        raise InvalidOption(f"{where}{url!r}: only http and https URLs can be crawled")
    try:
        return normalize(url, "rfc3986")
    except InvalidURL as exc:
        raise InvalidOption(f"{where}{url!r}: {exc}") from None


def _seeds(urls: list[str], seeds_file: str | None) -> tuple[list[str], list[str]]:
    """``(every seed, the seeds typed on the command line)``, in rfc3986 form: only typed
    ones vouch for a private address (a file may be an earlier crawl's seeds.out.txt)."""
    typed = [_seed(url, "seed ") for url in urls]
    out = list(typed)
    if seeds_file:
        for number, line in content_lines(numbered_lines(seeds_file)):
            try:
                out.append(_seed(line, "seed "))
            except InvalidOption as exc:
                raise InputError(seeds_file, str(exc), number) from None
    return out, typed


def _check_addresses(resolve: list[str], allow: list[str], deny: list[str]) -> None:
    import ipaddress

    from dustless.fetch import parse_resolve

    for spec in resolve:
        parse_resolve(spec)  # the one parser of NAME:IP, the fetcher's
    for option, specs in (("--allow-ip", allow), ("--deny-ip", deny)):
        for spec in specs:
            try:
                ipaddress.ip_network(spec, strict=False)
            except ValueError:
                raise InvalidOption(f"{option}: not an address range (CIDR): {spec!r}") from None


def _check_directory(out: Path, *, resume: bool) -> None:
    if out.exists() and not out.is_dir():
        raise InvalidOption(f"{out} is a file: the crawl directory must be a directory")
    db = out / "crawl.db"
    if resume and not db.is_file():
        raise InvalidOption(f"{out} holds no crawl to resume (no crawl.db)")
    if not resume and db.exists():
        from dustless.crawl.resume import failed_first_crawl

        if failed_first_crawl(out):
            return  # nothing of it answered: the run starts over (crawl/resume.py)
        raise InvalidOption(
            f"{out} already holds a crawl: add --resume to continue it, or choose another directory"
        )


def _rule_files(paths: list[str], quiet: bool) -> tuple[str, ...]:
    """Absolute paths (``--resume`` may run elsewhere), each file checked now: a broken one
    is a ``ScriptError`` naming ``FILE:LINE:``; warnings (Fig. 6's bare '&') go to stderr
    and the log."""
    import os

    from dustless.rules import load_script

    for path in paths:
        loaded = load_script(path)
        for w in loaded.warnings:
            warn(str(w), quiet=quiet)
    return tuple(os.path.abspath(p) for p in paths)


def config_from(
    args: argparse.Namespace, seeds: list[str], typed: list[str] | None = None
) -> CrawlConfig:
    """The crawl's settings from a checked command line (``InvalidOption`` if out of range)."""
    from dustless.crawl.config import CrawlConfig
    from dustless.crawl.scope import Scope
    from dustless.url import get_policy

    get_policy(args.policy)  # an unknown policy is named before anything starts
    _check_addresses(args.resolve, args.allow_ip, args.deny_ip)
    return CrawlConfig(
        seeds=tuple(seeds),
        trusted_seeds=None if typed is None else tuple(typed),
        policy=args.policy,
        resolve=tuple(args.resolve),
        scope=Scope(args.scope),
        max_depth=args.max_depth,
        max_pages=args.max_pages,
        max_pages_per_site=args.max_pages_per_site,
        max_sites=args.max_sites,
        concurrency=args.concurrency,
        spelling_tries=args.spelling_tries,
        no_soft404_probe=args.no_soft404_probe,
        learn=args.policy == "aggressive" if args.learn is None else args.learn,
        max_fp=args.max_fp,
        min_support=args.min_support,
        delay=args.delay,
        delay_factor=args.delay_factor,
        max_crawl_delay=args.max_crawl_delay,
        backoff=args.backoff,
        max_failures=args.max_failures,
        stall_timeout=args.stall_timeout,
        connect_timeout=args.connect_timeout,
        total_timeout=args.total_timeout,
        user_agent=args.user_agent,
        allow_ip=tuple(args.allow_ip),
        deny_ip=tuple(args.deny_ip),
        allow_private=args.allow_private,
        ca_file=args.ca_file,
        sitemaps=args.sitemaps,
        feeds=args.feeds,
        sitemap_depth=args.sitemap_depth,
        max_sitemaps=args.max_sitemaps,
        rules=_rule_files(args.rules, args.quiet),
        scripts=_rule_files(args.script, args.quiet),
        progress=not args.quiet,
        lease_ttl=args.lease_ttl,
        warc_bodies=args.warc_bodies,
        store=args.store,
    )


def _no_seeds_message(out: Path, seeds_given: bool) -> str:
    message = "no seeds: give URLs after the directory, or --seeds FILE (or --resume)"
    name = str(out)
    if not seeds_given and "." in name and "/" not in name and not out.exists():
        # `dustless crawl example.com`: the site was taken for the directory.
        message += (
            f"; {name!r} was taken as the crawl directory: to crawl that site, "
            f"dustless crawl DIR http://{name}/"
        )
    return message


def _check_db(args: argparse.Namespace) -> str | None:
    """``--db``'s URL (or ``None``: SQLite in DIR); the options that need it, checked."""
    db: str | None = args.db
    if args.store == "none":
        # Nothing is kept, so nothing can be continued or shared (docs/crawling.md).
        for option, given in (("--resume", args.resume), ("--db", db), ("--status", args.status)):
            if given:
                raise InvalidOption(
                    f"{option} is impossible with --store none: a crawl that stores nothing "
                    "keeps its frontier in this process's memory alone"
                )
    if db is not None:
        check_db_url(db, "the crawl DB is DIR/crawl.db")
    else:
        for option, given in (("--worker", args.worker), ("--status", args.status)):
            if given:
                raise InvalidOption(f"{option} needs --db postgresql://… (a shared crawl)")
    return db


def run(args: argparse.Namespace) -> int:
    db = _check_db(args)
    if args.status:
        assert db is not None
        check_db_reachable(db)
        from dustless.cli._status import print_status

        return print_status(db, as_json=args.json)
    out, urls = _directory_and_urls(args)
    if db is None:
        _check_directory(out, resume=args.resume)
    elif out.exists() and not out.is_dir():
        raise InvalidOption(f"{out} is a file: the worker's directory must be a directory")
    # Before the settings are read: a rules file's warnings go to the log too.
    log = open_log(args.log_file, args.log_level)
    if args.resume:
        if urls or args.seeds:
            raise InvalidOption("--resume continues the crawl with its own seeds: give none")
        from dustless.crawl.config import CrawlConfig

        config = CrawlConfig(progress=not args.quiet)
    else:
        seeds, typed = _seeds(urls, args.seeds)
        if not seeds and db is None:
            raise InvalidOption(_no_seeds_message(out, bool(urls or args.seeds)))
        # With --db and no seeds: this worker joins the open crawl (refused if none is).
        config = config_from(args, seeds, typed)

    if db is not None:
        check_db_reachable(db)  # the last argument to check, for it takes a connection
    # The command line is sound: only now the engine.
    from dustless.cli._outcome import crawl_outcome
    from dustless.crawl.progress import Progress
    from dustless.crawl.resume import CrawlFinished
    from dustless.crawl.run import run_crawl

    progress = Progress(enabled=config.progress, interval=args.progress_interval, log=log)
    try:
        result = run_crawl(
            config, out, resume=args.resume, progress=progress, db=db, worker=args.worker
        )
    except CrawlFinished as done:
        if not done.repaired:
            raise
        print(str(done), file=sys.stderr)
        return 0
    # The seeds' outcome is read from DIR/crawl.db; a worker's crawl has none there.
    finished = result.finished and not args.resume and db is None
    if args.store == "none":  # no crawl.db to read: the counts say whether any answered
        outcome = _unstored_outcome(result) if finished else None
    else:
        outcome = crawl_outcome(out, result.batch) if finished else None
    if outcome is not None and outcome.failed:
        print(f"dustless crawl: {outcome.reason}", file=sys.stderr)
        return 1
    if args.json:
        from dustless.cli._json import crawl_summary, print_json

        summary = crawl_summary(result.batch, result.finished, result.stats, out, _db_name(out, db))
        if args.store == "none":
            summary.update(crawl_db=None, warc=None)
        print_json(summary)
    _summary(result, out, db, quiet=args.quiet or args.json, stored=args.store != "none")
    return 0 if result.finished else 130


def _db_name(out: Path, db: str | None) -> str:
    """The crawl DB as the summary names it: SQLite's path, or PostgreSQL's URL without its
    password."""
    if db is None:
        return str(out / "crawl.db")
    from dustless.store import display_dsn

    return display_dsn(db)


def _unstored_outcome(result: CrawlResult) -> CrawlOutcome | None:
    """A crawl of ``--store none`` none of whose fetches got an HTTP status: failed, as
    ``crawl_outcome`` says from the DB (the seeds are fetched first: no answer at all is
    no seed answered). ``None``: something answered."""
    from dustless.cli._outcome import CrawlOutcome
    from dustless.states import NetState, Stage

    s = result.stats
    answered = 0
    for state, n in s.states.items():
        try:
            info = NetState(state)
        except ValueError:  # a state a newer engine records
            continue
        if info.stage is Stage.DOCUMENT or info in (NetState.OK, NetState.code):
            answered += n
    ended = sum(s.states.values())  # a URL robots.txt refused is not "fetched", but ended
    if not ended or answered:
        return None
    return CrawlOutcome(ended, 0, f"no page could be fetched: {s.summary()}")


def _summary(
    result: CrawlResult, out: Path, db: str | None, *, quiet: bool, stored: bool = True
) -> None:
    """The end-of-crawl summary: on stderr unless ``quiet``, in the ``--log-file`` anyway."""
    s = result.stats
    lines = [
        f"{'finished' if result.finished else 'interrupted (continue with --resume)'}: "
        f"{plural(s.fetched, 'page')}, {plural(s.revisits, 'revisit')}, "
        f"{plural(s.discovered, 'new URL')}; "
        f"states: {s.summary()}"
    ]
    if s.sources:  # --sitemaps / --feeds: how reading each source ended
        lines.append(f"sources: {s.sources_summary()}")
    if s.soft404_probes:  # crawl/soft404.py
        lines.append(
            f"soft 404s: {plural(s.states.get('soft404', 0), 'page')}; "
            f"{plural(s.soft404_probes, 'probe request')}, "
            f"{plural(s.soft404_signatures, 'host')} answering a missing path with 200"
        )
    say(lines, quiet=quiet)
    if s.refused_hosts:
        names = ", ".join(sorted(s.refused_hosts)[:3])
        more = f" and {len(s.refused_hosts) - 3} more" if len(s.refused_hosts) > 3 else ""
        warn(
            f"refused by the address policy: {plural(len(s.refused_hosts), 'host')} "
            f"({names}{more}) "
            "on loopback/private/link-local addresses, their URLs recorded as filtered; "
            "to crawl them add --allow-private, --allow-ip CIDR or --resolve NAME:IP",
            quiet=quiet,
        )
    if not stored:
        say(["stored:   nothing (--store none)", f"seeds:    {out / 'seeds.out.txt'}"], quiet=quiet)
        return
    where = f"crawl DB: {_db_name(out, db)}"
    if db is not None:
        trips = s.db_round_trips or 0
        per = f", {trips / s.fetched:.3f} per page" if s.fetched else ""
        where += f" ({trips:,} round trips{per})"
    say([where, f"WARC:     {out / 'warc'}", f"seeds:    {out / 'seeds.out.txt'}"], quiet=quiet)

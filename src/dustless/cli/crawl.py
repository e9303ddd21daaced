"""``dustless crawl``: crawl from seeds into a directory (crawl.db + warc/), resumable."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dustless.errors import InvalidOption

HELP = "crawl from seeds into a directory (crawl.db + warc/), resumable"

_EPILOG = """examples:
  dustless crawl https://example.org/ --out crawl1
  dustless crawl --seeds seeds.txt --out crawl2 --scope domain --max-depth 3 --max-pages 10000
  dustless testweb --port 8400 &            # the synthetic test web on loopback
  dustless crawl http://site1.test:8400/ --out tw --resolve '*.test:127.0.0.1' --delay 0.05
  dustless crawl --out crawl1 --resume      # after Ctrl-C or a crash: continue where it was
  dustless crawl --seeds seeds.txt --out crawl2 --rules rules.xml   # learned rules (identities)
  dustless crawl http://www.web.com/list.aspx?cate_id=467 --out web --script web.xml

The directory holds crawl.db (SQLite), warc/*.warc.gz (WARC 1.1) and, at the end,
seeds.out.txt (every seed, the discovered ones too: the next crawl's --seeds file).
Politeness: one request at a time per host, and a host rests
max(--delay, robots.txt Crawl-delay capped at 30 s, --delay-factor x the last fetch time)
between two requests. See docs/crawling.md."""


def configure(parser: argparse.ArgumentParser) -> None:
    from dustless.crawl.config import CrawlConfig

    d = CrawlConfig()
    parser.epilog = _EPILOG
    parser.add_argument("urls", nargs="*", metavar="URL", help="seed URLs")
    parser.add_argument(
        "--seeds", metavar="FILE", help="file of seed URLs, one a line (# comments)"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="crawl directory")
    parser.add_argument(
        "--policy",
        default=d.policy,
        metavar="NAME",
        help=f"normalization policy: a URL's identity for URL-seen (default {d.policy})",
    )
    parser.add_argument(
        "--resolve",
        action="append",
        default=[],
        metavar="NAME:IP",
        help="connect to IP for host NAME (like curl; NAME may be *.test); repeatable",
    )
    parser.add_argument(
        "--scope",
        choices=("host", "domain", "any"),
        default=d.scope.value,
        help="what a party's site is: its host, its registrable domain, or no boundary "
        "(default host)",
    )
    parser.add_argument(
        "--max-depth",
        type=int,
        default=d.max_depth,
        metavar="N",
        help=f"links from a party's seed, breadth-first (default {d.max_depth})",
    )
    parser.add_argument(
        "--max-pages", type=int, metavar="N", help="URLs queued in all (default no limit)"
    )
    parser.add_argument("--max-pages-per-site", type=int, metavar="N", help="URLs queued per site")
    parser.add_argument(
        "--max-sites",
        type=int,
        metavar="N",
        help="sites crawled, the seeds' included (default no limit)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=d.concurrency,
        metavar="N",
        help=f"fetches in flight, across hosts (default {d.concurrency})",
    )
    parser.add_argument(
        "--spelling-tries",
        type=int,
        default=d.spelling_tries,
        metavar="N",
        help="spellings of one URL identity fetched at most: when the one fetched gives no "
        f"document (4xx, 5xx, no answer), the next one linked is tried (default "
        f"{d.spelling_tries}; 1: never)",
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=d.delay,
        metavar="S",
        help=f"least seconds between two requests to a host (default {d.delay})",
    )
    parser.add_argument(
        "--delay-factor",
        type=float,
        default=d.delay_factor,
        metavar="F",
        help=f"rest F x the last fetch time (default {d.delay_factor})",
    )
    parser.add_argument("--user-agent", default=d.user_agent, metavar="UA")
    parser.add_argument(
        "--allow-ip",
        action="append",
        default=[],
        metavar="CIDR",
        help="connect only to these address ranges (private ones too); repeatable",
    )
    parser.add_argument(
        "--deny-ip",
        action="append",
        default=[],
        metavar="CIDR",
        help="never connect to these addresses; repeatable",
    )
    parser.add_argument(
        "--allow-private",
        action="store_true",
        help="allow loopback, private and link-local addresses",
    )
    parser.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="FILE",
        help="learned rules or pattern script (dustless rules learn): its rules join the "
        "policy's site-rules step and merge identities; repeatable",
    )
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
        help="continue the unfinished crawl in --out with its own settings",
    )
    parser.add_argument("--quiet", action="store_true", help="no live progress, no summary")


def _seeds(args: argparse.Namespace) -> list[str]:
    from dustless.url import normalize

    raw = list(args.urls)
    if args.seeds:
        try:
            with open(args.seeds, encoding="utf-8") as f:
                raw += [
                    line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")
                ]
        except OSError as exc:
            raise InvalidOption(f"--seeds {args.seeds}: {exc.strerror}") from None
    out = []
    for url in raw:
        if not url.lower().startswith(("http://", "https://")):
            raise InvalidOption(f"seed {url!r}: only http and https URLs can be crawled")
        out.append(normalize(url, "rfc3986"))  # InvalidURL names what is wrong
    return out


def _rule_files(paths: list[str], quiet: bool) -> tuple[str, ...]:
    """Absolute paths (``--resume`` may run elsewhere), each file checked now: a broken one
    is a ``ScriptError`` naming ``FILE:LINE:``; warnings (Fig. 6's bare '&') go to stderr."""
    import os

    from dustless.rules import load_script

    for path in paths:
        loaded = load_script(path)
        if not quiet:
            for w in loaded.warnings:
                print(w, file=sys.stderr)
    return tuple(os.path.abspath(p) for p in paths)


def run(args: argparse.Namespace) -> int:
    from dustless.crawl.config import CrawlConfig
    from dustless.crawl.engine import run_crawl
    from dustless.crawl.progress import Progress
    from dustless.crawl.scope import Scope

    out = Path(args.out)
    if args.resume:
        config = CrawlConfig(progress=not args.quiet)
    else:
        seeds = _seeds(args)
        if not seeds:
            raise InvalidOption("no seeds: give URLs or --seeds FILE (or --resume)")
        config = CrawlConfig(
            seeds=tuple(seeds),
            policy=args.policy,
            resolve=tuple(args.resolve),
            scope=Scope(args.scope),
            max_depth=args.max_depth,
            max_pages=args.max_pages,
            max_pages_per_site=args.max_pages_per_site,
            max_sites=args.max_sites,
            concurrency=args.concurrency,
            spelling_tries=args.spelling_tries,
            delay=args.delay,
            delay_factor=args.delay_factor,
            user_agent=args.user_agent,
            allow_ip=tuple(args.allow_ip),
            deny_ip=tuple(args.deny_ip),
            allow_private=args.allow_private,
            rules=_rule_files(args.rules, args.quiet),
            scripts=_rule_files(args.script, args.quiet),
            progress=not args.quiet,
        )
        config.resolve_map()
    progress = Progress(enabled=config.progress)
    result = run_crawl(config, out, resume=args.resume, progress=progress)
    if not args.quiet:
        s = result.stats
        states = ", ".join(f"{k} {v}" for k, v in sorted(s.states.items())) or "none"
        print(
            f"{'finished' if result.finished else 'interrupted (continue with --resume)'}: "
            f"{s.fetched} pages, {s.revisits} revisits, {s.discovered} new URLs; states: {states}",
            file=sys.stderr,
        )
        print(f"crawl DB: {out / 'crawl.db'}", file=sys.stderr)
        print(f"WARC:     {out / 'warc'}", file=sys.stderr)
        print(f"seeds:    {out / 'seeds.out.txt'}", file=sys.stderr)
    return 0 if result.finished else 130

"""``dustless recrawl DIR``: one more batch of a crawled collection (seed 004 §4)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from dustless.cli._json import print_json, recrawl_summary
from dustless.cli._log import open_log, say
from dustless.words import plural

if TYPE_CHECKING:
    from dustless.recrawl import RecrawlPlan

HELP = "refresh a crawled collection: one more batch, full or under a budget"

_EPILOG = """\
Re-fetches the collection in DIR as a new batch, with the settings stored with the crawl
(seeds, --resolve, policy, limits; the flags below override them), following the links of
pages that changed so new pages are found too. Every fetch is kept with its batch number;
unchanged pages are told by their payload hash and, where the server gives validators, by a
conditional request (If-None-Match / If-Modified-Since -> 304, no download). Killed or
interrupted, continue with --resume. Then `dustless changes DIR` compares the batches.

--budget N fetches only the N pages a schedule says are most overdue, from their estimated
change rates (Cho & Garcia-Molina, SIGMOD 2000): uniform (every page as often), proportional
(as often as it changes) or optimal (the freshest collection; gives up on pages that change
too fast). Only documents count: a URL whose last answer was a redirect, a client error or
no HTML is left out. See docs/recrawl.md.

examples:
  dustless recrawl out/
  dustless recrawl out/ --batch-time 2026-11-23T00:00:00Z --resolve '*.test:127.0.0.1'
  dustless recrawl out/ --budget 500 --schedule optimal
  dustless recrawl out/ --resume            # after Ctrl-C or a crash
  dustless recrawl out/ --quiet --json --log-file out.log   # summary as JSON, progress logged
  dustless recrawl w1/ --db postgresql://crawler@dbhost/crawl   # a crawl shared by workers"""

# A progress line every this many seconds when stderr is not a terminal (a log file).
PROGRESS_INTERVAL = 10.0


def configure(parser: argparse.ArgumentParser) -> None:
    from dustless.cli._crawlopts import add_crawl_settings, add_progress_options
    from dustless.cli._source import add_source

    parser.epilog = _EPILOG
    add_source(
        parser,
        dir_help="a crawl directory (dustless crawl DIR); with --db, this worker's directory",
        db_help="recrawl the crawl workers share in this PostgreSQL database; this process "
        "is one worker (DIR's, or a new one), others join with dustless crawl DIR2 --db URL",
    )
    parser.add_argument(
        "--batch-time",
        metavar="ISO8601",
        help="the batch's time, e.g. 2026-11-23T00:00:00Z (default: now); after every "
        "earlier batch's",
    )
    parser.add_argument("--budget", type=int, metavar="N", help="fetch only N pages")
    parser.add_argument(
        "--schedule",
        choices=("uniform", "proportional", "optimal"),
        default="optimal",
        help="how --budget picks its pages (default optimal)",
    )
    parser.add_argument(
        "--no-conditional",
        action="store_true",
        help="no If-None-Match / If-Modified-Since: download every page",
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue the unfinished recrawl batch in DIR"
    )
    add_progress_options(parser, interval=PROGRESS_INTERVAL)
    crawl = parser.add_argument_group("crawl settings (default: those stored with the crawl)")
    add_crawl_settings(crawl, None, replaces="replaces the stored list")


def parse_batch_time(text: str) -> float:
    """ISO 8601 to seconds since the epoch; a time without a zone is UTC."""
    import datetime as dt

    from dustless.errors import InvalidOption

    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidOption(
            f"--batch-time {text!r} is not an ISO 8601 time (like 2026-11-23T00:00:00Z)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    from dustless.cli._crawlopts import given_settings

    return given_settings(args)


def _plan_summary(queued: int, schedule: str, plan: RecrawlPlan) -> str:
    """What a budgeted batch fetches, and the freshness it expects (over documents only)."""
    if plan.rates_known:
        fresh = f"expected freshness {plan.expected_freshness:.3f}"
    else:
        # With no estimated rate every page is assumed never to change: 1.000 would be a
        # figure about that assumption, not about the collection.
        fresh = "expected freshness unknown until a document has been downloaded twice"
    line = (
        f"{queued} pages chosen by the {schedule} schedule from {plan.documents:,} "
        f"documents ({fresh})"
    )
    if plan.left_out:
        line += (
            f"; {plan.left_out:,} URLs left out, their last answer being no document "
            "(a redirect, a client error, not HTML, or robots.txt's refusal)"
        )
    return line


def run(args: argparse.Namespace) -> int:
    import time

    from dustless.cli._source import crawl_source
    from dustless.crawl import run_crawl
    from dustless.crawl.config import CrawlConfig
    from dustless.crawl.progress import Progress
    from dustless.crawl.worker import WORKER_FILE
    from dustless.errors import InvalidOption
    from dustless.recrawl import open_recrawl

    source = crawl_source(args, dir_with_db=True)
    if source.directory is None:
        raise InvalidOption(
            "recrawl --db runs this machine's worker of the batch: give its directory DIR"
        )
    out = source.directory
    if args.resume and (args.budget is not None or args.batch_time is not None or _overrides(args)):
        raise InvalidOption("--resume continues the batch with its own settings: no other flags")
    log = open_log(args.log_file, args.log_level)
    queued: int | None = None  # --resume: the batch was opened before
    plan: RecrawlPlan | None = None
    if not args.resume:
        overrides = _overrides(args)
        start = open_recrawl(
            out,
            now=time.time(),
            batch_time=None if args.batch_time is None else parse_batch_time(args.batch_time),
            overrides=overrides,
            budget=args.budget,
            schedule=args.schedule,
            conditional=not args.no_conditional,
            validate=CrawlConfig.from_json,  # bad flags fail before the batch is written
            db=source.db,
        )
        queued, plan = start.queued, start.plan
        what = (
            _plan_summary(start.queued, args.schedule, start.plan)
            if start.plan is not None
            else plural(start.queued, "page")
        )
        say([f"batch {start.batch}: {what}"], quiet=args.quiet or args.json)
    config = CrawlConfig(progress=not args.quiet)
    progress = Progress(enabled=config.progress, interval=args.progress_interval, log=log)
    # A shared crawl: DIR's worker (it crawled there) resumes into the open batch; a new
    # directory is a new worker joining it.
    resume = source.db is None or (out / WORKER_FILE).is_file()
    result = run_crawl(config, out, resume=resume, progress=progress, db=source.db)
    s = result.stats
    if args.json:
        print_json(recrawl_summary(result.batch, result.finished, s, queued, plan))
    say(
        [
            f"batch {result.batch} "
            f"{'finished' if result.finished else 'interrupted (continue with --resume)'}: "
            f"{plural(s.fetched, 'page')}, {plural(s.revisits, 'unchanged payload')}, "
            f"{plural(s.discovered, 'new URL')}"
        ],
        quiet=args.quiet or args.json,
    )
    return 0 if result.finished else 130

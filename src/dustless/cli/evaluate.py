"""``dustless evaluate DIR``: redundancy and coverage loss of each normalization step (seed 000)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dustless.analysis import Evaluation
    from dustless.cli._source import CrawlSource

HELP = "redundancy and coverage loss of each normalization step"

_EPILOG = """\
For every factor of seed 000 §4 (path case, trailing slash, www, default document) and of
seed 001 (sort query, fragment, collapse slashes, tracking/session parameters), builds the
candidate sets of the crawl's URLs (URLs that differ only in that factor; singletons left
out), counts requests, downloads and unique documents (payload hash), and computes the
redundancy rate (formula 1) and coverage loss rate (formula 2) of each method, as Table 1 of
the paper, whose figures are printed beside ours ("paper R/L").

"The same document" is near-duplicate text by default (--content near: a MinHash of the
visible text, so a clock, a nonce or links naming another host do not make two pages
different); --content exact counts distinct payload SHA-1s, as the paper did.

Coverage loss is read as the crawler experiences it (--reading crawler, the default): for each
group of URLs a method merges, the first spelling the crawl met is fetched, and when it gives
no document the next ones, up to --spelling-tries in all. --fetch reads it as the paper does:
the normalized forms are requested, politely (robots.txt, the crawl's delay and --resolve
settings), recorded in the crawl DB, and measured; --reading paper without --fetch counts
the forms never requested as lost (an upper bound, marked *).

Every row exists per host too (--by-host prints them; --json always has them, with a "host"
field): servers differ (000 §4.1). --max-loss picks, overall and for each host, the methods
that remove the most duplicate downloads while each loses at most that share of documents;
--rules-out FILE writes the per-host choices as site rules for `dustless crawl --rules FILE`.

--truth FILE (the test web's url<TAB>status<TAB>resource-id) makes the truth the judge: the
rows, the loss and the recommendation come from its resources (404s, errors and redirects
are none), its wrong merges and wrong splits are shown, and rows where the content estimate
differs from the truth by more than 0.05 are listed.

Progress (the rows read, the factors compared) goes to stderr: a live line on a terminal,
a line every 10 seconds elsewhere; --quiet prints none.

examples:
  dustless evaluate out/
  dustless evaluate out/ --max-loss 0.02 --json
  dustless evaluate out/ --fetch --quiet --json     # no progress, nothing on stderr
  dustless evaluate out/ --fetch --resolve '*.test:127.0.0.1'
  dustless evaluate out/ --truth truth.tsv --default-documents index.html,index.php
  dustless evaluate out/ --by-host --max-loss 0.01 --rules-out site-policy.xml
  dustless evaluate --db postgresql://crawler@dbhost/crawl     # a crawl shared by workers
  dustless crawl --seeds seeds.txt --out out2 --policy standard --rules site-policy.xml"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    from dustless.cli._source import add_source

    add_source(
        parser,
        dir_help="a crawl directory (dustless crawl --out); with --db and --fetch, where the "
        "probe's WARC files go",
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--by-host", action="store_true", help="also print every host's rows")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="nothing on stderr but errors (no progress, no 'fetched'/'wrote' lines)",
    )
    parser.add_argument(
        "--rules-out",
        metavar="FILE",
        help="write the per-host recommendation as site rules (for dustless crawl --rules)",
    )
    add_evaluation_options(parser)
    parser.add_argument(
        "--no-follow-redirects",
        action="store_true",
        help="count a redirect as a failed download, not as its target's document",
    )
    g = parser.add_argument_group("measuring with --fetch")
    g.add_argument(
        "--fetch", action="store_true", help="request the normalized forms the crawl never fetched"
    )
    g.add_argument(
        "--fetch-limit",
        type=int,
        default=10_000,
        metavar="N",
        help="request at most N forms (default: 10000)",
    )
    g.add_argument(
        "--resolve",
        action="append",
        default=[],
        metavar="NAME:IP",
        help="like crawl --resolve (added to the crawl's own)",
    )
    g.add_argument(
        "--delay", type=float, metavar="S", help="seconds between two requests to a host"
    )
    g.add_argument("--allow-private", action="store_true", default=None, help="like crawl")
    g.add_argument("--user-agent", metavar="UA", help="default: the crawl's")


def add_evaluation_options(parser: argparse.ArgumentParser) -> None:
    """The options of the evaluation that ``evaluate`` and ``report`` share."""
    from dustless.analysis import PAPER_DEFAULT_DOCUMENTS

    parser.add_argument(
        "--max-loss",
        type=float,
        default=0.01,
        metavar="RATE",
        help="coverage-loss budget per method for the recommended policy (default: 0.01)",
    )
    parser.add_argument("--truth", metavar="FILE", help="truth TSV: url<TAB>status<TAB>resource-id")
    parser.add_argument(
        "--default-documents",
        metavar="NAMES",
        default=",".join(PAPER_DEFAULT_DOCUMENTS),
        help="comma-separated default documents (default: the paper's three, 000 §4.4)",
    )
    parser.add_argument("--batch", type=int, metavar="N", help="only this crawl batch")
    parser.add_argument(
        "--content",
        choices=("near", "exact"),
        default="near",
        help="the same document: near-duplicate text (default) or the same payload SHA-1",
    )
    parser.add_argument(
        "--reading",
        choices=("crawler", "paper"),
        help="coverage loss as the crawler fetches (default) or as the paper reads it "
        "(normalized forms requested; the default with --fetch)",
    )
    parser.add_argument(
        "--spelling-tries",
        type=int,
        default=3,
        metavar="N",
        help="spellings of one merged group the crawler tries (default: 3, as crawl's)",
    )


def evaluation_inputs(
    args: argparse.Namespace,
) -> tuple[tuple[str, ...], dict[str, str | None] | None]:
    """The checked default documents and the truth (when ``--truth``) of those options."""
    from dustless.errors import InvalidOption

    if not 0.0 <= args.max_loss <= 1.0:
        raise InvalidOption(f"--max-loss must be within 0..1, not {args.max_loss}")
    if args.spelling_tries < 1:
        raise InvalidOption(f"--spelling-tries must be >= 1, not {args.spelling_tries}")
    docs = tuple(d.strip() for d in args.default_documents.split(",") if d.strip())
    if any("/" in d for d in docs):
        raise InvalidOption("--default-documents takes file names, not paths")
    return docs, read_truth(args.truth) if args.truth else None


def read_truth(path: str) -> dict[str, str | None]:
    """The truth TSV as ``url -> resource``; an unreadable or non-UTF-8 file is one line,
    ``error: FILE:LINE: …`` (the CLI's one decoder, ``cli/_input.py``)."""
    from dustless.analysis import parse_truth
    from dustless.cli._input import text_lines

    return parse_truth(text_lines(path))


def run(args: argparse.Namespace) -> int:
    from dustless.analysis import evaluate_crawl, format_evaluation
    from dustless.cli._progress import StepProgress, counting_reader
    from dustless.cli._source import crawl_source, open_source
    from dustless.errors import InvalidOption

    source = crawl_source(args, dir_with_db=args.fetch)
    if args.fetch and source.directory is None:
        raise InvalidOption(
            "evaluate --fetch --db writes the probe's WARC files to a directory of this "
            "machine: give it as DIR"
        )
    docs, truth = evaluation_inputs(args)
    if args.fetch_limit < 0:
        raise InvalidOption(f"--fetch-limit must be >= 0, not {args.fetch_limit}")
    follow = not args.no_follow_redirects
    if args.fetch:
        _probe(args, source, docs, follow=follow)

    with open_source(source) as raw, StepProgress("evaluate", quiet=args.quiet) as progress:
        db = counting_reader(raw, progress)
        ev = evaluate_crawl(
            db,
            max_loss=args.max_loss,
            default_documents=docs,
            truth=truth,
            truth_file=args.truth,
            batch=args.batch,
            follow_redirects=follow,
            content=args.content,
            reading=reading_of(args),
            tries=args.spelling_tries,
            progress=progress.add,
        )
    wrote = ""
    if args.rules_out:
        from dustless.analysis import write_site_policy

        n = write_site_policy(ev, args.rules_out)
        wrote = f"wrote {args.rules_out}: site rules for {n} hosts"
    if args.json:
        data = _evaluation_json(ev)
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_evaluation(ev, by_host=args.by_host))
    if wrote and not args.quiet:
        print(wrote, file=sys.stderr)
    return 0


def _probe(
    args: argparse.Namespace, source: CrawlSource, docs: tuple[str, ...], *, follow: bool
) -> None:
    """``--fetch``: fetch the normalized forms the crawl never fetched (the paper's reading)."""
    from dustless.analysis import build_factors, load_observations, unfetched_forms
    from dustless.cli._source import open_source
    from dustless.crawl.probe import run_probe
    from dustless.crawl.progress import Progress

    with open_source(source) as db:
        obs = load_observations(db, batch=args.batch, follow_redirects=follow)
        forms = unfetched_forms(obs, build_factors(docs))
    del obs
    # The crawl's engine in its probe mode: politeness, robots.txt, progress (a long
    # probe run on a terminal shows what it does; elsewhere a line every 10 s).
    assert source.directory is not None
    result = run_probe(
        source.directory,
        forms,
        db=source.db,
        limit=args.fetch_limit,
        overrides={
            "resolve": tuple(args.resolve) or None,
            "delay": args.delay,
            "allow_private": args.allow_private or None,
            "user_agent": args.user_agent,
        },
        progress=Progress(enabled=not (args.json or args.quiet), interval=10.0),
    )
    states = ", ".join(f"{s} {n}" for s, n in result.states) or "none"
    if not args.quiet:
        print(
            f"fetched {result.requested} normalized forms ({states})"
            + (f"; {result.skipped} over --fetch-limit" if result.skipped else ""),
            file=sys.stderr,
        )


def _evaluation_json(ev: Evaluation) -> dict[str, Any]:
    """``--json``'s document: the rows, the recommendation and every detail."""
    from dustless.analysis import to_jsonable

    return {
        "rows": to_jsonable(ev.rows),
        "recommended_policy": ev.recommendation.policy,
        "recommendation": to_jsonable(ev.recommendation),
        "details": to_jsonable(ev.details),
        "host_rows": to_jsonable(ev.host_rows),
        "host_details": to_jsonable(ev.host_details),
        "site_policy": to_jsonable(ev.site_policy),
        "disagreements": to_jsonable(ev.disagreements),
        # Each method against the pages' rel=canonical declarations (RFC 6596).
        "canonical": [{**to_jsonable(r), "agreement": r.agreement} for r in ev.canonical],
        "evaluation": {
            k: v
            for k, v in to_jsonable(ev).items()
            if k
            not in (
                "rows",
                "details",
                "recommendation",
                "host_rows",
                "host_details",
                "site_policy",
                "disagreements",
                "canonical",
            )
        },
    }


def reading_of(args: argparse.Namespace) -> str:
    """``--reading``, or its default: the paper's with ``--fetch``, the crawler's without."""
    if args.reading:
        return str(args.reading)
    return "paper" if getattr(args, "fetch", False) else "crawler"

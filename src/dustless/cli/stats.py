"""``dustless stats DIR``: the crawl statistics of seed 004 §3 (Tables 1–6, Fig. 4, Table 13)."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "crawl statistics (seed 004 §3)"

_EPILOG = """\
Prints, for the crawl in DIR: responses by network state for seed documents and for all
documents (seed 004 Tables 1-2; the state code, any response other than 200 text/html, by
HTTP status: a 3xx redirect is an answer, a 4xx or 5xx an error), URL string lengths
(Table 3), seed URL forms (Table 4), document sizes in 256 KiB buckets and their mean
(Table 5), storage compressed vs uncompressed per WARC file (Fig. 4), requested /
downloaded documents and internal links by depth (Table 6), documents by link kind h/a/f
(Table 13), pages/s and the top hosts.
Each URL's last fetch in a batch is counted; `evaluate --fetch` probes are left out.
The DB is opened read-only: it is safe on a crawl that is still running.
Progress (the queries run, the rows read) goes to stderr: a live line on a terminal, a line
every 10 seconds elsewhere; --quiet prints none.

examples:
  dustless stats out/
  dustless stats out/ --json | jq '.document_states'
  dustless stats out/ --batch 2 --top-hosts 50
  dustless stats out/ --quiet > stats.txt          # nothing on stderr but errors
  dustless stats --db postgresql://crawler@dbhost/crawl   # a crawl shared by workers"""


def configure(parser: argparse.ArgumentParser) -> None:
    from dustless.cli._source import add_source

    parser.epilog = _EPILOG
    add_source(parser)
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")
    parser.add_argument("--batch", type=int, metavar="N", help="only this batch (default: all)")
    parser.add_argument(
        "--top-hosts", type=int, default=20, metavar="N", help="hosts listed (default: 20)"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="nothing on stderr but errors (no progress)"
    )
    parser.add_argument(
        "--content",
        choices=("near", "exact"),
        default="near",
        help="distinct documents by near-duplicate text (default) or by payload SHA-1",
    )


def run(args: argparse.Namespace) -> int:
    from dustless.analysis import crawl_stats, format_stats, to_jsonable
    from dustless.cli._progress import StepProgress, counting_reader
    from dustless.cli._source import crawl_source, open_source
    from dustless.errors import InvalidOption

    source = crawl_source(args)
    if args.top_hosts < 0:
        raise InvalidOption(f"--top-hosts must be >= 0, not {args.top_hosts}")
    with open_source(source) as raw, StepProgress("stats", quiet=args.quiet) as progress:
        db = counting_reader(raw, progress)
        stats = crawl_stats(db, batch=args.batch, top_hosts=args.top_hosts, content=args.content)
    if args.json:
        json.dump(to_jsonable(stats), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_stats(stats))
    return 0

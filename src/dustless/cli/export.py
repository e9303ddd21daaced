"""``dustless export``: a crawl's documents as files with crawl-info XML (seeds 002, 004)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from dustless.cli._json import print_json
from dustless.words import plural

if TYPE_CHECKING:
    from dustless.cli._progress import StepProgress
    from dustless.cli._source import CrawlSource

HELP = "export crawled documents as files with crawl-info XML, or the crawl as one WACZ"

_EPILOG = """\
--format files writes every document of the crawl (one per URL: its last 2xx fetch) as a
gzip file, named by numbers only (seed 004 §2), 10,000 per subdirectory of a seed directory,
with one crawl-info XML beside it (seed 002 Fig. 11: url, file, site, domain, category,
date; plus type, and page with a pattern script):

  OUT/00001/0000/00000000.html.gz   the document (payload as fetched, decoded)
  OUT/00001/0000/00000000.xml       <doc type="struct"><source><url>…</url><file>…</file>…

Payloads come from the WARC records the crawl DB points to. OUT must not exist or be empty.
A crawl made with `crawl --script` stored each URL's page type and category: they are
used without --script here (domain the pattern's class, e.g. 인물, category the category
id, page list/detail/other, categoryName the name the crawl read). With --script
(repeatable), site is the script's site title, and URLs the crawl did not label get the
script's labels (seed 002 §3.2).

--format wacz writes the crawl as one WACZ 1.1.1 file (a ZIP web archivists replay in
pywb or ReplayWeb.page): its WARC files under archive/, the CDXJ index of their response
and revisit records as indexes/index.cdx (index.cdx.gz + index.idx when large), every
2xx HTML page in pages/pages.jsonl, and datapackage.json with the sha256 of each file
(docs/archives.md). OUT must not exist; -o - writes the WACZ to standard output (the
summary then goes to stderr, --json's too).

--json prints the summary as one JSON document, keys in docs/archives.md; --quiet none.
On a terminal a live line shows the rows read and the documents (or pages) written; off a
terminal (a log, a pipe) a line on stderr every 10 seconds; --quiet prints none.

examples:
  dustless export crawl1 --format wacz -o crawl1.wacz
  dustless export crawl1 --format wacz -o - | ssh archive 'cat > crawl1.wacz'
  dustless export crawl1 --format files -o crawl1-files
  dustless export crawl1 --format wacz -o c.wacz --json | jq .pages
  dustless export crawl1 --format files -o out --script web.xml
  dustless export --db postgresql://crawler@dbhost/crawl --format wacz -o crawl.wacz

With --db (a crawl shared by workers), each worker's WARC files are read from its directory:
the path it crawled in, or the one --worker-dir NAME=DIR gives (its copy on this machine)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    from dustless.cli._source import add_source

    add_source(
        parser, dest="crawl_dir", dir_help="crawl directory (crawl.db + warc/)", worker_dirs=True
    )
    parser.add_argument(
        "--format",
        choices=["files", "wacz"],
        default="files",
        help="output format (default files)",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="directory (files) or file (wacz; - for standard output)",
    )
    parser.add_argument(
        "--script",
        action="append",
        default=[],
        metavar="FILE",
        help="pattern script naming sites, categories and page types; repeatable",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the summary as one JSON document (on stderr when -o - is standard output)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no summary, no progress (errors still printed)"
    )


def run(args: argparse.Namespace) -> int:
    from dustless.cli._progress import StepProgress
    from dustless.cli._source import crawl_source
    from dustless.errors import InvalidOption

    source = crawl_source(args, dest="crawl_dir")
    to_stdout = args.output == "-"
    # With the archive on stdout, the summary must not be mixed into it.
    say = sys.stderr if to_stdout else sys.stdout
    # Progress on stderr, unless --quiet or --json's document goes there (-o -): a line
    # in the middle would make it unreadable to jq.
    progress = StepProgress("export", quiet=args.quiet or (args.json and to_stdout))
    if args.format == "wacz":
        return _wacz(args, source, progress, say, to_stdout=to_stdout)
    if to_stdout:
        raise InvalidOption(
            "--format files writes a directory: -o - (standard output) is for --format wacz"
        )
    from dustless.export import export_files
    from dustless.rules import RuleSet, load_script

    rules = None
    if args.script:
        rules = RuleSet()
        for path in args.script:
            rules = rules + load_script(path).rules
    with progress:
        summary = export_files(
            source.directory,
            Path(args.output),
            rules,
            db=source.db,
            dirs=source.worker_dirs,
            progress=progress.add,
        )
    if args.json:
        data = {
            "format": "files",
            "output": args.output,
            "documents": summary.documents,
            "payload_bytes": summary.payload_bytes,
            "seed_dirs": summary.seed_dirs,
            "missing": summary.missing,
        }
        print_json(data)
        return 0
    if args.quiet:
        return 0
    print(
        f"exported {plural(summary.documents, 'document')} "
        f"({plural(summary.payload_bytes, 'byte')}) "
        f"in {plural(summary.seed_dirs, 'seed directory', 'seed directories')} to {args.output}"
        + (
            f"; {plural(summary.missing, 'unreadable WARC record')} skipped"
            if summary.missing
            else ""
        )
    )
    return 0


def _wacz(
    args: argparse.Namespace,
    source: CrawlSource,
    progress: StepProgress,
    say: TextIO,
    *,
    to_stdout: bool,
) -> int:
    """``--format wacz``: one WACZ file (or a stream on standard output)."""
    from dustless.errors import InvalidOption
    from dustless.export import export_wacz

    if args.script:
        raise InvalidOption("--script applies to --format files only")
    if to_stdout and sys.stdout.isatty():
        # As gzip does: a ZIP on a terminal is noise, and likely a forgotten redirection.
        raise InvalidOption("standard output is a terminal: redirect it (> crawl.wacz)")
    out = sys.stdout.buffer if to_stdout else Path(args.output)
    with progress:
        w = export_wacz(
            source.directory, out, db=source.db, dirs=source.worker_dirs, progress=progress.add
        )
    if args.json:
        data = {
            "format": "wacz",
            "output": None if w.path is None else str(w.path),
            "warcs": w.warcs,
            "index_lines": w.index_lines,
            "pages": w.pages,
            "bytes": w.bytes,
        }
        print_json(data, say)
    elif not args.quiet:
        print(
            f"wrote {w.path or 'the WACZ to standard output'}: "
            f"{plural(w.warcs, 'WARC file')}, {plural(w.index_lines, 'index line')}, "
            f"{plural(w.pages, 'page')}, {plural(w.bytes, 'byte')}",
            file=say,
        )
    return 0

"""``dustless rules``: learn URL rules from a crawl (DustBuster), show a rules file.

``learn`` reads a crawl directory's fetches (``dustless.analysis.read_observations``), runs the
pure learner (``learn_rules``) and writes the accepted rules in the pattern-script format
(``dump_script``), so ``--script``/the ``site-rules`` step reads them like a hand-written
script. ``show`` prints a hand-written script or a learned file readably (``render``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dustless.cli._json import print_json
from dustless.errors import InvalidOption

if TYPE_CHECKING:
    from dustless.rules import SiteScript

HELP = "learn and show URL rules (pattern scripts, DustBuster)"

_LEARN_EPILOG = """\
Mines the crawl's URLs and contents for DUST (different URLs, same text; by default "the
same" is near-duplicate visible text, --content exact asks for the same payload bytes):
server redirects (/dir -> /dir/, a host -> its www twin), www aliases, parameters that never
change the page (dropped) or whose value never matters (fixed), and DustBuster substring
substitutions (/index.html -> /). Content-learned rules are kept only with at least
--min-support equal-content URL pairs and a measured false-positive rate (pairs merged whose
payloads differ / pairs merged, both fetched) of at most --max-fp.

examples:
  dustless crawl crawl1 --seeds seeds.txt --policy standard
  dustless rules learn crawl1 -o rules.xml
  dustless rules learn crawl1 -o rules.xml --max-fp 0.005 --min-support 3 --verbose
  dustless rules learn --db postgresql://crawler@dbhost/crawl -o rules.xml   # shared crawl
  dustless crawl crawl2 --seeds seeds.txt --rules rules.xml   # crawl with them

See docs/pattern-scripts.md ("Learning rules from a crawl")."""

_SHOW_EPILOG = """\
Prints every site with its patterns and rules, each rule's support and measured fp;
a file that does not validate is reported as FILE:LINE: what was expected (exit 2).
Given a crawl directory, prints the rules `crawl --learn` learned there: per host, each with
its evidence, when it was learned and how many URLs it merged, the retracted ones with why;
the rules in force are in DIR/learned-rules.xml, for `crawl --rules`.

examples:
  dustless rules show rules.xml
  dustless rules show web.xml            # a hand-written pattern script (seed 002 Fig. 6)
  dustless rules show crawl1             # what `dustless crawl crawl1 … --learn` learned
  dustless rules show crawl1 --json | jq '.rules[] | select(.active) | .rule'

See docs/pattern-scripts.md."""

_EPILOG = """\
learn: learn URL rules from a crawl (dustless rules learn --help)
show:  print a pattern script or learned rules file (dustless rules show --help)

examples:
  dustless rules learn crawl1 -o rules.xml
  dustless rules show rules.xml"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    learn = sub.add_parser(
        "learn",
        help="learn rules from a crawl directory",
        description="Learn per-host URL rules from a crawl (DustBuster + redirects).",
        epilog=_LEARN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from dustless.cli._source import add_source

    add_source(learn, dest="crawl_dir", dir_help="crawl directory (crawl.db + warc/)")
    learn.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="rules file to write (- = stdout)"
    )
    learn.add_argument(
        "--max-fp",
        type=float,
        default=0.01,
        metavar="RATE",
        help="highest measured false-positive rate a rule may have (default 0.01)",
    )
    learn.add_argument(
        "--min-support",
        type=int,
        default=2,
        metavar="N",
        help="fewest equal-content URL pairs a content-learned rule needs (default 2)",
    )
    learn.add_argument(
        "--no-redirects",
        dest="redirects",
        action="store_false",
        help="do not learn the rules servers state by redirecting (/dir -> /dir/, host -> www)",
    )
    learn.add_argument(
        "--content",
        choices=("near", "exact"),
        default="near",
        help="equal content: near-duplicate text (default) or the same payload SHA-1",
    )
    learn.add_argument(
        "--verbose", "-v", action="store_true", help="also list the rejected candidates"
    )
    show = sub.add_parser(
        "show",
        help="print a pattern script or learned rules file readably",
        description="Print a pattern script or a learned rules file, with support and fp.",
        epilog=_SHOW_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument(
        "file", metavar="FILE", help="pattern script or rules file (XML), or a crawl directory"
    )
    show.add_argument(
        "--json",
        action="store_true",
        help="print the sites and rules as one JSON document (keys in docs/pattern-scripts.md)",
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "show":
        return _show(Path(args.file), as_json=args.json)
    return _learn(args)


def _show(path: Path, *, as_json: bool) -> int:
    from dustless.rules import load_script, render

    if path.is_dir():
        return _show_crawl(path, as_json=as_json)
    loaded = load_script(path)
    for w in loaded.warnings:
        print(f"dustless rules show: {w}", file=sys.stderr)  # "FILE:LINE: warning: …"
    if as_json:
        print_json(
            {
                "file": str(path),
                "sites": [_site_json(site) for site in loaded.rules.sites],
                "warnings": [str(w) for w in loaded.warnings],
            }
        )
        return 0
    sys.stdout.write(render(loaded.rules))
    return 0


def _site_json(site: SiteScript) -> dict[str, Any]:
    return {
        "title": site.title,
        "identities": list(site.identities),
        "scripted": site.scripted,
        "sitemaps": site.sitemaps,
        "feeds": site.feeds,
        "patterns": [
            {
                "page_type": p.page_type.value,
                "category": p.category or None,
                "category_key": p.category_key,
                "original_type": p.original_type.value,
                "original": p.original,
                "target": p.target,
            }
            for p in site.patterns
        ],
        "rules": [
            {
                "element": r.element,
                "rule": r.describe(),
                "support": r.support,
                "fp_rate": r.fp_rate,
            }
            for r in site.rules
        ],
    }


def _show_crawl(directory: Path, *, as_json: bool) -> int:
    """The rules a crawl learned (``crawl --learn``), from its DB."""
    from dustless.analysis import learned_rules, to_jsonable
    from dustless.crawl.learn import LEARNED_RULES
    from dustless.store import open_crawl

    with open_crawl(directory) as db:
        rows = learned_rules(db)
    if as_json:
        print_json(
            {
                "directory": str(directory),
                "rules_file": str(directory / LEARNED_RULES),
                "active": sum(1 for r in rows if r.active),
                "retracted": sum(1 for r in rows if not r.active),
                "hosts": len({r.host for r in rows}),
                "rules": [{**to_jsonable(r), "active": r.active} for r in rows],
            }
        )
        return 0
    if not rows:
        print(f"{directory}: no rules learned (crawl with --learn to learn them)")
        return 0
    by_host: dict[str, list[str]] = {}
    for r in rows:
        when = f"learned at {r.learned_after:.1f} s (page {r.learned_fetches:,})"
        line = (
            f"    {r.rule}  support {r.support}  fp {100 * r.fp_rate:.2f}%  {when}; "
            f"{r.evidence}; {r.merged:,} URL{'' if r.merged == 1 else 's'} merged, "
            f"{r.checked:,} fetched to check it"
        )
        if not r.active:
            line += f"\n      RETRACTED at {r.retracted_after or 0:.1f} s: {r.reason}"
        by_host.setdefault(r.host, []).append(line)
    active = sum(1 for r in rows if r.active)
    print(
        f"{directory}: {active} rules in force, {len(rows) - active} retracted, "
        f"on {len(by_host)} hosts"
    )
    for host, lines in by_host.items():
        print(f"  {host}")
        print("\n".join(lines))
    print(f"rules in force: {directory / LEARNED_RULES} (dustless crawl … --rules FILE)")
    return 0


def _learn(args: argparse.Namespace) -> int:
    from dustless.analysis import read_observations
    from dustless.cli._source import crawl_source
    from dustless.rules import LearnOptions, dump_script, learn_rules

    source = crawl_source(args, dest="crawl_dir")
    options = LearnOptions(
        max_fp=args.max_fp, min_support=args.min_support, redirects=args.redirects
    )
    result = learn_rules(read_observations(source.directory, args.content, db=source.db), options)
    text = dump_script(result.rules)
    if args.output == "-":
        sys.stdout.write(text)
        out = sys.stderr
    else:
        _write(Path(args.output), text)
        out = sys.stdout
    accepted = result.accepted
    kinds: dict[str, int] = {}
    for f in accepted:
        kinds[f.rule.element] = kinds.get(f.rule.element, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
    print(
        f"{result.observations} fetches, {result.documents} documents on {result.hosts} hosts: "
        f"{len(accepted)} rules for {len(result.rules.sites)} hosts ({summary}); "
        f"{len(result.rejected)} candidates rejected",
        file=out,
    )
    overall = result.overall
    if overall.pairs:
        print(
            f"together they merge {overall.pairs} pairs of fetched documents, "
            f"{overall.differ} with different content (fp {overall.differ / overall.pairs:.2%})",
            file=out,
        )
    if args.output != "-":
        print(f"wrote {args.output}", file=out)
    if args.verbose:
        for f in result.rejected:
            print(f"  rejected {f.host}: {f.rule.describe()} — {f.reason}", file=out)
    return 0


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise InvalidOption(f"cannot write {path}: {exc.strerror or exc}") from None

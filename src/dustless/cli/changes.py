"""``dustless changes DIR``: the change statistics of a recrawled collection (seed 004 §4)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dustless.words import plural

if TYPE_CHECKING:
    from dustless.analysis import ChangeGroup, ChangeReport, LastmodAgreement
    from dustless.report import Section
    from dustless.store import CrawlReader

HELP = "change statistics of a recrawled collection (seed 004 §4)"

_EPILOG = """\
Compares the batches of a crawl directory (the first crawl and each `dustless recrawl`) the
way seed 004 §4 did: the batch summary (Table 7), seeds by number of successful downloads
(Table 8) with SS and FF (formulas 1 and 2), change behaviour of seeds by domain suffix
(Tables 9-10), documents by download count (Table 11), by depth (Table 12) and by link kind
000 00f 0a0 h00 h0f ha0 haf (Table 13). A change is two consecutive downloads with different
content; the change interval is the observed period / number of changes, in days. Each page
gets a naive change rate (changes / period) and Cho & Garcia-Molina's bias-corrected one
(TOIT 2003); pages with fewer than two downloads get a rate predicted from their domain,
depth and link kind. The DB is opened read-only.

examples:
  dustless changes out/
  dustless changes out/ --json | jq '.ss, .ff'
  dustless changes out/ --pages 50"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _EPILOG
    from dustless.cli._source import add_source

    add_source(parser)
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")
    parser.add_argument(
        "--pages",
        type=int,
        default=20,
        metavar="N",
        help="pages listed with their rates, fastest first (default: 20; JSON lists all)",
    )


def _group(g: ChangeGroup[Any]) -> dict[str, Any]:
    return {
        "key": g.key,
        "pages": g.pages,
        "observed": g.observed,
        "observed_ratio": g.observed_ratio,
        "unchanged": g.unchanged,
        "unchanged_ratio": g.unchanged_ratio,
        "changed": g.changed,
        "changed_ratio": g.changed_ratio,
        "change_interval_days": g.change_interval_days,
    }


def report_json(rep: ChangeReport) -> dict[str, Any]:
    """The ``--json`` document: the documented keys first (docs/recrawl.md), then the rest."""
    from dustless.analysis import to_jsonable

    return {
        "batches": to_jsonable(rep.batches),
        "ss": rep.ss,
        "ff": rep.ff,
        "by_domain": [_group(g) for g in rep.by_domain],
        "by_depth": [_group(g) for g in rep.by_depth],
        "by_link_kind": [_group(g) for g in rep.by_link_kind],
        "documents_by_downloads": [
            {"downloads": n, "documents": c, "share": share}
            for n, c, share in rep.documents_by_downloads
        ],
        "directory": rep.directory,
        "seeds": rep.seeds,
        "seeds_by_downloads": [{"downloads": n, "seeds": c} for n, c in rep.seeds_by_downloads],
        "by_domain_kr": [_group(g) for g in rep.by_domain_kr],
        "documents": rep.documents,
        "documents_not_downloaded": rep.documents_not_downloaded,
        "changed_pages": rep.changed_pages,
        "change_interval_days": rep.change_interval_days,
        "prediction": to_jsonable(rep.prediction),
        "lastmod": _lastmod_json(rep),
        "pages": to_jsonable(rep.pages),
    }


def _lastmod_json(rep: ChangeReport) -> dict[str, Any] | None:
    a = rep.lastmod
    if a is None:
        return None
    return {
        "pairs": a.pairs,
        "pages": a.pages,
        "moved_changed": a.moved_changed,
        "moved_unchanged": a.moved_unchanged,
        "still_changed": a.still_changed,
        "still_unchanged": a.still_unchanged,
        "agreement": a.agreement,
        "precision": a.precision,
        "recall": a.recall,
    }


def _f(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    line = "  ".join(
        h.ljust(w) if i == 0 else h.rjust(w)
        for i, (h, w) in enumerate(zip(headers, widths, strict=True))
    )
    out = [title, line, "-" * len(line)]
    for r in rows:
        out.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    return [*out, ""]


def _group_rows(groups: Sequence[ChangeGroup[Any]]) -> list[list[str]]:
    return [
        [
            str(g.key),
            f"{g.pages:,}",
            f"{g.observed:,}",
            _pct(g.observed_ratio),
            f"{g.unchanged:,}",
            _pct(g.unchanged_ratio),
            f"{g.changed:,}",
            _pct(g.changed_ratio),
            _f(g.change_interval_days),
        ]
        for g in groups
    ]


def format_report(rep: ChangeReport, pages: int = 20) -> str:
    import datetime as dt

    lines = [
        f"changes in {rep.directory}: {plural(len(rep.batches), 'batch', 'batches')}, "
        f"{plural(rep.seeds, 'seed')}, {plural(rep.documents, 'document')}",
        "",
    ]
    lines += _table(
        "Batches (seed 004 Table 7)",
        ("batch", "time", "seeds req.", "seeds dl.", "docs req.", "docs dl."),
        [
            [
                str(b.batch),
                dt.datetime.fromtimestamp(b.batch_time, dt.UTC).strftime("%Y-%m-%d %H:%M"),
                f"{b.seeds_requested:,}",
                f"{b.seeds_downloaded:,}",
                f"{b.documents_requested:,}",
                f"{b.documents_downloaded:,}",
            ]
            for b in rep.batches
        ],
    )
    lines += _table(
        "Seeds by successful downloads (Table 8)",
        ("downloads", "seeds"),
        [[f"{n:,}", f"{c:,}"] for n, c in rep.seeds_by_downloads],
    )
    lines += [
        f"SS (formula 1) = {_f(rep.ss, 4)}   FF (formula 2) = {_f(rep.ff, 4)}",
        "",
    ]
    heads = ("key", "pages", "observed", "%", "unchanged", "%", "changed", "%", "interval d")
    lines += _table("Seeds by domain suffix (Table 9)", heads, _group_rows(rep.by_domain))
    lines += _table("Seeds by two-label suffix (Table 10)", heads, _group_rows(rep.by_domain_kr))
    lines += _table(
        "Documents by successful downloads (Table 11)",
        ("downloads", "documents", "share"),
        [[f"{n:,}", f"{c:,}", _pct(s)] for n, c, s in rep.documents_by_downloads],
    )
    lines += _table("Documents by depth (Table 12)", heads, _group_rows(rep.by_depth))
    lines += _table("Documents by link kind (Table 13)", heads, _group_rows(rep.by_link_kind))
    lines.append(
        f"{plural(rep.changed_pages, 'document')} changed; mean change interval "
        f"{_f(rep.change_interval_days)} days"
        if rep.changed_pages
        else "no document changed between two of its downloads"
    )
    if rep.prediction is not None:
        p = rep.prediction
        lines.append(
            f"rate prediction from domain/depth/link kind on "
            f"{plural(p.pages, 'held-out page')}: "
            f"MAE {p.mean_absolute_error:.4f}/day (predicting the mean: "
            f"{p.baseline_mean_absolute_error:.4f}/day)"
        )
    lines.append("")
    if rep.lastmod is not None:
        lines += _lastmod_lines(rep.lastmod)
    lines += _rate_lines(rep, pages)
    return "\n".join(lines)


def _lastmod_lines(a: LastmodAgreement) -> list[str]:
    """The sitemaps' lastmod against the changes seen: a table and a sentence."""
    lines = _table(
        f"Sitemap lastmod against the changes seen "
        f"({plural(a.pairs, 'pair of downloads', 'pairs of downloads')}, "
        f"{plural(a.pages, 'page')})",
        ("lastmod", "changed", "unchanged"),
        [
            ["moved", f"{a.moved_changed:,}", f"{a.moved_unchanged:,}"],
            ["did not move", f"{a.still_changed:,}", f"{a.still_unchanged:,}"],
        ],
    )
    agreement = "-" if a.agreement is None else _pct(a.agreement)
    precision = "-" if a.precision is None else _pct(a.precision)
    recall = "-" if a.recall is None else _pct(a.recall)
    lines += [
        f"lastmod agreed with the content {agreement} of the time; when it moved the "
        f"page had changed {precision}; it announced {recall} of the changes",
        "",
    ]
    return lines


def _rate_lines(rep: ChangeReport, pages: int) -> list[str]:
    """The ``pages`` pages changing the fastest, with their estimated rates."""
    ranked = sorted(
        (r for r in rep.pages if r.poisson_rate is not None),
        key=lambda r: (-(r.poisson_rate or 0.0), r.url),
    )[: max(pages, 0)]
    if not ranked:
        return []
    return _table(
        "Estimated change rates per day (naive; Cho & Garcia-Molina bias-corrected)",
        ("url", "downloads", "changes", "interval d", "naive", "corrected"),
        [
            [
                r.url,
                f"{r.downloads:,}",
                f"{r.changes:,}",
                _f(r.change_interval_days),
                _f(r.naive_rate, 3),
                _f(r.poisson_rate, 3),
            ]
            for r in ranked
        ],
    )


def report_sections(db: CrawlReader) -> list[Section]:
    """The change charts of ``dustless report`` (its ``SECTION_PROVIDERS`` hook)."""
    from dustless.analysis import crawl_change_report
    from dustless.report import change_sections

    return change_sections(crawl_change_report(db))


def run(args: argparse.Namespace) -> int:
    from dustless.analysis import crawl_change_report
    from dustless.cli._source import crawl_source, open_source
    from dustless.errors import InvalidOption

    source = crawl_source(args)
    if args.pages < 0:
        raise InvalidOption(f"--pages must be >= 0, not {args.pages}")
    with open_source(source) as db:
        rep = crawl_change_report(db)
    if args.json:
        json.dump(report_json(rep), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(rep, args.pages))
    return 0

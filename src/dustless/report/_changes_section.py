"""The report's change section: seed 004 §4 (Tables 7–13) as tables and charts.

Pure: a :class:`~dustless.analysis._changes_db.ChangeReport` in, sections out. ``dustless
report`` gets it through ``SECTION_PROVIDERS`` (``dustless.cli.changes:report_sections``).
A crawl with one batch has nothing to compare yet: the section says so and draws no chart.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

from dustless.analysis import ChangeGroup, ChangeReport
from dustless.report._page import Block, Chart, Paragraph, Section, Table
from dustless.report._svg import BarChart, Series
from dustless.words import plural

__all__ = ["change_sections"]


def _f(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _group_table(caption: str, key: str, groups: tuple[ChangeGroup[Any], ...]) -> Table:
    return Table(
        caption,
        (key, "pages", "observed", "unchanged", "changed", "changed %", "interval (days)"),
        tuple(
            (
                str(g.key),
                f"{g.pages:,}",
                f"{g.observed:,}",
                f"{g.unchanged:,}",
                f"{g.changed:,}",
                _pct(g.changed_ratio),
                _f(g.change_interval_days),
            )
            for g in groups
        ),
        (False, *([True] * 6)),
    )


def _group_chart(title: str, x_label: str, groups: tuple[ChangeGroup[Any], ...]) -> Chart:
    return Chart(
        BarChart(
            title,
            tuple(str(g.key) for g in groups),
            (
                Series("unchanged", tuple(float(g.unchanged) for g in groups)),
                Series("changed", tuple(float(g.changed) for g in groups)),
            ),
            stacked=True,
            y_label="pages",
            x_label=x_label,
        ),
        "Pages whose changes can be judged, split by whether their content ever changed.",
    )


def _apart(days: float) -> str:
    """``2.0 days``, ``5.3 hours``, ``40 seconds``: how far apart two downloads were."""
    seconds = days * 86_400
    if days >= 1:
        return f"{days:,.1f} days"
    if seconds >= 3_600:
        return f"{seconds / 3_600:.1f} hours"
    if seconds >= 60:
        return f"{seconds / 60:.0f} minutes"
    return plural(round(seconds), "second")


def _rate_blocks(rep: ChangeReport) -> list[Block]:
    """The change-rate chart, or what it lacks. A rate needs two downloads of a page and a
    change between them: when every page downloaded twice stayed the same, every rate is 0
    and a chart of zeros would read "no data" over hundreds of pages (so it says that)."""
    rated = [r for r in rep.pages if r.poisson_rate is not None and r.naive_rate is not None]
    if not rated:
        return [
            Paragraph(
                "No change rate: no page was downloaded twice (a rate needs two downloads).",
                note=True,
            )
        ]
    changed = sum(1 for r in rated if r.changes)
    intervals = [r.observed_days / (r.downloads - 1) for r in rated if r.downloads > 1]
    mean_days = sum(intervals) / len(intervals) if intervals else None
    apart = "–" if mean_days is None else _apart(mean_days)
    twice = f"{plural(len(rated), 'page')} downloaded at least twice"
    if not changed:
        return [
            Paragraph(
                f"No change rate chart: {twice} (downloads {apart} apart on average), none "
                "changed between two downloads, so every estimated rate is 0. Recrawl later "
                "(`dustless recrawl`) to see pages change.",
                note=True,
            )
        ]
    # Rates per day in bins of the corrected estimate, log-spaced: how much the naive
    # estimate undercounts grows with the rate (Cho & Garcia-Molina, TOIT 2003).
    edges = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0, math.inf)
    labels, naive, corrected = [], [], []
    for lo, hi in pairwise(edges):
        inside = [r for r in rated if lo <= (r.poisson_rate or 0.0) < hi]
        if not inside:
            continue
        labels.append(f"≥ {lo:g}" if hi == math.inf else f"{lo:g}–{hi:g}")
        naive.append(sum(r.naive_rate or 0.0 for r in inside) / len(inside))
        corrected.append(sum(r.poisson_rate or 0.0 for r in inside) / len(inside))
    return [
        Chart(
            BarChart(
                "Mean estimated change rate per day, naive vs bias-corrected",
                tuple(labels),
                (Series("naive", tuple(naive)), Series("corrected", tuple(corrected))),
                y_label="changes per day",
                x_label="bias-corrected rate bin",
            ),
            f"{twice}, {changed:,} of them changed; downloads {apart} apart on average"
            + (
                ": rates per day measured over less than a day are large."
                if mean_days is not None and mean_days < 1
                else "."
            ),
        )
    ]


def change_sections(rep: ChangeReport) -> list[Section]:
    if len(rep.batches) < 2:
        return [
            Section(
                "changes",
                "How pages change (seed 004 §4)",
                (
                    Paragraph(
                        f"{len(rep.batches)} batch in this crawl: run `dustless recrawl` to "
                        "add batches, then this section compares them."
                    ),
                ),
            )
        ]
    blocks: list[Block] = [
        Paragraph(
            f"{len(rep.batches)} batches, {plural(rep.seeds, 'seed')}, "
            f"{plural(rep.documents, 'document')}; "
            + (
                f"{plural(rep.changed_pages, 'document')} changed (mean change interval "
                f"{_f(rep.change_interval_days)} days)"
                if rep.changed_pages
                else "no document changed between two downloads"
            )
            + f". SS = {_f(rep.ss, 4)}, FF = {_f(rep.ff, 4)} (seed 004 formulas 1 and 2)."
        ),
        Chart(
            BarChart(
                "Requested and downloaded documents per batch (Table 7)",
                tuple(str(b.batch) for b in rep.batches),
                (
                    Series("requested", tuple(float(b.documents_requested) for b in rep.batches)),
                    Series("downloaded", tuple(float(b.documents_downloaded) for b in rep.batches)),
                ),
                y_label="documents",
                x_label="batch",
            )
        ),
        Chart(
            BarChart(
                "Seeds by number of successful downloads (Table 8)",
                tuple(str(n) for n, _ in rep.seeds_by_downloads),
                (Series("seeds", tuple(float(c) for _, c in rep.seeds_by_downloads)),),
                y_label="seeds",
                x_label="downloads",
            )
        ),
        _group_table("Seeds by domain suffix (Table 9)", "domain", rep.by_domain),
        Chart(
            BarChart(
                "Documents by number of successful downloads (Table 11)",
                tuple(str(n) for n, _, _ in rep.documents_by_downloads),
                (Series("documents", tuple(float(c) for _, c, _ in rep.documents_by_downloads)),),
                y_label="documents",
                x_label="downloads",
            )
        ),
        _group_table("Documents by depth (Table 12)", "depth", rep.by_depth),
        _group_chart("Documents by depth: changed or not (Table 12)", "depth", rep.by_depth),
        _group_table("Documents by link kind (Table 13)", "link kind", rep.by_link_kind),
        _group_chart(
            "Documents by link kind: changed or not (Table 13)", "link kind", rep.by_link_kind
        ),
    ]
    blocks.extend(_rate_blocks(rep))
    if rep.prediction is not None:
        p = rep.prediction
        blocks.append(
            Paragraph(
                f"Change rate predicted from domain, depth and link kind (seed 004 §5): MAE "
                f"{p.mean_absolute_error:.4f}/day on {p.pages:,} held-out pages, against "
                f"{p.baseline_mean_absolute_error:.4f}/day for predicting the mean.",
                note=True,
            )
        )
    return [Section("changes", "How pages change (seed 004 §4)", tuple(blocks))]

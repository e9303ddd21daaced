"""dustless.report — one self-contained HTML file with the crawl's tables and charts.

Pure rendering: typed results in (:class:`~dustless.analysis.CrawlStats` from ``stats``,
:class:`~dustless.analysis.Evaluation` from ``evaluate``), a string of HTML out; the CLI writes
the file. Charts are inline SVG made here, the CSS is inline, there is no script, and a strict
Content Security Policy forbids loading anything, so the file works offline and from disk.

Other commands add sections through ``extra_sections`` (``dustless changes``, its charts)::

    from dustless.report import BarChart, Chart, Section, Series, Table, render_report
    changes = Section("changes", "How pages change", (Chart(BarChart(...)), Table(...)))
    html = render_report(stats, evaluation, extra_sections=[changes])
"""

from __future__ import annotations

from collections.abc import Sequence

from dustless.analysis import CrawlStats, Evaluation
from dustless.report._changes_section import change_sections
from dustless.report._hosts_section import host_sections
from dustless.report._page import (
    Block,
    Chart,
    Paragraph,
    Section,
    Table,
    content_security_policy,
    render_page,
)
from dustless.report._sections import evaluation_sections, stats_sections
from dustless.report._svg import BarChart, Series, render_bar_chart

__all__ = [
    "BarChart",
    "Block",
    "Chart",
    "Paragraph",
    "Section",
    "Series",
    "Table",
    "change_sections",
    "content_security_policy",
    "render_bar_chart",
    "render_page",
    "render_report",
]


def render_report(
    stats: CrawlStats | None,
    evaluation: Evaluation | None,
    *,
    extra_sections: Sequence[Section] = (),
    title: str | None = None,
    generated: str = "",
) -> str:
    """The report as one HTML document; either input may be missing (its sections are left
    out). ``extra_sections`` go last (the hook ``dustless changes`` uses for its charts)."""
    sections: list[Section] = []
    directory = ""
    crawl = stats_sections(stats) if stats is not None else []
    if stats is not None:
        directory = stats.directory
    sections.extend(crawl[:1])  # the overview first, then what normalization costs
    if evaluation is not None:
        directory = directory or evaluation.directory
        sections.extend(evaluation_sections(evaluation))
        sections.extend(host_sections(evaluation))  # per-host rows and the site policy
    sections.extend(crawl[1:])
    sections.extend(extra_sections)
    subtitle = f"crawl directory {directory}" if directory else "crawl report"
    return render_page(title or "dustless crawl report", subtitle, sections, generated=generated)

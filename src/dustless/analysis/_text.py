"""Plain-text tables for ``dustless stats`` and ``dustless evaluate`` (pure: values → str)."""

from __future__ import annotations

from dustless.analysis._evaltext import format_evaluation, text_table
from dustless.analysis._stats import CrawlStats
from dustless.analysis._stattables import TEXT_STYLE, render_text, stat_tables
from dustless.words import plural

__all__ = ["format_evaluation", "format_stats", "text_table"]


def _n(v: int) -> str:
    return f"{v:,}"


def _truncated(st: CrawlStats) -> str:
    total = sum(t.count for t in st.truncated)
    reasons = ", ".join(f"{t.reason} {_n(t.count)}" for t in st.truncated)
    return f"Truncated captures (WARC-Truncated): {_n(total)}" + (f" ({reasons})" if total else "")


def _headline(st: CrawlStats) -> str:
    return (
        f"crawl {st.directory}: {'batch' if len(st.batches) == 1 else 'batches'} "
        f"{', '.join(map(str, st.batches)) or '-'}; "
        f"{plural(st.urls_known, 'URL')} known, {plural(st.seeds_known, 'seed')}, "
        f"{plural(st.hosts, 'host')}; "
        f"{_n(st.requested)} requested, {_n(st.downloaded)} downloaded; "
        f"{st.pages_per_second:,.2f} pages/s"
    )


def _documents(st: CrawlStats) -> str:
    return (
        f"Documents: {plural(st.documents, 'complete 2xx download')}, "
        f"{_n(st.distinct_documents)} distinct ("
        + ("near-duplicate text" if st.content == "near" else "payload SHA-1")
        + f", --content {st.content}); "
        + plural(st.documents - st.distinct_documents, "duplicate")
        + f"; soft 404s {_n(st.soft404s)} (200 pages saying the URL is missing: not counted)"
    )


def format_stats(st: CrawlStats) -> str:
    """The statistics of seed 004 §3, one table after another (the tables of
    :func:`~dustless.analysis._stattables.stat_tables`, as text)."""
    t = stat_tables(st, TEXT_STYLE)
    tables = (t.lengths, t.forms, t.sizes, t.storage, t.depths, t.link_kinds, t.filtering)
    parts = [
        _headline(st),
        render_text(t.seed_states),
        render_text(t.states),
        _truncated(st),
        *(render_text(table) for table in tables if table is not None),
        _documents(st),
        *(render_text(table) for table in (t.hosts, t.canonicals, t.learned) if table is not None),
    ]
    return "\n\n".join(parts) + "\n"

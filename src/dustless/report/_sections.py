"""The report's sections from the typed results of ``stats`` and ``evaluate``.

Pure: values in, :class:`~dustless.report._page.Section` values out. The order follows the
papers: first what normalization costs and saves (seed 000 Table 1 and Figs. 2–5), then the
crawl statistics of seed 004 §3 (Tables 1–6, Fig. 4, Table 13), then states over time.
"""

from __future__ import annotations

import datetime as _dt

from dustless.analysis import (
    HTML_STYLE,
    STATE_MEANINGS,
    CrawlStats,
    Evaluation,
    StatTables,
    paper_figures,
    stat_tables,
)
from dustless.report._learn_section import learning_sections
from dustless.report._page import Chart, Paragraph, Section, Table
from dustless.report._svg import BarChart, Series

__all__ = ["STATE_MEANINGS", "evaluation_sections", "stats_sections"]


def _n(v: int | float) -> str:
    return f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"


def _rate(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _pct(v: float) -> str:
    return f"{100 * v:.2f}%"


def _bytes(v: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:,.0f} {unit}" if unit == "B" else f"{v:,.1f} {unit}"
        v /= 1024
    return f"{v:,.1f} TiB"  # pragma: no cover


def _when(t: float | None) -> str:
    if t is None:
        return "–"
    return _dt.datetime.fromtimestamp(t, _dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# ---- seed 000: Table 1 and Figs. 2–5 ----------------------------------------------------------


def evaluation_sections(ev: Evaluation) -> list[Section]:
    blocks: list[Paragraph | Table | Chart] = [
        Paragraph(
            f"{_n(ev.urls)} distinct URLs requested (after standard normalization), "
            f"{_n(ev.downloaded)} with a document. Default documents: "
            f"{', '.join(ev.default_documents)}. Redirects "
            f"{'followed' if ev.follow_redirects else 'not followed'}."
        ),
        _methods_table(ev),
        Paragraph(
            # Without the truth these columns are dashes; with it, say what they count (the
            # terms of docs/evaluation.md), for "FP" alone reads as a rate of the whole crawl.
            "true FP: of the pairs of URLs of different resources inside the method's "
            "candidate sets, the share it merges; true FN: of the pairs of URLs of one "
            "resource, the share it keeps apart; wrong / merged: of the pairs it merges, the "
            "share that are different resources. All three are measured against the truth "
            "(--truth FILE, e.g. the test web's truth.tsv); '–' without it.",
            note=True,
        ),
    ]
    if ev.estimated:
        blocks.append(
            Paragraph(
                "(est.): some normalized forms were never requested by the crawl and count as "
                "lost — an upper bound. Run `dustless evaluate --fetch` to measure them.",
                note=True,
            )
        )
    rec = ev.recommendation
    choices = ", ".join(f"{f}: {m}" for f, m in rec.choices) or "none"
    blocks.append(
        Paragraph(
            f"Recommended policy for a coverage-loss budget of {rec.max_loss:g}: "
            f"{rec.policy} (methods {choices}; largest loss {rec.coverage_loss:.3f}; "
            f"{_n(rec.duplicates_removed)} duplicate downloads removed)."
        )
    )
    blocks += _method_charts(ev)
    return [Section("evaluation", "Normalization: what each method costs and saves", tuple(blocks))]


def _methods_table(ev: Evaluation) -> Table:
    """Seed 000 Table 1's shape: each method's rates and counts, the paper's beside them."""
    paper = paper_figures()
    detail = {(d.factor, d.method): d for d in ev.details}
    table_rows = []
    for r in ev.rows:
        p = paper.get((r.factor, r.method))
        d = detail.get((r.factor, r.method))
        table_rows.append(
            (
                r.factor,
                r.method,
                _rate(r.redundancy_rate),
                _rate(r.coverage_loss_rate) + ("" if r.coverage_loss_measured else " (est.)"),
                "–" if p is None else f"{p[0]:.2f} / {p[1]:.2f}",
                _n(r.candidate_urls),
                _n(r.sets),
                _n(r.requests),
                _n(r.downloads),
                _n(r.unique_documents),
                "–" if d is None else _n(d.duplicates_removed),
                _rate(r.true_fp_rate, 3),
                _rate(r.true_fn_rate, 3),
                # Nothing merged: no share of wrong merges to give (not 0 of 0 = "0.000").
                "–" if d is None or not d.merged_pairs else _rate(d.wrong_merge_share, 3),
            )
        )
    return Table(
        "Redundancy and coverage loss of each method (shaped like seed 000 Table 1)",
        (
            "factor",
            "method",
            "redundancy",
            "coverage loss",
            "paper R / L",
            "candidate URLs",
            "sets",
            "requests",
            "downloads",
            "unique docs",
            "duplicates removed",
            "true FP",
            "true FN",
            "wrong / merged",
        ),
        tuple(table_rows),
        (False, False, *([True] * 12)),
    )


def _method_charts(ev: Evaluation) -> list[Paragraph | Table | Chart]:
    """Per factor, requests, downloads and unique documents per method (seed 000 Figs. 2–5)."""
    charts: list[Paragraph | Table | Chart] = []
    figures = []
    for factor in dict.fromkeys(r.factor for r in ev.rows):
        rows = [r for r in ev.rows if r.factor == factor]
        if not rows or rows[0].sets == 0:
            figures.append(factor)
            continue
        charts.append(
            Chart(
                BarChart(
                    f"{factor}: requests, downloads and unique documents per method",
                    tuple(r.method for r in rows),
                    (
                        Series("requests", tuple(float(r.requests) for r in rows)),
                        Series("downloads", tuple(float(r.downloads) for r in rows)),
                        Series("unique documents", tuple(float(r.unique_documents) for r in rows)),
                    ),
                    y_label="URLs / documents",
                ),
                f"{rows[0].sets:,} candidate sets of {rows[0].candidate_urls:,} URLs "
                "(as seed 000 Figs. 2–5).",
            )
        )
    if figures:
        charts.append(
            Paragraph(f"No candidate sets in this crawl for: {', '.join(figures)}.", note=True)
        )
    return charts


# ---- seed 004 §3 --------------------------------------------------------------------------------


def _state_bars(st: CrawlStats) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The state chart's bars: every state, with ``code`` as one bar per HTTP status."""
    names: list[str] = []
    values: list[float] = []
    for r in st.document_states:
        if r.state == "code" and st.document_codes:
            for c in st.document_codes:
                names.append(f"code {c.status}")
                values.append(float(c.count))
            rest = r.count - sum(c.count for c in st.document_codes)
            if rest > 0:
                names.append("code ?")
                values.append(float(rest))
        else:
            names.append(r.state)
            values.append(float(r.count))
    return tuple(names), tuple(values)


def _seed_counts_note(st: CrawlStats) -> str:
    """Why the report gives several numbers of seeds: each counts something else."""
    fetched = sum(r.count for r in st.seed_states)
    requested = sum(f.count for f in st.seed_forms)
    downloaded = next((r.count for r in st.url_lengths if r.kind == "seed"), 0)
    return (
        f"Seeds: {_n(st.seeds_known)} known (given and discovered: each new site found is a "
        f"party with a seed of its own, seed 004 §2); {_n(fetched)} seed documents recorded "
        f"(Table 1, those stopped by robots.txt or a filter too), {_n(requested)} requested "
        f"(Table 4), {_n(downloaded)} downloaded (Table 3)."
    )


def _compression_note(st: CrawlStats) -> str:
    if not st.raw_bytes:
        return f"Stored {_bytes(st.stored_bytes)}; no payload bytes were downloaded."
    ratio = st.stored_bytes / st.raw_bytes
    text = (
        f"Stored {_bytes(st.stored_bytes)} compressed for {_bytes(st.raw_bytes)} of payloads "
        f"({ratio:.1%})."
    )
    if ratio > 1:
        text += (
            " More than 100 %: the stored size counts every record's WARC and HTTP headers "
            "and the request records as well, and small pages gain less from gzip than "
            "those headers cost."
        )
    return text


def stats_sections(st: CrawlStats) -> list[Section]:
    """The statistics of seed 004 §3, their tables the ones ``stats`` prints
    (``stat_tables``), with the report's charts and notes."""
    t = stat_tables(st, HTML_STYLE)
    sections = [
        _overview(st),
        _states_section(st, t),
        _urls_section(t),
        _sizes_section(st, t),
        _depth_section(st, t),
        _kinds_section(st, t),
    ]
    if t.filtering is not None:
        sections.append(_link_filtering_section(st, t.filtering))
    sections += learning_sections(st, t)  # rules learned while crawling, canonical links
    sections.append(_time_section(st, t))
    return sections


def _overview(st: CrawlStats) -> Section:
    return Section(
        "overview",
        "Crawl overview",
        (
            Table(
                "The crawl",
                ("", ""),
                (
                    ("directory", st.directory),
                    ("batches", ", ".join(map(str, st.batches)) or "–"),
                    ("started", _when(st.started_at)),
                    ("ended", _when(st.ended_at)),
                    ("URLs known", _n(st.urls_known)),
                    ("seeds known", _n(st.seeds_known)),
                    ("hosts fetched", _n(st.hosts)),
                    ("fetches counted", _n(st.fetches)),
                    ("requested", _n(st.requested)),
                    ("downloaded (OK)", _n(st.downloaded)),
                    ("pages/s (downloads over the crawl's time)", f"{st.pages_per_second:.2f}"),
                ),
                (False, True),
            ),
            Paragraph(_seed_counts_note(st), note=True),
        ),
    )


def _states_section(st: CrawlStats, t: StatTables) -> Section:
    names, values = _state_bars(st)
    return Section(
        "states",
        "Responses by network state (seed 004 Tables 1–2)",
        (
            t.seed_states,
            t.states,
            Chart(
                BarChart(
                    "Fetches by network state (code by HTTP status)",
                    names,
                    (Series("all documents", values),),
                    y_label="fetches",
                    value_labels=True,
                ),
                "States of seed 004 Fig. 3, plus robots, filtered and tooBig; each bar is "
                "labelled with its count, so a state seen once is read next to thousands. "
                "Their meanings are in the tables above.",
            ),
        ),
    )


def _urls_section(t: StatTables) -> Section:
    return Section(
        "urls",
        "URL strings and seed forms (Tables 3–4)",
        (
            t.lengths,
            Paragraph(
                "A document's string leaves out its seed's string (seed 004 §3), so the seed's "
                "own document has length 0, the shortest a document URL can have; a seed's "
                "string leaves out the scheme.",
                note=True,
            ),
            t.forms,
        ),
    )


def _sizes_section(st: CrawlStats, t: StatTables) -> Section:
    blocks: list[Paragraph | Table | Chart] = [
        t.sizes,
        Chart(
            BarChart(
                "Downloaded documents by size",
                tuple(b.label for b in st.size_histogram),
                (Series("documents", tuple(float(b.count) for b in st.size_histogram)),),
                y_label="documents",
                x_label="size in bytes (k = 1,000; M = 1,000,000)",
                value_labels=True,
            ),
            "Buckets of a round width chosen from these sizes (Table 5's 256 KiB put every "
            "page of a few kB in one bar); a size far from the rest goes to an open bucket "
            "at either end.",
        ),
        Paragraph(_compression_note(st)),
    ]
    if st.storage:
        blocks.append(
            Chart(
                BarChart(
                    "Storage per WARC file: compressed vs uncompressed (Fig. 4)",
                    tuple(r.file for r in st.storage),
                    (
                        Series("uncompressed", tuple(float(r.raw_bytes) for r in st.storage)),
                        Series("stored (gzip)", tuple(float(r.stored_bytes) for r in st.storage)),
                    ),
                    y_label="bytes",
                    unit="bytes",
                ),
                "Stored: gzip-compressed WARC records, headers and request records "
                "included; uncompressed: the payloads alone.",
            )
        )
    return Section("sizes", "Document sizes and storage (Table 5, Fig. 4)", tuple(blocks))


def _depth_section(st: CrawlStats, t: StatTables) -> Section:
    return Section(
        "depth",
        "Documents by depth (Table 6)",
        (
            t.depths,
            Chart(
                BarChart(
                    "Requested and downloaded documents by depth",
                    tuple(str(d.depth) for d in st.depths),
                    (
                        Series("requested", tuple(float(d.requested) for d in st.depths)),
                        Series("downloaded", tuple(float(d.downloaded) for d in st.depths)),
                    ),
                    y_label="documents",
                    x_label="depth",
                )
            ),
        ),
    )


def _kinds_section(st: CrawlStats, t: StatTables) -> Section:
    return Section(
        "link-kinds",
        "Link kinds per document (Table 13)",
        (
            t.link_kinds,
            Chart(
                BarChart(
                    "Documents by link kind",
                    tuple(k.kind for k in st.link_kinds),
                    (Series("documents", tuple(float(k.documents) for k in st.link_kinds)),),
                    y_label="documents",
                    value_labels=True,
                ),
                "A kind spells which URLs a document holds: h (found anywhere else, e.g. in "
                "scripts), a (<a href>), f (<frame>), 0 where it holds none of that kind.",
            ),
        ),
    )


def _time_section(st: CrawlStats, t: StatTables) -> Section:
    if not st.timeline:
        blocks: list[Paragraph | Table | Chart] = [Paragraph("No fetches recorded.", note=True)]
        return Section("time", "Over time and by host", (*blocks, t.hosts))
    state_names = list(dict.fromkeys(s for b in st.timeline for s, _ in b.states))
    per_state = [
        Series(s, tuple(float(dict(b.states).get(s, 0)) for b in st.timeline)) for s in state_names
    ]
    starts = tuple(f"{b.start:g}s" for b in st.timeline)
    states = Chart(
        BarChart(
            f"Network states over time ({st.bucket_seconds:g} s intervals)",
            starts,
            tuple(per_state),
            stacked=True,
            y_label="fetches",
            x_label="time since the first fetch",
        ),
        "Each bar stacks the fetches that ended in each network state in the "
        "interval; the states are explained in Table 2.",
    )
    pages = Chart(
        BarChart(
            "Pages per second",
            starts,
            (Series("pages/s", tuple(b.pages_per_second for b in st.timeline)),),
            y_label="downloads / s",
        )
    )
    return Section("time", "Over time and by host", (states, pages, t.hosts))


def _link_filtering_section(st: CrawlStats, table: Table) -> Section:
    """Seed 002 Table 2: links of scripted sites' pages before and after pattern filtering."""
    per_type = [r for r in st.link_filtering if r.page_type != "total"]
    return Section(
        "link-filtering",
        "Pattern-script filtering (seed 002 Table 2)",
        (
            table,
            Chart(
                BarChart(
                    "Links before and after filtering, by page type",
                    tuple(r.page_type for r in per_type),
                    (
                        Series("before", tuple(float(r.links_before) for r in per_type)),
                        Series("after", tuple(float(r.links_after) for r in per_type)),
                    ),
                    y_label="links",
                )
            ),
        ),
    )

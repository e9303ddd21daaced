"""The report's sections from the typed results of ``stats`` and ``evaluate``.

Pure: values in, :class:`~dustless.report._page.Section` values out. The order follows the
papers: first what normalization costs and saves (seed 000 Table 1 and Figs. 2–5), then the
crawl statistics of seed 004 §3 (Tables 1–6, Fig. 4, Table 13), then states over time.
"""

from __future__ import annotations

import datetime as _dt

from dustless.analysis import (
    CrawlStats,
    Evaluation,
    StateCount,
    StatusCount,
    paper_figures,
    status_meaning,
)
from dustless.report._learn_section import learning_sections
from dustless.report._page import Chart, Paragraph, Section, Table
from dustless.report._svg import BarChart, Series

__all__ = ["STATE_MEANINGS", "evaluation_sections", "stats_sections"]

# One line per network state (seed 004 Fig. 3 and our gates), shown next to the
# abbreviation wherever it appears. dustless.states.NetState has the long descriptions.
STATE_MEANINGS: dict[str, str] = {
    "OK": "200 text/html: a document",
    "code": "any other HTTP answer (by status below)",
    "noIP": "the host name did not resolve",
    "cErr": "connecting failed (refused, unreachable, TLS)",
    "cTim": "connecting timed out",
    "Conn": "connected, no answer recorded",
    "hSht": "the header was cut short",
    "hNpr": "the reply is not HTTP",
    "hTim": "no header in time",
    "hErr": "error reading the header",
    "dTim": "the body stalled or took too long",
    "dErr": "error reading the body",
    "tooBig": "the body passed the size limit",
    "robots": "robots.txt disallows it; not requested",
    "filtered": "refused by the URL filter or address policy; not requested",
    "pBig": "stored, but its markup passed extraction's budget: first part's links only",
    "pFlat": "stored, but its markup would cost the parser far more than its size: read flat",
    "soft404": "200, but a page saying the URL is missing (a soft 404): no document",
    "iErr": "internal error: a bug of dustless, not the server's fault",
    "NULL": "never tried",
}


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
    blocks: list[Paragraph | Table | Chart] = [
        Paragraph(
            f"{_n(ev.urls)} distinct URLs requested (after standard normalization), "
            f"{_n(ev.downloaded)} with a document. Default documents: "
            f"{', '.join(ev.default_documents)}. Redirects "
            f"{'followed' if ev.follow_redirects else 'not followed'}."
        ),
        Table(
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
        ),
    ]
    blocks.append(
        Paragraph(
            # Without the truth these columns are dashes; with it, say what they count (the
            # terms of docs/evaluation.md), for "FP" alone reads as a rate of the whole crawl.
            "true FP: of the pairs of URLs of different resources inside the method's "
            "candidate sets, the share it merges; true FN: of the pairs of URLs of one "
            "resource, the share it keeps apart; wrong / merged: of the pairs it merges, the "
            "share that are different resources. All three are measured against the truth "
            "(--truth FILE, e.g. the test web's truth.tsv); '–' without it.",
            note=True,
        )
    )
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
    figures = []
    for factor in dict.fromkeys(r.factor for r in ev.rows):
        rows = [r for r in ev.rows if r.factor == factor]
        if not rows or rows[0].sets == 0:
            figures.append(factor)
            continue
        blocks.append(
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
        blocks.append(
            Paragraph(f"No candidate sets in this crawl for: {', '.join(figures)}.", note=True)
        )
    return [Section("evaluation", "Normalization: what each method costs and saves", tuple(blocks))]


# ---- seed 004 §3 --------------------------------------------------------------------------------


def _state_table(
    caption: str, rows: tuple[StateCount, ...], codes: tuple[StatusCount, ...]
) -> Table:
    """A state table with each state's meaning, and ``code`` broken down by HTTP status
    (a redirect is an answer, not an error)."""
    total = sum(r.count for r in rows)
    body = []
    for r in rows:
        body.append((r.state, STATE_MEANINGS.get(r.state, ""), _n(r.count), _pct(r.share)))
        if r.state == "code":
            body.extend(
                (f"  {c.status}", status_meaning(c.status), _n(c.count), _pct(c.share))
                for c in codes
            )
    body.append(("total", "", _n(total), _pct(1.0 if total else 0.0)))
    return Table(
        caption, ("state", "meaning", "count", "share"), tuple(body), (False, False, True, True)
    )


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
    overview = Section(
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
    states = Section(
        "states",
        "Responses by network state (seed 004 Tables 1–2)",
        (
            _state_table("Table 1: seed documents (depth 0)", st.seed_states, st.seed_codes),
            _state_table("Table 2: all documents", st.document_states, st.document_codes),
            Chart(
                BarChart(
                    "Fetches by network state (code by HTTP status)",
                    _state_bars(st)[0],
                    (Series("all documents", _state_bars(st)[1]),),
                    y_label="fetches",
                    value_labels=True,
                ),
                "States of seed 004 Fig. 3, plus robots, filtered and tooBig; each bar is "
                "labelled with its count, so a state seen once is read next to thousands. "
                "Their meanings are in the tables above.",
            ),
        ),
    )
    urls = Section(
        "urls",
        "URL strings and seed forms (Tables 3–4)",
        (
            Table(
                "Table 3: URL string lengths of downloaded documents",
                ("", "count", "min", "max", "mean"),
                tuple(
                    (f"{r.kind} URL", _n(r.count), _n(r.min), _n(r.max), f"{r.mean:.2f}")
                    for r in st.url_lengths
                ),
                (False, True, True, True, True),
            ),
            Paragraph(
                "A document's string leaves out its seed's string (seed 004 §3), so the seed's "
                "own document has length 0, the shortest a document URL can have; a seed's "
                "string leaves out the scheme.",
                note=True,
            ),
            Table(
                "Table 4: seed URL forms (xxx has no dot)",
                ("form", "seeds", "share"),
                tuple((f.form, _n(f.count), _pct(f.share)) for f in st.seed_forms),
                (False, True, True),
            ),
        ),
    )
    sizes = Section(
        "sizes",
        "Document sizes and storage (Table 5, Fig. 4)",
        (
            Table(
                f"Table 5: downloaded documents by size (mean {st.mean_size:,.0f} bytes, "
                f"largest {st.max_size:,})",
                ("size", "documents"),
                tuple((b.label, _n(b.count)) for b in st.sizes),
                (False, True),
            ),
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
            *(
                [
                    Chart(
                        BarChart(
                            "Storage per WARC file: compressed vs uncompressed (Fig. 4)",
                            tuple(r.file for r in st.storage),
                            (
                                Series(
                                    "uncompressed", tuple(float(r.raw_bytes) for r in st.storage)
                                ),
                                Series(
                                    "stored (gzip)",
                                    tuple(float(r.stored_bytes) for r in st.storage),
                                ),
                            ),
                            y_label="bytes",
                            unit="bytes",
                        ),
                        "Stored: gzip-compressed WARC records, headers and request records "
                        "included; uncompressed: the payloads alone.",
                    )
                ]
                if st.storage
                else []
            ),
        ),
    )
    depth = Section(
        "depth",
        "Documents by depth (Table 6)",
        (
            Table(
                "Table 6: requested and downloaded documents, internal links found",
                ("depth", "requested", "downloaded", "internal links", "links / document"),
                tuple(
                    (
                        str(d.depth),
                        _n(d.requested),
                        _n(d.downloaded),
                        _n(d.internal_links),
                        f"{d.links_per_document:.2f}",
                    )
                    for d in st.depths
                ),
                (True, True, True, True, True),
            ),
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
    kinds = Section(
        "link-kinds",
        "Link kinds per document (Table 13)",
        (
            Table(
                "Downloaded documents by the kinds of URL they hold (h other, a anchor, f frame)",
                ("kind", "documents", "share"),
                tuple((k.kind, _n(k.documents), _pct(k.share)) for k in st.link_kinds),
                (False, True, True),
            ),
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
    state_names = list(dict.fromkeys(s for b in st.timeline for s, _ in b.states))
    per_state = [
        Series(s, tuple(float(dict(b.states).get(s, 0)) for b in st.timeline)) for s in state_names
    ]
    time_blocks: list[Paragraph | Table | Chart] = []
    if st.timeline:
        time_blocks.append(
            Chart(
                BarChart(
                    f"Network states over time ({st.bucket_seconds:g} s intervals)",
                    tuple(f"{b.start:g}s" for b in st.timeline),
                    tuple(per_state),
                    stacked=True,
                    y_label="fetches",
                    x_label="time since the first fetch",
                ),
                "Each bar stacks the fetches that ended in each network state in the "
                "interval; the states are explained in Table 2.",
            )
        )
        time_blocks.append(
            Chart(
                BarChart(
                    "Pages per second",
                    tuple(f"{b.start:g}s" for b in st.timeline),
                    (Series("pages/s", tuple(b.pages_per_second for b in st.timeline)),),
                    y_label="downloads / s",
                )
            )
        )
    else:
        time_blocks.append(Paragraph("No fetches recorded.", note=True))
    time_blocks.append(
        Table(
            "Top hosts",
            ("host", "requested", "downloaded", "bytes"),
            tuple(
                (h.host, _n(h.requested), _n(h.downloaded), _bytes(h.bytes)) for h in st.top_hosts
            ),
            (False, True, True, True),
        )
    )
    timeline = Section("time", "Over time and by host", tuple(time_blocks))
    sections = [overview, states, urls, sizes, depth, kinds]
    if st.scripted:
        sections.append(_link_filtering_section(st))
    sections += learning_sections(st)  # rules learned while crawling, canonical links
    sections.append(timeline)
    return sections


def _link_filtering_section(st: CrawlStats) -> Section:
    """Seed 002 Table 2: links of scripted sites' pages before and after pattern filtering."""
    rows = st.link_filtering
    per_type = [r for r in rows if r.page_type != "total"]
    return Section(
        "link-filtering",
        "Pattern-script filtering (seed 002 Table 2)",
        (
            Table(
                "Links on the pages of scripted sites, before and after pattern filtering",
                ("page type", "pages", "links before", "links after", "reduction"),
                tuple(
                    (
                        r.page_type,
                        _n(r.pages),
                        _n(r.links_before),
                        _n(r.links_after),
                        _pct(r.reduction),
                    )
                    for r in rows
                ),
                (False, True, True, True, True),
            ),
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

"""The statistics tables, built once: ``dustless stats`` renders them as text, ``report`` as HTML.

A :class:`Table` is a title, column headers, rows of cells already formatted, which columns are
numbers (right-aligned), and notes. :func:`stat_tables` makes every table of seed 004 §3 (and
seed 002 Table 2, the learned rules, RFC 6596 canonical links) from a
:class:`~dustless.analysis.CrawlStats`; :func:`render_text` writes one as aligned text, and the
report renders the same values as HTML (``dustless.report``). Pure: values in, tables out.

The two media say a few things differently — the terse text of a terminal against the report's
captions and meaning columns — and each difference is a field of a named :class:`TableStyle`
(:data:`TEXT_STYLE`, :data:`HTML_STYLE`), never a second copy of a table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dustless.analysis._evaltext import text_table
from dustless.analysis._stats import CrawlStats, StateCount, StatusCount, status_meaning
from dustless.words import plural

__all__ = [
    "HTML_STYLE",
    "STATE_MEANINGS",
    "TEXT_STYLE",
    "StatTables",
    "Table",
    "TableStyle",
    "render_text",
    "stat_tables",
]

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


@dataclass(frozen=True, slots=True)
class Table:
    """A table of figures: ``rows`` of formatted cells under ``columns``."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...] = ()  # right-align these columns
    notes: tuple[str, ...] = ()  # said under the table


def render_text(t: Table) -> str:
    """The table as aligned plain text (the title, the headers, a rule, the rows, notes)."""
    return "\n".join([text_table(t.title, t.columns, t.rows, t.numeric), *t.notes])


def _n(v: int) -> str:
    return f"{v:,}"


def _pct(v: float) -> str:
    return f"{100 * v:.2f}%"


def _bytes(v: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:,.0f} {unit}" if unit == "B" else f"{v:,.1f} {unit}"
        v /= 1024
    return f"{v:,.1f} TiB"  # pragma: no cover


@dataclass(frozen=True, slots=True)
class TableStyle:
    """How one medium words the statistics tables."""

    titles: Mapping[str, str]  # by table; ``{mean}``, ``{largest}``… filled in
    meanings: bool  # a state's (and a status's) meaning in a column of its own
    quote_forms: bool  # Table 4's forms in quotes
    per_document: str  # Table 6's last column
    links: tuple[str, str]  # seed 002 Table 2's link columns, before and after
    reduction_of_none: str | None  # a page type without links: its reduction (None: 0 %)
    host_distinct: bool  # the top hosts' distinct documents
    host_bytes: Callable[[int], str]
    sub: str  # a row that details the one above it
    fetched_label: str  # the canonical table's row of declared URLs fetched
    share: Callable[[int, int], str]  # the canonical table's share of a part in a whole
    rule_details: bool  # a learned rule's evidence and why it was retracted


def _text_share(part: int, whole: int) -> str:
    return _pct(part / whole) if whole else "-"


def _html_share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


TEXT_STYLE = TableStyle(
    titles={
        "seed-states": "Table 1. Seed documents by network state",
        "states": "Table 2. All documents by network state",
        "lengths": "Table 3. URL string lengths (downloaded documents)",
        "forms": "Table 4. Seed URL forms",
        "sizes": "Table 5. Document sizes (mean {mean} bytes, largest {largest_bytes})",
        "depths": "Table 6. Documents by depth",
        "link-kinds": "Table 13. Downloaded documents by link kind (h other, a anchor, f frame)",
        "filtering": "Seed 002 Table 2. Links before and after URL pattern filtering, by page type",
        "hosts": "Top hosts",
        "canonicals": "Canonical links (RFC 6596) declared by the downloaded documents",
        "learned": "Rules learned while crawling: {active} in force, {retracted} retracted; "
        "{merged} merged",
    },
    meanings=False,
    quote_forms=True,
    per_document="per document",
    links=("before", "after"),
    reduction_of_none="-",
    host_distinct=True,
    host_bytes=_n,
    sub="  ",
    fetched_label="declared URLs fetched",
    share=_text_share,
    rule_details=False,
)

HTML_STYLE = TableStyle(
    titles={
        "seed-states": "Table 1: seed documents (depth 0)",
        "states": "Table 2: all documents",
        "lengths": "Table 3: URL string lengths of downloaded documents",
        "forms": "Table 4: seed URL forms (xxx has no dot)",
        "sizes": "Table 5: downloaded documents by size (mean {mean} bytes, largest {largest})",
        "depths": "Table 6: requested and downloaded documents, internal links found",
        "link-kinds": "Downloaded documents by the kinds of URL they hold "
        "(h other, a anchor, f frame)",
        "filtering": "Links on the pages of scripted sites, before and after pattern filtering",
        "hosts": "Top hosts",
        "canonicals": "Canonical links (RFC 6596) of the downloaded documents",
        "learned": "Rules learned per host",
    },
    meanings=True,
    quote_forms=False,
    per_document="links / document",
    links=("links before", "links after"),
    reduction_of_none=None,
    host_distinct=False,
    host_bytes=_bytes,
    sub="… ",
    fetched_label="declared URLs the crawl fetched",
    share=_html_share,
    rule_details=True,
)


@dataclass(frozen=True, slots=True)
class StatTables:
    """The statistics' tables, by what they show; ``None`` where the crawl has nothing to
    show (no ``--script``, no canonical declarations, nothing learned)."""

    seed_states: Table
    states: Table
    lengths: Table
    forms: Table
    sizes: Table
    storage: Table
    depths: Table
    link_kinds: Table
    filtering: Table | None
    hosts: Table
    canonicals: Table | None
    learned: Table | None


def stat_tables(st: CrawlStats, style: TableStyle) -> StatTables:
    """Every table of ``st``, worded for ``style``'s medium."""
    return StatTables(
        seed_states=_state_table(style, "seed-states", st.seed_states, st.seed_codes),
        states=_state_table(style, "states", st.document_states, st.document_codes),
        lengths=_lengths(st, style),
        forms=_forms(st, style),
        sizes=_sizes(st, style),
        storage=_storage(st),
        depths=_depths(st, style),
        link_kinds=_link_kinds(st, style),
        filtering=_filtering(st, style) if st.scripted else None,
        hosts=_hosts(st, style),
        canonicals=_canonicals(st, style),
        learned=_learned(st, style),
    )


def _state_table(
    style: TableStyle, key: str, rows: Sequence[StateCount], codes: Sequence[StatusCount]
) -> Table:
    """Fetches by network state, with ``code`` broken down by HTTP status (a redirect is an
    answer, a 404 an error)."""
    total = sum(r.count for r in rows)
    body: list[tuple[str, ...]] = []
    for r in rows:
        meaning = (STATE_MEANINGS.get(r.state, ""),) if style.meanings else ()
        body.append((r.state, *meaning, _n(r.count), _pct(r.share)))
        if r.state == "code":
            for c in codes:
                what = status_meaning(c.status)
                status = (f"  {c.status}", what) if style.meanings else (f"  {c.status} {what}",)
                body.append((*status, _n(c.count), _pct(c.share)))
    body.append(
        ("total", *(("",) if style.meanings else ()), _n(total), _pct(1.0 if total else 0.0))
    )
    if style.meanings:
        return Table(
            style.titles[key],
            ("state", "meaning", "count", "share"),
            tuple(body),
            (False, False, True, True),
        )
    return Table(style.titles[key], ("state", "count", "share"), tuple(body), (False, True, True))


def _lengths(st: CrawlStats, style: TableStyle) -> Table:
    return Table(
        style.titles["lengths"],
        ("", "count", "min", "max", "mean"),
        tuple(
            (f"{r.kind} URL", _n(r.count), _n(r.min), _n(r.max), f"{r.mean:.2f}")
            for r in st.url_lengths
        ),
        (False, True, True, True, True),
    )


def _forms(st: CrawlStats, style: TableStyle) -> Table:
    return Table(
        style.titles["forms"],
        ("form", "seeds", "share"),
        tuple(
            (f'"{f.form}"' if style.quote_forms else f.form, _n(f.count), _pct(f.share))
            for f in st.seed_forms
        ),
        (False, True, True),
    )


def _sizes(st: CrawlStats, style: TableStyle) -> Table:
    title = style.titles["sizes"].format(
        mean=f"{st.mean_size:,.0f}",
        largest=f"{st.max_size:,}",
        largest_bytes=plural(st.max_size, "byte"),
    )
    return Table(
        title, ("size", "documents"), tuple((b.label, _n(b.count)) for b in st.sizes), (False, True)
    )


def _ratio(stored: int, raw: int) -> str:
    return f"{stored / raw:.3f}" if raw else "-"


def _storage(st: CrawlStats) -> Table:
    """Fig. 4 as a table (the report draws it as a chart)."""
    rows = [
        (
            r.file,
            _n(r.records),
            _n(r.raw_bytes),
            _n(r.stored_bytes),
            _ratio(r.stored_bytes, r.raw_bytes),
        )
        for r in st.storage
    ]
    records = sum(r.records for r in st.storage)
    total = (
        "total",
        _n(records),
        _n(st.raw_bytes),
        _n(st.stored_bytes),
        _ratio(st.stored_bytes, st.raw_bytes),
    )
    return Table(
        "Fig. 4. Storage: compressed (stored) vs uncompressed payloads",
        ("WARC file", "records", "uncompressed", "stored", "ratio"),
        (*rows, total),
        (False, True, True, True, True),
    )


def _depths(st: CrawlStats, style: TableStyle) -> Table:
    return Table(
        style.titles["depths"],
        ("depth", "requested", "downloaded", "internal links", style.per_document),
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
    )


def _link_kinds(st: CrawlStats, style: TableStyle) -> Table:
    return Table(
        style.titles["link-kinds"],
        ("kind", "documents", "share"),
        tuple((k.kind, _n(k.documents), _pct(k.share)) for k in st.link_kinds),
        (False, True, True),
    )


def _filtering(st: CrawlStats, style: TableStyle) -> Table:
    """Seed 002 Table 2, by page type (a crawl with --script)."""
    none = style.reduction_of_none

    def reduction(before: int, share: float) -> str:
        return none if none is not None and not before else _pct(share)

    return Table(
        style.titles["filtering"],
        ("page type", "pages", *style.links, "reduction"),
        tuple(
            (
                r.page_type,
                _n(r.pages),
                _n(r.links_before),
                _n(r.links_after),
                reduction(r.links_before, r.reduction),
            )
            for r in st.link_filtering
        ),
        (False, True, True, True, True),
    )


def _hosts(st: CrawlStats, style: TableStyle) -> Table:
    distinct = style.host_distinct
    return Table(
        style.titles["hosts"],
        ("host", "requested", "downloaded", *(("distinct",) if distinct else ()), "bytes"),
        tuple(
            (
                h.host,
                _n(h.requested),
                _n(h.downloaded),
                *((_n(h.distinct),) if distinct else ()),
                style.host_bytes(h.bytes),
            )
            for h in st.top_hosts
        ),
        (False, True, True, True, *((True,) if distinct else ())),
    )


def _canonicals(st: CrawlStats, style: TableStyle) -> Table | None:
    """RFC 6596 declarations of the downloaded documents (a crawl that kept them)."""
    c = st.canonicals
    if c is None or not c.declaring:
        return None
    share, sub = style.share, style.sub
    return Table(
        style.titles["canonicals"],
        ("", "documents", "share"),
        (
            ("declare a canonical URL", _n(c.declaring), share(c.declaring, c.documents)),
            (f"{sub}their own URL", _n(c.own), share(c.own, c.declaring)),
            (f"{sub}a URL on another host", _n(c.other_host), share(c.other_host, c.declaring)),
            (style.fetched_label, _n(c.fetched), ""),
            (f"{sub}answering other than 200", _n(c.non_200), share(c.non_200, c.fetched)),
            (f"{sub}of which redirects", _n(c.redirect), share(c.redirect, c.fetched)),
        ),
        (False, True, True),
    )


def _learned(st: CrawlStats, style: TableStyle) -> Table | None:
    """The rules ``crawl --learn`` learned, per host (docs/learning.md)."""
    if not st.learned:
        return None
    details = style.rule_details
    rows = []
    for r in st.learned:
        if details:
            when = f"{r.learned_after:.1f} s (page {r.learned_fetches:,})"
            retracted = f"retracted at {r.retracted_after or 0:.1f} s: {r.reason or ''}"
        else:
            when = f"{r.learned_after:.1f} s, page {r.learned_fetches:,}"
            retracted = f"retracted at {r.retracted_after or 0:.1f} s"
        rows.append(
            (
                r.host,
                r.rule,
                _n(r.support),
                _pct(r.fp_rate),
                *((r.evidence,) if details else ()),
                when,
                _n(r.merged),
                _n(r.checked),
                "in force" if r.active else retracted,
            )
        )
    active = sum(1 for r in st.learned if r.active)
    title = style.titles["learned"].format(
        active=_n(active),
        retracted=_n(len(st.learned) - active),
        merged=plural(sum(r.merged for r in st.learned if r.active), "URL"),
    )
    evidence = ("evidence",) if details else ()
    return Table(
        title,
        ("host", "rule", "support", "fp", *evidence, "learned", "merged", "checked", "state"),
        tuple(rows),
        (False, False, True, True, *((False,) if details else ()), False, True, True, False),
    )

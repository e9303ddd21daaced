"""Plain-text tables for ``dustless stats`` and ``dustless evaluate`` (pure: values → str)."""

from __future__ import annotations

from collections.abc import Sequence

from dustless.analysis._evaltext import format_evaluation, text_table
from dustless.analysis._stats import CrawlStats, StateCount, StatusCount, status_meaning
from dustless.words import plural

__all__ = ["format_evaluation", "format_stats", "text_table"]


def _n(v: int) -> str:
    return f"{v:,}"


def _pct(v: float) -> str:
    return f"{100 * v:.2f}%"


def _states(title: str, rows: Sequence[StateCount], codes: Sequence[StatusCount] = ()) -> str:
    total = sum(r.count for r in rows)
    body = []
    for r in rows:
        body.append((r.state, _n(r.count), _pct(r.share)))
        if r.state == "code":  # by HTTP status: a redirect is an answer, a 404 an error
            body.extend(
                (f"  {c.status} {status_meaning(c.status)}", _n(c.count), _pct(c.share))
                for c in codes
            )
    body.append(("total", _n(total), _pct(1.0 if total else 0.0)))
    return text_table(title, ("state", "count", "share"), body, (False, True, True))


def _truncated(st: CrawlStats) -> str:
    total = sum(t.count for t in st.truncated)
    reasons = ", ".join(f"{t.reason} {_n(t.count)}" for t in st.truncated)
    return f"Truncated captures (WARC-Truncated): {_n(total)}" + (f" ({reasons})" if total else "")


def format_stats(st: CrawlStats) -> str:
    """The statistics of seed 004 §3, one table after another."""
    parts = [
        f"crawl {st.directory}: {'batch' if len(st.batches) == 1 else 'batches'} "
        f"{', '.join(map(str, st.batches)) or '-'}; "
        f"{plural(st.urls_known, 'URL')} known, {plural(st.seeds_known, 'seed')}, "
        f"{plural(st.hosts, 'host')}; "
        f"{_n(st.requested)} requested, {_n(st.downloaded)} downloaded; "
        f"{st.pages_per_second:,.2f} pages/s",
        _states("Table 1. Seed documents by network state", st.seed_states, st.seed_codes),
        _states("Table 2. All documents by network state", st.document_states, st.document_codes),
        _truncated(st),
        text_table(
            "Table 3. URL string lengths (downloaded documents)",
            ("", "count", "min", "max", "mean"),
            [
                (f"{r.kind} URL", _n(r.count), _n(r.min), _n(r.max), f"{r.mean:.2f}")
                for r in st.url_lengths
            ],
            (False, True, True, True, True),
        ),
        text_table(
            "Table 4. Seed URL forms",
            ("form", "seeds", "share"),
            [(f'"{f.form}"', _n(f.count), _pct(f.share)) for f in st.seed_forms],
            (False, True, True),
        ),
        text_table(
            f"Table 5. Document sizes (mean {st.mean_size:,.0f} bytes, largest "
            f"{plural(st.max_size, 'byte')})",
            ("size", "documents"),
            [(b.label, _n(b.count)) for b in st.sizes],
            (False, True),
        ),
        text_table(
            "Fig. 4. Storage: compressed (stored) vs uncompressed payloads",
            ("WARC file", "records", "uncompressed", "stored", "ratio"),
            [
                (
                    r.file,
                    _n(r.records),
                    _n(r.raw_bytes),
                    _n(r.stored_bytes),
                    f"{r.stored_bytes / r.raw_bytes:.3f}" if r.raw_bytes else "-",
                )
                for r in st.storage
            ]
            + [
                (
                    "total",
                    _n(sum(r.records for r in st.storage)),
                    _n(st.raw_bytes),
                    _n(st.stored_bytes),
                    f"{st.stored_bytes / st.raw_bytes:.3f}" if st.raw_bytes else "-",
                )
            ],
            (False, True, True, True, True),
        ),
        text_table(
            "Table 6. Documents by depth",
            ("depth", "requested", "downloaded", "internal links", "per document"),
            [
                (
                    str(d.depth),
                    _n(d.requested),
                    _n(d.downloaded),
                    _n(d.internal_links),
                    f"{d.links_per_document:.2f}",
                )
                for d in st.depths
            ],
            (True, True, True, True, True),
        ),
        text_table(
            "Table 13. Downloaded documents by link kind (h other, a anchor, f frame)",
            ("kind", "documents", "share"),
            [(k.kind, _n(k.documents), _pct(k.share)) for k in st.link_kinds],
            (False, True, True),
        ),
        *_link_filtering(st),
        f"Documents: {plural(st.documents, 'complete 2xx download')}, "
        f"{_n(st.distinct_documents)} distinct ("
        + ("near-duplicate text" if st.content == "near" else "payload SHA-1")
        + f", --content {st.content}); "
        + plural(st.documents - st.distinct_documents, "duplicate")
        + f"; soft 404s {_n(st.soft404s)} (200 pages saying the URL is missing: not counted)",
        text_table(
            "Top hosts",
            ("host", "requested", "downloaded", "distinct", "bytes"),
            [
                (h.host, _n(h.requested), _n(h.downloaded), _n(h.distinct), _n(h.bytes))
                for h in st.top_hosts
            ],
            (False, True, True, True, True),
        ),
        *_canonicals(st),
        *_learned(st),
    ]
    return "\n\n".join(parts) + "\n"


def _canonicals(st: CrawlStats) -> list[str]:
    """RFC 6596 declarations of the downloaded documents (a crawl that kept them)."""
    c = st.canonicals
    if c is None or not c.declaring:
        return []
    return [
        text_table(
            "Canonical links (RFC 6596) declared by the downloaded documents",
            ("", "documents", "share"),
            [
                ("declare a canonical URL", _n(c.declaring), _pct(c.declaring / c.documents)),
                ("  their own URL", _n(c.own), _pct(c.own / c.declaring)),
                ("  a URL on another host", _n(c.other_host), _pct(c.other_host / c.declaring)),
                ("declared URLs fetched", _n(c.fetched), ""),
                (
                    "  answering other than 200",
                    _n(c.non_200),
                    _pct(c.non_200 / c.fetched) if c.fetched else "-",
                ),
                (
                    "  of which redirects",
                    _n(c.redirect),
                    _pct(c.redirect / c.fetched) if c.fetched else "-",
                ),
            ],
            (False, True, True),
        )
    ]


def _learned(st: CrawlStats) -> list[str]:
    """The rules ``crawl --learn`` learned, per host (docs/learning.md)."""
    if not st.learned:
        return []
    rows = []
    for r in st.learned:
        when = f"{r.learned_after:.1f} s, page {r.learned_fetches:,}"
        state = "in force" if r.active else f"retracted at {r.retracted_after or 0:.1f} s"
        merged, checked = _n(r.merged), _n(r.checked)
        rows.append((r.host, r.rule, _n(r.support), _pct(r.fp_rate), when, merged, checked, state))
    active = sum(1 for r in st.learned if r.active)
    title = (
        f"Rules learned while crawling: {_n(active)} in force, {_n(len(st.learned) - active)} "
        f"retracted; {plural(sum(r.merged for r in st.learned if r.active), 'URL')} merged"
    )
    return [
        text_table(
            title,
            ("host", "rule", "support", "fp", "learned", "merged", "checked", "state"),
            rows,
            (False, False, True, True, False, True, True, False),
        )
    ]


def _link_filtering(st: CrawlStats) -> list[str]:
    """Seed 002 Table 2, by page type; only for a crawl with --script."""
    if not st.scripted:
        return []
    return [
        text_table(
            "Seed 002 Table 2. Links before and after URL pattern filtering, by page type",
            ("page type", "pages", "before", "after", "reduction"),
            [
                (
                    r.page_type,
                    _n(r.pages),
                    _n(r.links_before),
                    _n(r.links_after),
                    _pct(r.reduction) if r.links_before else "-",
                )
                for r in st.link_filtering
            ],
            (False, True, True, True, True),
        )
    ]

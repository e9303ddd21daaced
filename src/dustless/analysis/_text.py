"""Plain-text tables for ``dustless stats`` and ``dustless evaluate`` (pure: values → str)."""

from __future__ import annotations

from collections.abc import Sequence

from dustless.analysis._evaluate import Evaluation, RowDetail, paper_figures
from dustless.analysis._stats import CrawlStats, StateCount, StatusCount, status_meaning

__all__ = ["format_evaluation", "format_stats", "text_table"]


def text_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] = ()
) -> str:
    """A table with aligned columns; ``right`` marks right-aligned (numeric) columns."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            r = i < len(right) and right[i]
            out.append(cell.rjust(widths[i]) if r else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([title, line(headers), sep, *(line(r) for r in rows)])


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


def format_stats(st: CrawlStats) -> str:
    """The statistics of seed 004 §3, one table after another."""
    parts = [
        f"crawl {st.directory}: batches {', '.join(map(str, st.batches)) or '-'}; "
        f"{_n(st.urls_known)} URLs known, {_n(st.seeds_known)} seeds, {_n(st.hosts)} hosts; "
        f"{_n(st.requested)} requested, {_n(st.downloaded)} downloaded; "
        f"{st.pages_per_second:.2f} pages/s",
        _states("Table 1. Seed documents by network state", st.seed_states, st.seed_codes),
        _states("Table 2. All documents by network state", st.document_states, st.document_codes),
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
            f"Table 5. Document sizes (mean {st.mean_size:,.0f} bytes, largest {st.max_size:,})",
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
        text_table(
            "Top hosts",
            ("host", "requested", "downloaded", "bytes"),
            [(h.host, _n(h.requested), _n(h.downloaded), _n(h.bytes)) for h in st.top_hosts],
            (False, True, True, True),
        ),
    ]
    return "\n\n".join(parts) + "\n"


def _rate(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _pairs(n: int | None) -> str:
    return "" if n is None else f" ({n:,})"


def _wrong_merges(d: RowDetail | None) -> str:
    if d is None or d.wrong_merge_share is None:
        return "-"
    if not d.merged_pairs:
        return "- (0)"
    return f"{d.wrong_merge_share:.3f} ({d.false_positives:,}/{d.merged_pairs:,})"


def format_evaluation(ev: Evaluation, *, truth: bool | None = None) -> str:
    """Table 1 of seed 000 for this crawl, with the paper's figures beside it."""
    show_truth = ev.truth_file is not None if truth is None else truth
    paper = paper_figures()
    headers = [
        "factor",
        "method",
        "redundancy",
        "cov.loss",
        "paper R/L",
        "cand.URLs",
        "sets",
        "requests",
        "downloads",
        "unique",
    ]
    if show_truth:
        headers += ["true FP (pairs)", "true FN (pairs)", "wrong/merged"]
    detail = {(d.factor, d.method): d for d in ev.details}
    rows = []
    last = ""
    for r in ev.rows:
        p = paper.get((r.factor, r.method))
        d = detail.get((r.factor, r.method))
        row = [
            r.factor if r.factor != last else "",
            r.method,
            _rate(r.redundancy_rate),
            _rate(r.coverage_loss_rate) + ("" if r.coverage_loss_measured else "*"),
            "-" if p is None else f"{p[0]:.2f}/{p[1]:.2f}",
            _n(r.candidate_urls),
            _n(r.sets),
            _n(r.requests),
            _n(r.downloads),
            _n(r.unique_documents),
        ]
        if show_truth:
            row += [
                _rate(r.true_fp_rate, 3) + _pairs(None if d is None else d.false_positives),
                _rate(r.true_fn_rate, 3) + _pairs(None if d is None else d.false_negatives),
                _wrong_merges(d),
            ]
        rows.append(row)
        last = r.factor
    right = [False, False] + [True] * (len(headers) - 2)
    out = [
        f"crawl {ev.directory}: {_n(ev.urls)} URLs requested (standard form), "
        f"{_n(ev.downloaded)} with a document"
        + (f"; {_n(ev.probe_fetches)} normalized forms fetched" if ev.probe_fetches else ""),
        text_table("Redundancy and coverage loss (seed 000 Table 1)", headers, rows, right),
    ]
    if ev.estimated:
        out.append(
            "* estimate: normalized forms the crawl never requested count as lost (an upper "
            "bound); `dustless evaluate --fetch` requests them to measure the loss."
        )
    if show_truth:
        out.append(
            "true FP: different resources merged / different-resource pairs; true FN: same "
            "resource kept apart / same-resource pairs — pairs within the candidate sets, "
            "counts in brackets (--truth). wrong/merged: the share of the pairs a method "
            "merges that are different resources (a method merging whole sets has true FP 1 "
            "as soon as a set holds two resources; this says how often its merges are wrong)."
        )
    rec = ev.recommendation
    choices = ", ".join(f"{f} {m}" for f, m in rec.choices) or "none"
    out.append(
        f"recommended policy (coverage loss <= {rec.max_loss:g} per method): {rec.policy}\n"
        f"  methods: {choices}; largest loss {rec.coverage_loss:.3f}; "
        f"{_n(rec.duplicates_removed)} duplicate downloads removed"
    )
    return "\n\n".join(out) + "\n"


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

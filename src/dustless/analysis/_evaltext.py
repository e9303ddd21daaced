"""``dustless evaluate`` as text (pure: an Evaluation in, a string out), within 100 columns."""

from __future__ import annotations

from collections.abc import Sequence

from dustless.analysis._evaltypes import Evaluation, EvaluationRow, RowDetail
from dustless.analysis._recommend import PAPER_TABLE_1

__all__ = ["format_evaluation", "text_table"]

WIDTH = 100


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


def _rate(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _wrap(text: str, indent: str = "  ") -> str:
    """``text`` folded at word boundaries to :data:`WIDTH` columns."""
    lines: list[str] = []
    body = text.lstrip(" ")
    current = text[: len(text) - len(body)]
    start = len(current)
    for word in body.split(" "):
        if len(current) > start and len(current) + 1 + len(word) > WIDTH:
            lines.append(current)
            current = indent + word
            start = len(indent)
        else:
            current = f"{current} {word}" if len(current) > start else current + word
    lines.append(current)
    return "\n".join(lines)


def _paper() -> dict[tuple[str, str], tuple[float, float]]:
    return {(p.factor, p.method): (p.redundancy_rate, p.coverage_loss_rate) for p in PAPER_TABLE_1}


def _table(title: str, rows: Sequence[EvaluationRow], paper: bool) -> str:
    figures = _paper()
    headers = ["factor", "method", "redund.", "loss", "paper R/L", "cand.URLs", "sets"]
    headers += ["downloads", "unique"]
    body = []
    last = ""
    for r in rows:
        p = figures.get((r.factor, r.method)) if paper else None
        body.append(
            [
                r.factor if r.factor != last else "",
                r.method,
                _rate(r.redundancy_rate),
                _rate(r.coverage_loss_rate) + ("" if r.coverage_loss_measured else "*"),
                "-" if p is None else f"{p[0]:.2f}/{p[1]:.2f}",
                _n(r.candidate_urls),
                _n(r.sets),
                _n(r.downloads),
                _n(r.unique_documents),
            ]
        )
        last = r.factor
    if not paper:
        headers.pop(4)
        for row in body:
            row.pop(4)
    return text_table(title, headers, body, [False, False] + [True] * (len(headers) - 2))


def _truth_table(rows: Sequence[EvaluationRow], details: Sequence[RowDetail]) -> str:
    detail = {(d.factor, d.method): d for d in details}
    body = []
    last = ""
    for r in rows:
        d = detail.get((r.factor, r.method))
        if d is None or d.true_pairs is None:
            continue
        merged = d.merged_pairs or 0
        body.append(
            (
                r.factor if r.factor != last else "",
                r.method,
                _n(d.true_pairs),
                _n(merged),
                _n(d.false_positives or 0),
                _rate(d.wrong_merge_share, 3) if merged else "-",
                _n(d.false_negatives or 0),
                _rate(r.true_fn_rate, 3),
            )
        )
        last = r.factor
    return text_table(
        "Against the truth: URL pairs within the candidate sets",
        ("factor", "method", "pairs", "merged", "wrong", "wrong/merged", "apart", "FN rate"),
        body,
        (False, False, True, True, True, True, True, True),
    )


def _header(ev: Evaluation) -> str:
    content = (
        "near-duplicate text (--content near)"
        if ev.content == "near"
        else "payload SHA-1 (--content exact)"
    )
    reading = (
        f"as the crawler fetches (first spelling, then up to {ev.spelling_tries} in all)"
        if ev.reading == "crawler"
        else "as the paper reads it (normalized forms requested)"
    )
    text = (
        f"crawl {ev.directory}: {_n(ev.urls)} URLs requested (standard form), "
        f"{_n(ev.downloaded)} with a document"
        + (f"; {_n(ev.probe_fetches)} normalized forms fetched" if ev.probe_fetches else "")
        + f"; soft 404s {_n(ev.soft404s)} (no document, not counted)"
        + f". Same document: {content}; coverage loss {reading}."
    )
    if ev.identity == "truth":
        text += (
            f" Figures from the truth ({ev.truth_file}): documents are its resources; 404s, "
            "errors and redirects are none."
        )
    return _wrap(text)


def _canonical_table(ev: Evaluation) -> str:
    """The canonical row: each method against the pages' rel=canonical declarations."""
    body = []
    last = ""
    for r in ev.canonical:
        if not r.declarations:
            continue
        body.append(
            [
                r.factor if r.factor != last else "",
                r.method,
                f"{r.merged:,}/{r.declared_same:,}",
                f"{r.kept_apart:,}/{r.declared_apart:,}",
                "-" if r.agreement is None else f"{r.agreement:.2f}",
            ]
        )
        last = r.factor
    if not body:
        return "canonical: no page declares another spelling of a candidate set canonical"
    return text_table(
        "canonical: agreement with the pages' rel=canonical declarations (RFC 6596)",
        ["factor", "method", "one: merged", "apart: kept", "agreement"],
        body,
        [False, False, True, True, True],
    )


def _host_part(ev: Evaluation) -> list[str]:
    out = []
    policy = {p.host: p for p in ev.site_policy}
    for host in dict.fromkeys(r.host for r in ev.host_rows):
        if host is None:
            continue
        factors = {r.factor for r in ev.host_rows if r.host == host and r.sets}
        rows = [r for r in ev.host_rows if r.host == host and r.factor in factors]
        if not rows:
            continue
        p = policy.get(host)
        choices = ", ".join(f"{f} {m}" for f, m in p.choices) if p and p.choices else "none"
        out.append(_table(f"Host {host}", rows, paper=False))
        if p is not None:
            out.append(
                _wrap(
                    f"  {host}: recommended {choices}; largest loss {p.coverage_loss:.3f}; "
                    f"{_n(p.duplicates_removed)} duplicate downloads removed"
                )
            )
    return out


def _unexplained_part(ev: Evaluation) -> str:
    u = ev.unexplained
    assert u is not None
    judge = "the truth" if ev.identity == "truth" else f"{ev.content} content"
    text = (
        f"unexplained duplicates: {_n(u.unexplained)} of {_n(u.duplicates)} duplicate "
        f"fetches ({u.unexplained_share:.0%}, by {judge}) that no factor's method merges"
    )
    if u.soft404_classes:
        text += (
            f"; {_n(u.soft404_classes)} pages served by many unrelated URLs "
            f"({_n(u.soft404_fetches)} fetches) read as soft 404s, not counted"
        )
    lines = [_wrap(text)]
    lines += [_wrap(f"  {a}  =  {b}", "    ") for a, b in u.examples]
    return "\n".join(lines)


def format_evaluation(ev: Evaluation, *, by_host: bool = False) -> str:
    """Table 1 of seed 000 for this crawl (the paper's figures beside it), per host with
    ``by_host``, the site policy, and — with the truth — where the estimate is off."""
    out = [_header(ev), _table("Redundancy and coverage loss (seed 000 Table 1)", ev.rows, True)]
    if ev.estimated:
        out.append(
            _wrap(
                "* estimate: normalized forms the crawl never requested count as lost (an "
                "upper bound); `dustless evaluate --fetch` requests them to measure the loss."
            )
        )
    if ev.unexplained is not None:
        out.append(_unexplained_part(ev))
    if ev.identity == "truth":
        out.append(_truth_table(ev.rows, ev.details))
        out.append(
            _wrap(
                "wrong: pairs of different resources a method merges (wrong/merged: their "
                "share of its merges); apart: pairs of one resource it keeps apart."
            )
        )
    if ev.canonical:
        out.append(_canonical_table(ev))
    if by_host:
        out.extend(_host_part(ev))
    if ev.disagreements:
        lines = [
            f"The content estimate ({ev.content}) differs from the truth by more than 0.05 in "
            f"{len(ev.disagreements)} rows:"
        ]
        for d in ev.disagreements[:20]:
            lines.append(
                f"  {d.host or 'all hosts'} {d.factor} {d.method}: {d.what} "
                f"truth {d.truth:.3f}, content {d.content:.3f}"
            )
        if len(ev.disagreements) > 20:
            lines.append(f"  … and {len(ev.disagreements) - 20} more (--json lists them all)")
        out.append("\n".join(lines))
    rec = ev.recommendation
    choices = ", ".join(f"{f} {m}" for f, m in rec.choices) or "none"
    out.append(
        _wrap(
            f"recommended policy (coverage loss <= {rec.max_loss:g} per method, all hosts): "
            f"{rec.policy}"
        )
        + "\n"
        + _wrap(
            f"  methods: {choices}; largest loss {rec.coverage_loss:.3f}; "
            f"{_n(rec.duplicates_removed)} duplicate downloads removed"
        )
    )
    hosts = [p for p in ev.site_policy if p.choices]
    if ev.site_policy:
        lines = [
            f"site policy (per host, loss <= {rec.max_loss:g}; --rules-out writes it for "
            "crawl --rules):"
        ]
        for p in hosts:
            lines.append(_wrap(f"  {p.host}: " + ", ".join(f"{f} {m}" for f, m in p.choices)))
        rest = len(ev.site_policy) - len(hosts)
        if rest:
            lines.append(f"  {rest} other hosts: nothing to merge within the budget")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"

"""The report's per-host section: every evaluate row per host, and the site policy (pure).

Seed 000 §4.1: case folding is right on Windows servers and wrong on Unix ones, and a
``www`` host is sometimes the same site and sometimes another; one crawl-wide row hides
which host gains and which loses. This section shows each host's rows (factors with
candidate sets only), the methods recommended for it under the loss budget (what
``evaluate --rules-out`` writes for ``crawl --rules``), and, with the truth, the rows where
the content estimate and the truth disagree.
"""

from __future__ import annotations

from dustless.analysis import Evaluation
from dustless.report._page import Paragraph, Section, Table

__all__ = ["host_sections"]


def _rate(v: float) -> str:
    return f"{v:.2f}"


def host_sections(ev: Evaluation) -> list[Section]:
    """One section, or none for an evaluation without per-host rows (an old JSON file)."""
    if not ev.host_rows:
        return []
    policy = tuple(
        (
            p.host,
            ", ".join(f"{f}: {m}" for f, m in p.choices),
            f"{p.coverage_loss:.3f}",
            f"{p.duplicates_removed:,}",
        )
        for p in ev.site_policy
        if p.choices
    )
    same = "near-duplicate text" if ev.content == "near" else "the same payload SHA-1"
    blocks: list[Paragraph | Table] = [
        Paragraph(
            f"Per host (seed 000 §4.1: servers differ). The same document: {same}; coverage "
            + (
                "loss as the crawler fetches (first spelling, then the next ones)."
                if ev.reading == "crawler"
                else "loss as the paper reads it (normalized forms requested)."
            )
        ),
        Table(
            f"Site policy: methods per host within a coverage-loss budget of "
            f"{ev.recommendation.max_loss:g} (dustless evaluate --rules-out FILE writes them)",
            ("host", "methods", "largest loss", "duplicates removed"),
            policy,
            (False, False, True, True),
        ),
        _host_table(ev),
    ]
    if ev.disagreements:
        blocks.append(
            Table(
                "Where the content estimate and the truth differ by more than 0.05",
                ("host", "factor", "method", "figure", "truth", "content"),
                tuple(
                    (
                        d.host or "all hosts",
                        d.factor,
                        d.method,
                        d.what,
                        f"{d.truth:.3f}",
                        f"{d.content:.3f}",
                    )
                    for d in ev.disagreements
                ),
                (False, False, False, False, True, True),
            )
        )
    return [Section("hosts", "Per host: what each method costs and saves", tuple(blocks))]


def _host_table(ev: Evaluation) -> Table:
    """Each method's rates per host, for the hosts where a factor has candidate sets."""
    with_sets = {(r.host, r.factor) for r in ev.host_rows if r.sets}
    detail = {(d.host, d.factor, d.method): d for d in ev.host_details}
    rows = []
    for r in ev.host_rows:
        if (r.host, r.factor) not in with_sets:
            continue
        d = detail.get((r.host, r.factor, r.method))
        rows.append(
            (
                r.host or "",
                r.factor,
                r.method,
                _rate(r.redundancy_rate),
                _rate(r.coverage_loss_rate) + ("" if r.coverage_loss_measured else " (est.)"),
                f"{r.sets:,}",
                f"{r.downloads:,}",
                f"{r.unique_documents:,}",
                "–" if d is None else f"{d.duplicates_removed:,}",
            )
        )
    return Table(
        "Redundancy and coverage loss per host",
        (
            "host",
            "factor",
            "method",
            "redundancy",
            "coverage loss",
            "sets",
            "downloads",
            "unique docs",
            "duplicates removed",
        ),
        tuple(rows),
        (False, False, False, True, True, True, True, True, True),
    )

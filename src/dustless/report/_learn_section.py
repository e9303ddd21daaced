"""The report's section on learning while crawling and canonical links (pure).

Per host, the rules ``crawl --learn`` learned — each with its support and measured
false-positive rate when accepted, where its evidence came from, when it was learned (seconds
into the crawl and after how many pages), how many URLs it merged and how many of its merges
were fetched anyway to check it, and whether it is still in force or was retracted, and why
— and the canonical URLs the documents declared (RFC 6596): the evidence a user checks
before keeping the learned rules (docs/learning.md).
"""

from __future__ import annotations

from dustless.analysis import CrawlStats
from dustless.report._page import Paragraph, Section, Table

__all__ = ["learning_sections"]


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def learning_sections(st: CrawlStats) -> list[Section]:
    """One section, or none for a crawl that neither learned nor kept canonical links."""
    blocks: list[Paragraph | Table] = []
    if st.learned:
        active = [r for r in st.learned if r.active]
        blocks.append(
            Paragraph(
                f"{len(active)} rules learned while crawling are in force, "
                f"{len(st.learned) - len(active)} were retracted (their merges were admitted "
                "again); they are in learned-rules.xml, which `dustless crawl --rules` reuses."
            )
        )
        blocks.append(
            Table(
                "Rules learned per host",
                (
                    "host",
                    "rule",
                    "support",
                    "fp",
                    "evidence",
                    "learned",
                    "merged",
                    "checked",
                    "state",
                ),
                tuple(
                    (
                        r.host,
                        r.rule,
                        f"{r.support:,}",
                        f"{100 * r.fp_rate:.2f}%",
                        r.evidence,
                        f"{r.learned_after:.1f} s (page {r.learned_fetches:,})",
                        f"{r.merged:,}",
                        f"{r.checked:,}",
                        "in force"
                        if r.active
                        else f"retracted at {r.retracted_after or 0:.1f} s: {r.reason or ''}",
                    )
                    for r in st.learned
                ),
                (False, False, True, True, False, False, True, True, False),
            )
        )
    c = st.canonicals
    if c is not None and c.declaring:
        blocks.append(
            Table(
                "Canonical links (RFC 6596) of the downloaded documents",
                ("", "documents", "share"),
                (
                    ("declare a canonical URL", f"{c.declaring:,}", _pct(c.declaring, c.documents)),
                    ("… their own URL", f"{c.own:,}", _pct(c.own, c.declaring)),
                    (
                        "… a URL on another host",
                        f"{c.other_host:,}",
                        _pct(c.other_host, c.declaring),
                    ),
                    ("declared URLs the crawl fetched", f"{c.fetched:,}", ""),
                    ("… answering other than 200", f"{c.non_200:,}", _pct(c.non_200, c.fetched)),
                    ("… of which redirects", f"{c.redirect:,}", _pct(c.redirect, c.fetched)),
                ),
                (False, True, True),
            )
        )
    if not blocks:
        return []
    return [Section("learning", "Learned rules and canonical links", tuple(blocks))]

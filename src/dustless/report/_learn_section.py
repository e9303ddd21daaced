"""The report's section on learning while crawling and canonical links (pure).

Per host, the rules ``crawl --learn`` learned — each with its support and measured
false-positive rate when accepted, where its evidence came from, when it was learned (seconds
into the crawl and after how many pages), how many URLs it merged and how many of its merges
were fetched anyway to check it, and whether it is still in force or was retracted, and why
— and the canonical URLs the documents declared (RFC 6596): the evidence a user checks
before keeping the learned rules (docs/learning.md).
"""

from __future__ import annotations

from dustless.analysis import CrawlStats, StatTables, Table
from dustless.report._page import Paragraph, Section

__all__ = ["learning_sections"]


def learning_sections(st: CrawlStats, t: StatTables) -> list[Section]:
    """One section, or none for a crawl that neither learned nor kept canonical links: the
    tables of ``stat_tables`` (``t``, of ``st``), the learned rules' with what they mean."""
    blocks: list[Paragraph | Table] = []
    if t.learned is not None:
        active = sum(1 for r in st.learned if r.active)
        blocks.append(
            Paragraph(
                f"{active} rules learned while crawling are in force, "
                f"{len(st.learned) - active} were retracted (their merges were admitted "
                "again); they are in learned-rules.xml, which `dustless crawl --rules` reuses."
            )
        )
        blocks.append(t.learned)
    if t.canonicals is not None:
        blocks.append(t.canonicals)
    if not blocks:
        return []
    return [Section("learning", "Learned rules and canonical links", tuple(blocks))]

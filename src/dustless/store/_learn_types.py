"""The store's values for learning while crawling: rules learned per host, and their merges.

``docs/learning.md`` tells the story; ``crawl/learn.py`` writes these rows and reads them back
(on ``--resume``, and from the other workers of a shared crawl).
"""

from __future__ import annotations

from dataclasses import dataclass

from dustless.kinds import LinkKind

__all__ = ["LearnedRuleRow", "MergeRow"]


@dataclass(frozen=True, slots=True)
class LearnedRuleRow:
    """One rule learned for ``host`` (an authority) during the crawl.

    ``spec`` is the rule as JSON (``dustless.rules.rule_spec``), unique per host. The evidence
    at the moment it was accepted: ``support`` independent equal-content groups it merges,
    ``pairs`` merged document pairs of which ``differ`` had different content, and
    ``evidence`` saying where the pairs came from (``content 4, redirect 1, canonical 2``).
    ``learned_at`` is wall-clock time, ``learned_fetches`` how many pages the crawl had
    fetched then. A retracted rule keeps its row, with when and why.
    """

    host: str
    element: str
    spec: str
    support: int
    pairs: int
    differ: int
    evidence: str
    learned_at: float
    learned_fetches: int
    worker: str | None = None
    retracted_at: float | None = None
    reason: str | None = None
    id: int | None = None  # set by the store

    @property
    def active(self) -> bool:
        return self.retracted_at is None


@dataclass(frozen=True, slots=True)
class MergeRow:
    """A URL that rule ``rule_id`` kept from being fetched: a link whose identity the rule
    made one of a stored URL's (admission), or a queued row it merged (``url_id``, state
    ``merged``). ``base`` is the URL's identity without the learned rules; the other fields
    are what admitting it again needs. ``checked``: a merge the crawl fetched anyway, to
    check the rule against it (not kept from being fetched)."""

    rule_id: int
    base: str
    url: str
    host: str
    site: str
    depth: int
    kind: LinkKind
    seed_id: int | None = None
    parent_id: int | None = None
    external: bool = False
    url_id: int | None = None
    checked: bool = False

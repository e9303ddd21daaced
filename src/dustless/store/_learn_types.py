"""The store's values for learning while crawling: rules learned per host, and their merges.

``docs/learning.md`` tells the story; ``crawl/learn.py`` writes these rows and reads them back
(on ``--resume``, and from the other workers of a shared crawl).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dustless.kinds import LinkKind

__all__ = ["MERGE_COLS", "RULE_COLS", "LearnedRuleRow", "MergeRow", "merge_params", "merge_row"]

# The columns of ``learned_rules`` and ``learned_merges`` in the fields' order (both stores).
RULE_COLS = (
    "host, element, spec, support, pairs, differ, evidence, learned_at, learned_fetches, "
    "worker, retracted_at, reason, id"
)
MERGE_COLS = (
    "rule_id, base, url, host, site, depth, kind, seed_id, parent_id, external, url_id, checked"
)
_KINDS = {k.value: k for k in LinkKind}


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


def merge_params(m: MergeRow) -> tuple[object, ...]:
    """A merge as the values of ``MERGE_COLS``."""
    return (
        m.rule_id, m.base, m.url, m.host, m.site, m.depth, m.kind.value, m.seed_id,
        m.parent_id, int(m.external), m.url_id, int(m.checked),
    )  # fmt: skip


def merge_row(r: Sequence[Any]) -> MergeRow:
    """A row of ``MERGE_COLS`` as read back."""
    return MergeRow(
        int(r[0]), r[1], r[2], r[3], r[4], r[5], _KINDS[r[6]], r[7], r[8], bool(r[9]), r[10],
        bool(r[11]),
    )  # fmt: skip

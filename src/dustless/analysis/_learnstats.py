"""What a crawl learned, and what its pages declared canonical (``dustless stats``, report).

Made of the store's rows (``dustless.store``'s named reads), used by ``crawl_stats``:

* :func:`learned_rules` — the rules ``crawl --learn`` learned per host (``learned_rules``):
  each with its support and measured false-positive rate when it was accepted, where the
  evidence came from, when it was learned (seconds into the crawl, and after how many pages),
  how many URLs it kept from being fetched (``learned_merges``) and how many it had fetched
  anyway to check it, and, for a retracted rule,
  when and why (docs/learning.md);
* :func:`canonical_counts` — the canonical URLs the downloaded documents declared (RFC 6596,
  ``fetches.canonical``): how many declare one, one of their own URL, one on another host,
  and — among declared URLs the crawl fetched — how many answered other than 200, or
  redirected. A canonical that is not a 200 page is a misconfiguration search engines
  ignore; these counts show a site's declarations before anyone trusts them.
"""

from __future__ import annotations

from dataclasses import dataclass

from dustless.store import (
    CanonicalReads,
    CrawlReader,
    LearnedRead,
    learned_rule_reads,
    merge_counts,
)
from dustless.url import authority_of

__all__ = [
    "CanonicalCounts",
    "LearnedRow",
    "canonical_counts",
    "learned_rows",
    "learned_rules",
]


@dataclass(frozen=True, slots=True)
class LearnedRow:
    """One rule learned during the crawl, for ``host``."""

    host: str
    rule: str  # as ``rules show`` describes it
    spec: str
    support: int
    fp_rate: float
    evidence: str
    learned_after: float  # seconds since the crawl started
    learned_fetches: int  # pages fetched by then
    merged: int  # URLs it kept from being fetched
    checked: int  # ... and those fetched anyway, to check it
    retracted_after: float | None = None
    reason: str | None = None

    @property
    def active(self) -> bool:
        return self.retracted_after is None


@dataclass(frozen=True, slots=True)
class CanonicalCounts:
    """Documents and their canonical declarations (RFC 6596)."""

    documents: int  # downloaded documents (2xx with a content identity)
    declaring: int  # ... that declare a canonical URL
    own: int  # ... their own URL
    other_host: int  # ... a URL on another host
    fetched: int  # declared URLs (other than their own) the crawl fetched
    non_200: int  # ... that answered other than 200 (redirects included)
    redirect: int  # ... that answered with a redirect (3xx)


def learned_rules(db: CrawlReader) -> tuple[LearnedRow, ...]:
    """Every rule the crawl learned, by host and in the order learned."""
    return learned_rows(
        learned_rule_reads(db),
        merge_counts(db),
        min((b.started_at for b in db.batches), default=0.0),
    )


def learned_rows(
    reads: tuple[LearnedRead, ...], merges: dict[int, tuple[int, int]], t0: float
) -> tuple[LearnedRow, ...]:
    """The store's rows of learned rules as :class:`LearnedRow` (pure); ``merges``: rule id
    -> (URLs merged, of which checked); ``t0``: when the crawl started."""
    from dustless.errors import ScriptError
    from dustless.rules import rule_from_spec

    rows = []
    for r in reads:
        try:
            rule = rule_from_spec(r.spec).describe()
        except ScriptError:
            rule = r.spec  # a rule kind of a newer dustless: shown as stored
        n, checked = merges.get(r.id, (0, 0))
        rows.append(
            LearnedRow(
                str(r.host),
                rule,
                str(r.spec),
                int(r.support),
                int(r.differ) / int(r.pairs) if r.pairs else 0.0,
                str(r.evidence),
                float(r.learned_at) - t0,
                int(r.learned_fetches),
                n - checked,
                checked,
                None if r.retracted_at is None else float(r.retracted_at) - t0,
                r.reason,
            )
        )
    return tuple(rows)


def canonical_counts(reads: CanonicalReads | None) -> CanonicalCounts | None:
    """The canonical declarations of the counted fetches (the store's ``stat_reads``);
    ``None`` for a crawl stored before they were kept."""
    if reads is None:
        return None
    other = sum(authority_of(u) != authority_of(c) for u, c in reads.elsewhere)
    answered = [s for s in reads.statuses if s is not None]
    return CanonicalCounts(
        documents=reads.documents,
        declaring=reads.declaring,
        own=reads.own,
        other_host=other,
        fetched=len(answered),
        non_200=sum(1 for s in answered if s != 200),
        redirect=sum(1 for s in answered if 300 <= s < 400),
    )

"""What a crawl learned, and what its pages declared canonical (``dustless stats``, report).

Two readers over the crawl DB (read-only), used by ``crawl_stats``:

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

from dustless.store import CrawlReader
from dustless.url import authority_of

__all__ = ["CanonicalCounts", "LearnedRow", "canonical_counts", "learned_rules"]


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
    from dustless.errors import ScriptError
    from dustless.rules import rule_from_spec

    if "learned_rules" not in db.tables:
        return ()
    starts = [b.started_at for b in db.batches]
    t0 = min(starts, default=0.0)
    merged: dict[int, int] = {}
    checked: dict[int, int] = {}
    has_checked = "checked" in db.columns("learned_merges")
    for rid, n, c in db.query(
        "SELECT rule_id, count(*), "
        + ("sum(checked)" if has_checked else "0")
        + " FROM learned_merges GROUP BY rule_id"
    ):
        merged[rid] = int(n) - int(c)
        checked[rid] = int(c)
    rows = []
    for (
        rid,
        host,
        spec,
        support,
        pairs,
        differ,
        evidence,
        learned_at,
        fetches,
        retracted_at,
        reason,
    ) in db.query(
        "SELECT id, host, spec, support, pairs, differ, evidence, learned_at, learned_fetches, "
        "retracted_at, reason FROM learned_rules ORDER BY host, id"
    ):
        try:
            rule = rule_from_spec(spec).describe()
        except ScriptError:
            rule = spec  # a rule kind of a newer dustless: shown as stored
        rows.append(
            LearnedRow(
                str(host),
                rule,
                str(spec),
                int(support),
                int(differ) / int(pairs) if pairs else 0.0,
                str(evidence),
                float(learned_at) - t0,
                int(fetches),
                int(merged.get(rid, 0)),
                int(checked.get(rid, 0)),
                None if retracted_at is None else float(retracted_at) - t0,
                reason,
            )
        )
    return tuple(rows)


def canonical_counts(db: CrawlReader, counted: str = "temp.t") -> CanonicalCounts | None:
    """The canonical declarations of the counted fetches (``crawl_stats``' temporary table of
    each URL's last fetch per batch); ``None`` for a crawl stored before they were kept."""
    if "canonical" not in db.columns("fetches"):
        return None
    db.script("DROP TABLE IF EXISTS temp.cn")
    db.script(
        "CREATE TEMP TABLE cn AS SELECT u.url AS url, u.host AS host, f.canonical AS canonical "
        f"FROM {counted} c JOIN fetches f ON f.id = c.id JOIN urls u ON u.id = c.url_id "
        "WHERE c.doc IS NOT NULL"
    )
    documents, declaring, own = db.query(
        "SELECT count(*), count(canonical), "
        "coalesce(sum(CASE WHEN canonical = url THEN 1 ELSE 0 END), 0) FROM temp.cn"
    )[0]
    other = 0
    for url, canonical in db.query(
        "SELECT url, canonical FROM temp.cn WHERE canonical IS NOT NULL AND canonical != url"
    ):
        other += authority_of(str(url)) != authority_of(str(canonical))
    # The declared URLs the crawl fetched, and their last answer.
    db.script("DROP TABLE IF EXISTS temp.ct")
    db.script(
        "CREATE TEMP TABLE ct AS SELECT DISTINCT canonical AS url FROM temp.cn "
        "WHERE canonical IS NOT NULL AND canonical != url"
    )
    statuses = db.query(
        "SELECT (SELECT f.status FROM fetches f WHERE f.url_id = u.id ORDER BY f.id DESC "
        "LIMIT 1) FROM urls u JOIN temp.ct ON ct.url = u.url"
    )
    db.script("DROP TABLE IF EXISTS temp.ct")
    db.script("DROP TABLE IF EXISTS temp.cn")
    answered = [s for (s,) in statuses if s is not None]
    return CanonicalCounts(
        documents=int(documents),
        declaring=int(declaring),
        own=int(own),
        other_host=other,
        fetched=len(answered),
        non_200=sum(1 for s in answered if s != 200),
        redirect=sum(1 for s in answered if 300 <= s < 400),
    )

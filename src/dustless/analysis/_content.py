"""Which content identity a reader uses: near-duplicate classes or exact payload hashes.

``near`` (the default of ``evaluate``, ``stats`` and ``rules learn``): two documents are the
same when their visible text is nearly the same (``dustless.extract.content_fingerprint``,
grouped by :func:`~dustless.analysis._near.near_classes`) — what a user means by "the same
document". ``exact``: the same payload bytes (SHA-1), seed 000 §3's reading and the
crawler's own "content seen?" test. A crawl recorded before fingerprints existed (schema
< 3), and a document without text (an image), fall back to the exact identity.
"""

from __future__ import annotations

from dustless.analysis._near import near_classes
from dustless.store import CrawlReader, fetch_tally, payload_fingerprints

__all__ = ["CONTENT_MODES", "document_classes", "has_fingerprints"]

CONTENT_MODES = ("near", "exact")


def has_fingerprints(db: CrawlReader) -> bool:
    """Whether the crawl DB has the fingerprint column (schema V3 and later)."""
    return "content_fp" in db.columns("fetches")


# The classes of the last crawl DB asked about: ``report`` (and the statistics benchmark)
# runs ``stats`` and ``evaluate`` on one DB in one process, and grouping a million
# fingerprints is the costliest step of either. Keyed by the DB file and its fetches, so a
# crawl that went on since is grouped again.
_MEMO: dict[tuple[str, int, int], dict[str, str]] = {}


def document_classes(db: CrawlReader, content: str) -> dict[str, str]:
    """``sha1 -> class`` for the payloads whose near class is another payload's (``near``).

    Empty for ``exact`` or a crawl without fingerprints.
    """
    if content != "near" or not has_fingerprints(db):
        return {}
    count, last = fetch_tally(db)
    key = (str(db.path.resolve()), count, last)
    got = _MEMO.get(key)
    if got is None:
        # One fingerprint per payload, the first stored (a revisit stores none). A plain
        # scan and a dict: a GROUP BY over a million fetches took several times as long.
        first: dict[str, bytes] = {}
        keep = first.setdefault
        for sha, fp in payload_fingerprints(db):
            keep(sha, fp)
        rows = first
        got = near_classes(rows)
        _MEMO.clear()
        _MEMO[key] = got
    return got

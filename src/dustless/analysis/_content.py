"""Which content identity a reader uses: near-duplicate classes or exact payload hashes.

``near`` (the default of ``evaluate``, ``stats`` and ``rules learn``): two documents are the
same when their visible text is nearly the same (``dustless.extract.content_fingerprint``,
grouped by :func:`~dustless.analysis._near.near_classes`) — what a user means by "the same
document". ``exact``: the same payload bytes (SHA-1), seed 000 §3's reading and the
crawler's own "content seen?" test. A crawl recorded before fingerprints existed (schema
< 3), and a document without text (an image), fall back to the exact identity.
"""

from __future__ import annotations

from collections.abc import Iterable

from dustless.analysis._crawlreader import CrawlDB
from dustless.analysis._near import near_classes

__all__ = ["CONTENT_MODES", "document_classes", "has_fingerprints"]

CONTENT_MODES = ("near", "exact")


def has_fingerprints(db: CrawlDB) -> bool:
    """Whether the crawl DB has the fingerprint column (schema V3 and later)."""
    return any(r[1] == "content_fp" for r in db.query("PRAGMA table_info(fetches)"))


def document_classes(
    db: CrawlDB, content: str, shas: Iterable[str] | None = None
) -> dict[str, str]:
    """``sha1 -> class`` for the payloads whose near class is another payload's (``near``).

    Empty for ``exact`` or a crawl without fingerprints. ``shas``: only these payloads.
    """
    if content != "near" or not has_fingerprints(db):
        return {}
    wanted = None if shas is None else set(shas)
    fps: dict[str, bytes] = {}
    for sha, fp in db.iterate(
        "SELECT content_sha1, content_fp FROM fetches "
        "WHERE content_fp IS NOT NULL AND content_sha1 IS NOT NULL ORDER BY id"
    ):
        if sha not in fps and (wanted is None or sha in wanted):
            fps[sha] = fp
    return near_classes(fps)

"""How a URL came to be known: seed 004 Table 13's link kinds, and the crawler's own.

A top-level module because every layer speaks of them: the extractor finds the first three,
the engine adds the others, the store keeps the letter in ``urls.kind``, statistics count them.
"""

from __future__ import annotations

import enum

__all__ = ["DOCUMENT_KINDS", "LinkKind"]


class LinkKind(enum.Enum):
    """Where a URL was found; the values are the letters stored in the crawl DB."""

    FRAME = "f"  # 004 Table 13: in a <frame>
    ANCHOR = "a"  # 004 Table 13: in an <a href>
    OTHER = "h"  # 004 Table 13: anywhere else in a document (iframe, area, script, refresh …)
    SEED = "s"  # a seed: given, or an outside link that starts a new party (004 §2)
    REDIRECT = "r"  # the target of a redirect (the same document under another URL)


# The kinds a document can hold, in 004 Table 13's order of its "연결 종류" code (h, a, f).
DOCUMENT_KINDS: tuple[LinkKind, ...] = (LinkKind.OTHER, LinkKind.ANCHOR, LinkKind.FRAME)

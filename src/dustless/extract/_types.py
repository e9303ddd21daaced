"""The values ``extract_links`` returns (docs/internals.md, ``dustless.extract``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dustless.kinds import DOCUMENT_KINDS, LinkKind

__all__ = ["Extraction", "Link", "LinkKind"]


@dataclass(frozen=True, slots=True)
class Link:
    """One link occurrence: absolute http(s) URL, kind, anchor text and the raw value."""

    url: str  # resolved against the document's base (dustless.url.resolve)
    kind: LinkKind
    text: str  # anchor text, whitespace collapsed ("" where the element has none)
    raw: str  # the attribute value as written, entities decoded


@dataclass(frozen=True, slots=True)
class Extraction:
    """What a document links to."""

    links: tuple[Link, ...]  # document order, every occurrence
    base: str  # the base URL links were resolved against (<base href> or the URL)
    counts: Mapping[LinkKind, int]  # links per kind, for the fetches table (Table 13)
    scripts: tuple[str, ...]  # javascript: hrefs and onclick texts, for pattern scripts
    # The page had more tags than the budget (extract_links' max_tags): links come from its
    # first part only, and the page cost the budget, not more (a state of its own to record).
    over_budget: bool = False
    # The page was nested or built too hostile to parse as it is (extract._guard): its links
    # were read from it without its structure — all of them, at a cost in proportion to it.
    flattened: bool = False
    # The page's <link rel="canonical"> target (RFC 6596), resolved; None when it declares
    # none or several that disagree (read as evidence, docs/learning.md).
    canonical: str | None = None
    # The document's visible text (extract._visible), when extract_links was asked for it:
    # the near-duplicate fingerprint reads it from the tree already parsed for the links.
    text: str | None = None

    @property
    def link_kinds(self) -> str:
        """004 Table 13's "연결 종류" code: ``haf`` letters present, ``0`` where absent."""
        return "".join(k.value if self.counts.get(k, 0) else "0" for k in DOCUMENT_KINDS)

"""Categories and crawl order: seed 002 §3.4.2, §4.1 and Figs. 10, 13, 14.

Pure helpers the crawler calls per page: which category the page is in (from the anchor
text of the link that points at the page itself, Fig. 13), which of its links stay in that
category (numbered pagination, Fig. 14), and the frontier priority of each link (§3.4.2).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from dustless.url import split_lenient

from ._patterns import Match, PageType

__all__ = [
    "Anchor",
    "PageCategory",
    "Priority",
    "SupportsAnchor",
    "is_pagination_label",
    "page_category",
    "priority",
    "same_category",
]


class Priority(enum.IntEnum):
    """Frontier priority of a link; **lower is sooner** (§3.4.2, Fig. 10).

    "Detail pages are the documents we came for: they go to the top of the list"; then list
    pages of the category being crawled; "the list pages of other categories go to the bottom".
    Links no pattern names come last (on a scripted site they are filtered out anyway).
    """

    DETAIL = 0
    LIST_SAME_CATEGORY = 1
    LIST_OTHER_CATEGORY = 2
    OTHER = 3


def same_category(link: Match, current: Match) -> bool:
    """Same ``class``, and the same category instance when both URLs name one (§3.4.2).

    A detail page usually carries no category id (Fig. 6: ``per_id`` only); from there, a
    list page of the same class counts as the current category.
    """
    if link.category != current.category:
        return False
    return not (link.category_id and current.category_id) or link.category_id == current.category_id


def priority(link: Match | None, current: Match | None = None, *, paginated: bool = False) -> int:
    """The §3.4.2 priority of ``link`` found on a page whose own match is ``current``.

    ``paginated``: the link is a pagination link of the page (``page_category``), which
    §4.1 counts as the same category whatever its URL says. Returns a ``Priority`` (an int).
    """
    if link is None or link.page_type is PageType.OTHER:
        return Priority.OTHER
    if link.page_type is PageType.DETAIL:
        return Priority.DETAIL
    if paginated or (current is not None and same_category(link, current)):
        return Priority.LIST_SAME_CATEGORY
    return Priority.LIST_OTHER_CATEGORY


class SupportsAnchor(Protocol):
    """A link with its anchor text (``dustless.extract.Link`` is one)."""

    @property
    def url(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Anchor:
    url: str
    text: str


@dataclass(frozen=True, slots=True)
class PageCategory:
    """``category``: the anchor text naming the page (Fig. 13), ``None`` if no link names it;
    ``same_category``: the URLs of its pagination links (Fig. 14), in page order."""

    category: str | None
    same_category: tuple[str, ...]


# Fig. 14: "links made of a run of numbers or of particular words" at the foot of a list.
_PAGE_NUMBER = re.compile(r"[\[(<]?\s*\d{1,5}\s*[\])>]?")
_PAGE_WORDS = re.compile(
    r"(?:다음|이전|처음|마지막|맨\s*처음|맨\s*끝|끝)\s*(?:\d+\s*)?(?:개|페이지|쪽)?"
    r"|next|prev(?:ious)?|first|last|more"
    r"|[<>«»‹›◀▶◁▷]{1,2}",
    re.I,
)


def is_pagination_label(text: str) -> bool:
    """``"3"``, ``"[12]"``, ``"다음"``, ``"이전 10개"``, ``"next"``, ``"»"``… (Fig. 14)."""
    label = " ".join(text.split())
    return bool(label) and (
        _PAGE_NUMBER.fullmatch(label) is not None or _PAGE_WORDS.fullmatch(label) is not None
    )


def _without_fragment(url: str) -> str:
    return url.partition("#")[0]


def page_category(
    page_url: str,
    links: Iterable[SupportsAnchor],
    key: Callable[[str], str] = _without_fragment,
) -> PageCategory:
    """Seed 002 §4.1: the page's category and its same-category links.

    "Among the link tags, the one holding the same URL as the current page gives the current
    document's category" (Fig. 13: the breadcrumb's ``프로그래머``). Numbered pagination links
    on the same host lead to the same category (Fig. 14). ``key`` compares URLs; pass the
    normalizer (or ``RuleSet.apply``) to compare identities rather than spellings.
    """
    here = key(page_url)
    host = split_lenient(page_url).host
    category: str | None = None
    same: list[str] = []
    for link in links:
        text = " ".join(link.text.split())
        itself = key(link.url) == here
        if is_pagination_label(text):
            # The current page's own number names no category; other numbers are its pages.
            if not itself and split_lenient(link.url).host == host:
                same.append(link.url)
        elif category is None and text and itself:
            category = text
    return PageCategory(category, tuple(dict.fromkeys(same)))

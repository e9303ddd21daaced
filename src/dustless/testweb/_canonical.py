"""Sites whose canonical declarations are wrong, as real ones are (pure).

RFC 6596 lets a page name its canonical URL; crawlers that learn from these declarations must
survive the sites that get them wrong. Search engines' own guides list the classic mistakes,
and the ``canonical`` profile serves each with its truth (every page a resource of its own):

* ``canon-home``: every page declares the home page canonical (a CMS template bug);
* ``canon-missing``: every page declares a URL that answers 404 (a site that moved);
* ``canon-offsite``: every page declares another site's URL (a copied template);
* ``canon-paging`` (:class:`PagingSite`): list pages ``/news/?page=N`` declare the first
  page canonical, dropping a parameter that matters — page N lists other items, reachable
  from it only.

The first three are ``GeneratedSite``s with a ``cms`` personality (links respelled with a
tracking parameter, ``/dir`` and ``/dir/index.html``: real DUST a learner should still find)
and a wrong ``canonical`` mode; the fourth is its own small site.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from urllib.parse import parse_qsl

from dustless.testweb._core import Link, Outcome, Page, Site, WebConfig, origin, pick
from dustless.testweb._hostile import plain_robots
from dustless.testweb._personality import Personality
from dustless.testweb._sites import NOT_FOUND, GeneratedSite

__all__ = ["CMS", "MISCONFIGURED", "PagingSite", "misconfigured_sites"]

#: a content-management front end: tracking parameters and directory spellings in its links
CMS = Personality("cms", alias_spellings=True, tracking_params=("utm_source",))
#: (host name, canonical mode) of the misconfigured sites, in the order they are built
MISCONFIGURED = (
    ("canon-home.test", "home"),
    ("canon-missing.test", "missing"),
    ("canon-offsite.test", "offsite"),
)
PAGING_HOST = "canon-paging.test"
_SECTIONS = ("news", "docs")
_PER_PAGE = 5
_TAGS = ("intro", "guide", "story", "notes", "review", "digest")


class PagingSite(Site):
    """Two paginated lists and their items; ``?page=N`` declares page 1 canonical."""

    def __init__(self, cfg: WebConfig, address: str = "127.0.0.1") -> None:
        self.cfg = cfg
        self.name = "paging"
        self.personality_name = "canonical-paging"
        self.hosts = (PAGING_HOST,)
        self.address = address
        self.origin = origin(PAGING_HOST, cfg.port)
        self.seeds = (self.origin + "/",)
        self.n_pages = max(3, cfg.pages_per_site // 6)
        self._lists: dict[tuple[str, int], Page] = {}
        self._items: dict[int, Page] = {}
        self._home = self._build()

    def _list_url(self, section: str, n: int) -> str:
        return f"{self.origin}/{section}/" + (f"?page={n}" if n > 1 else "")

    def _build(self) -> Page:
        k = 0
        for section in _SECTIONS:
            for n in range(1, self.n_pages + 1):
                links: list[Link] = []
                for _ in range(_PER_PAGE):
                    k += 1
                    links.append(self._item_link(k, section, n))
                    self._items[k] = self._item(k, section, n)
                # Numbered pagination: page 1 links the next two; page N links the first
                # (as "?page=1", the same page as the list's own URL), the previous and next.
                for m in [2, 3] if n == 1 else [1, n - 1, n + 1]:
                    if 1 <= m <= self.n_pages and m != n:
                        href = f"?page={m}"
                        url = f"{self.origin}/{section}/{href}"
                        links.append(Link(url, f'<a href="{href}">{m}</a>'))
                links.append(Link(self.origin + "/", '<a href="/">home</a>'))
                canonical = self._list_url(section, 1)  # wrong from page 2 on
                self._lists[(section, n)] = Page(
                    rid=f"paging:/{section}/?page={n}",
                    url=self._list_url(section, n),
                    title=f"{section} page {n}",
                    links=tuple(links),
                    head=f'<link rel="canonical" href="{html.escape(canonical)}">\n',
                )
        links = [Link(f"{self.origin}/{s}/", f'<a href="/{s}/">{s}</a>') for s in _SECTIONS] + [
            self._item_link(1, "news", 1)
        ]
        return Page(
            rid="paging:/",
            url=self.origin + "/",
            title="paging home",
            links=tuple(links),
            head=f'<link rel="canonical" href="{self.origin}/">\n',
        )

    def _item(self, k: int, section: str, n: int) -> Page:
        url = f"{self.origin}/item/{k}.html"
        back = self._list_url(section, n)
        return Page(
            rid=f"paging:/item/{k}.html",
            url=url,
            title=f"{pick(_TAGS, self.cfg.seed, 'paging', k)} {k}",
            links=(
                Link(back, f'<a href="{html.escape(back)}">back</a>'),
                Link(self.origin + "/", '<a href="/">home</a>'),
            ),
            head=f'<link rel="canonical" href="{url}">\n',  # right: the item's own URL
        )

    def _item_link(self, k: int, section: str, n: int) -> Link:
        url = f"{self.origin}/item/{k}.html"
        if k % 3 == 1:  # a tracking parameter: the DUST a learner should find here
            url += f"?utm_source={section}{n}"
        href = url[len(self.origin) :]
        return Link(url, f'<a href="{html.escape(href)}">item {k}</a>')

    def pages(self) -> Iterable[Page]:
        yield self._home
        yield from self._lists.values()
        yield from self._items.values()

    def route(self, host: str, path: str, query: str) -> Outcome:
        if path == "/robots.txt":
            return plain_robots(self.name)
        params = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
        if path == "/":
            return Outcome(200, self._home.rid, page=self._home)
        if path.startswith("/item/") and path.endswith(".html"):
            number = path[len("/item/") : -len(".html")]
            item = self._items.get(int(number)) if number.isdigit() else None
            if item is not None:
                return Outcome(200, item.rid, page=item)
            return NOT_FOUND
        for section in _SECTIONS:
            if path == f"/{section}":
                loc = f"{origin(host, self.cfg.port)}/{section}/" + (f"?{query}" if query else "")
                return Outcome(301, "redirect", location=loc, resource=False)
            if path == f"/{section}/":
                raw = params.get("page", "1")
                page = self._lists.get((section, int(raw))) if raw.isdigit() else None
                if page is not None:
                    return Outcome(200, page.rid, page=page)
        return NOT_FOUND


def misconfigured_sites(cfg: WebConfig, address: str, neighbours: tuple[str, ...]) -> list[Site]:
    """The four misconfigured sites of the ``canonical`` profile."""
    sites: list[Site] = [
        GeneratedSite(
            cfg,
            host.split(".")[0],
            host,
            CMS,
            neighbours=neighbours,
            address=address,
            canonical=mode,
        )
        for host, mode in MISCONFIGURED
    ]
    sites.append(PagingSite(cfg, address))
    return sites

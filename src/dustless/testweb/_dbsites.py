"""Database-backed sites for pattern scripts (seed 002), pure.

``www.web.com`` serves exactly the URL patterns of the seed's Fig. 6 pattern script::

    http://www.web.com/list.aspx?cate_id={0}&page={1}     list pages (type "list")
    javascript:show_detail({0})  →  http://www.web.com/detail.aspx?per_id={0}   (type "detail")

with category links carrying anchor text (Fig. 13) and numbered pagination (Fig. 14). The
product site mirrors Fig. 3: ``detail.nhn?cat_id=…&nv_mid=…`` and the same page with the
extra parameters ``&ani=0&tc=2``. Pages are chosen by their ID parameters only; every
other parameter, and the parameters' order, is ignored, as the seed's §3.2 describes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from urllib.parse import parse_qsl

from dustless.testweb._core import (
    KOREAN_WORDS,
    Link,
    Outcome,
    Page,
    Site,
    WebConfig,
    origin,
    stable_hash,
)
from dustless.testweb._hostile import plain_robots
from dustless.testweb._sites import NOT_FOUND

__all__ = ["PRODUCT_HOST", "WEBCOM_HOST", "ProductSite", "WebComSite"]

WEBCOM_HOST = "www.web.com"
PRODUCT_HOST = "shopping.naver.test"
_PER_PAGE = 10
_CATEGORY_IDS = (467, 471, 494, 502, 518, 533)


def _params(query: str) -> dict[str, str]:
    return dict(parse_qsl(query, keep_blank_values=True)) if query else {}


class WebComSite(Site):
    def __init__(self, cfg: WebConfig, address: str = "127.0.0.1") -> None:
        self.cfg = cfg
        self.name = "web"
        self.personality_name = "pattern-script"
        self.hosts = (WEBCOM_HOST,)
        self.address = address
        self.origin = origin(WEBCOM_HOST, cfg.port)
        self.seeds = (f"{self.origin}/list.aspx?cate_id={_CATEGORY_IDS[0]}&page=1",)
        base = max(12, cfg.pages_per_site // 2)  # at least two list pages (Fig. 14)
        # category id -> (name, [per_id, …])
        self.categories: dict[int, tuple[str, list[int]]] = {}
        per_id = 1000
        for i, cid in enumerate(_CATEGORY_IDS):
            count = base + stable_hash(cfg.seed, "web", cid) % 7
            self.categories[cid] = (KOREAN_WORDS[i], list(range(per_id, per_id + count)))
            per_id += count
        self._lists: dict[tuple[int, int], Page] = {}
        self._details: dict[int, Page] = {}
        self._home = self._build()

    def _list_url(self, cid: int, page: int) -> str:
        return f"{self.origin}/list.aspx?cate_id={cid}&page={page}"

    def _category_links(self) -> list[Link]:
        # Fig. 13: category links with anchor text.
        return [
            Link(
                self._list_url(cid, 1),
                f'<a href="list.aspx?cate_id={cid}&amp;page=1" class=" ">{html.escape(name)}</a>',
            )
            for cid, (name, _) in self.categories.items()
        ]

    def _build(self) -> Page:
        for cid, (name, ids) in self.categories.items():
            pages = (len(ids) + _PER_PAGE - 1) // _PER_PAGE
            for p in range(1, pages + 1):
                links = self._category_links()
                for pid in ids[(p - 1) * _PER_PAGE : p * _PER_PAGE]:
                    links.append(
                        Link(
                            f"{self.origin}/detail.aspx?per_id={pid}",
                            f'<a href="javascript:show_detail({pid})">인물 {pid}</a>',
                            "a",
                            crawlable=False,
                        )
                    )
                # Fig. 14: numbered links to the same category, then "다음" (next).
                for k in range(1, pages + 1):
                    if k != p:
                        links.append(
                            Link(
                                self._list_url(cid, k),
                                f'<a href="list.aspx?cate_id={cid}&amp;page={k}">{k}</a>',
                            )
                        )
                if p < pages:
                    links.append(
                        Link(
                            self._list_url(cid, p + 1),
                            f'<a href="list.aspx?cate_id={cid}&amp;page={p + 1}">다음</a>',
                        )
                    )
                rid = f"web:/list.aspx?cate_id={cid}&page={p}"
                self._lists[(cid, p)] = Page(
                    rid=rid,
                    url=self._list_url(cid, p),
                    title=f"{name} {p}",
                    links=tuple(links),
                    head=(
                        "<script>function show_detail(id) "
                        "{ location.href = 'detail.aspx?per_id=' + id; }</script>\n"
                    ),
                    period=3,
                    phase=stable_hash(self.cfg.seed, rid) % 3,
                    lang="ko",
                )
            for pid in ids:
                back = Link(
                    self._list_url(cid, 1),
                    f'<a href="list.aspx?cate_id={cid}&amp;page=1">{html.escape(name)}</a>',
                )
                self._details[pid] = Page(
                    rid=f"web:/detail.aspx?per_id={pid}",
                    url=f"{self.origin}/detail.aspx?per_id={pid}",
                    title=f"인물 {pid}",
                    links=(back,),
                    lang="ko",
                )
        return Page(
            rid="web:/",
            url=self.origin + "/",
            title="사람 찾기",
            links=tuple(self._category_links()),
            lang="ko",
        )

    def pages(self) -> Iterable[Page]:
        yield self._home
        yield from self._lists.values()
        yield from self._details.values()

    def route(self, host: str, path: str, query: str) -> Outcome:
        if path == "/robots.txt":
            return plain_robots(self.name)
        if path in ("/", "/default.aspx"):
            return Outcome(200, self._home.rid, page=self._home)
        q = _params(query)
        try:
            if path == "/list.aspx":
                page = self._lists.get((int(q["cate_id"]), int(q.get("page", "1"))))
            elif path == "/detail.aspx":
                page = self._details.get(int(q["per_id"]))
            else:
                page = None
        except (KeyError, ValueError):
            page = None
        if page is None:
            return NOT_FOUND
        return Outcome(200, page.rid, page=page)


class ProductSite(Site):
    """A shop whose product pages ignore display parameters (seed 002 Fig. 3)."""

    def __init__(self, cfg: WebConfig, address: str = "127.0.0.1") -> None:
        self.cfg = cfg
        self.name = "shop"
        self.personality_name = "product"
        self.hosts = (PRODUCT_HOST,)
        self.address = address
        self.origin = origin(PRODUCT_HOST, cfg.port)
        self.seeds = (self.origin + "/",)
        cats = [f"0004{c:04d}" for c in (102, 103, 201, 305)]
        self._products: dict[tuple[str, str], Page] = {}
        self._cats: dict[str, Page] = {}
        per_cat = max(4, cfg.pages_per_site // 4)
        for c in cats:
            links = []
            for j in range(per_cat):
                mid = str(4045429642 + stable_hash(cfg.seed, "shop", c, j) % 10**8)
                canonical = f"/detail/detail.nhn?cat_id={c}&nv_mid={mid}"
                self._products[(c, mid)] = Page(
                    rid=f"shop:{canonical}",
                    url=self.origin + canonical,
                    title=f"product {mid}",
                    links=(Link(self.origin + "/", '<a href="/">shopping</a>'),),
                    period=(0, 1, 7)[j % 3],
                )
                spelled = canonical
                if j % 2 == 1:
                    spelled += "&ani=0&tc=2"  # the same page, Fig. 3
                elif j % 4 == 2:
                    spelled = f"/detail/detail.nhn?nv_mid={mid}&cat_id={c}&frm=NVSHCAT"
                links.append(
                    Link(self.origin + spelled, f'<a href="{html.escape(spelled)}">{mid}</a>')
                )
            url = f"{self.origin}/search/category.nhn?cat_id={c}"
            self._cats[c] = Page(
                rid=f"shop:/search/category.nhn?cat_id={c}",
                url=url,
                title=f"category {c}",
                links=tuple(links),
                period=2,
            )
        home_links = tuple(
            Link(p.url, f'<a href="{html.escape(p.url[len(self.origin) :])}">{p.title}</a>')
            for p in self._cats.values()
        )
        self._home = Page(rid="shop:/", url=self.origin + "/", title="shopping", links=home_links)

    def pages(self) -> Iterable[Page]:
        yield self._home
        yield from self._cats.values()
        yield from self._products.values()

    def route(self, host: str, path: str, query: str) -> Outcome:
        if path == "/robots.txt":
            return plain_robots(self.name)
        q = _params(query)
        page: Page | None = None
        if path == "/":
            page = self._home
        elif path == "/search/category.nhn":
            page = self._cats.get(q.get("cat_id", ""))
        elif path == "/detail/detail.nhn":
            page = self._products.get((q.get("cat_id", ""), q.get("nv_mid", "")))
        if page is None:
            return NOT_FOUND
        return Outcome(200, page.rid, page=page)

"""The pages of a ``real`` site: main content and links, as the site's software writes them.

:class:`Renderer` builds every page of a :class:`~dustless.testweb._realsites.RealSite`: a
document, the home page, a section index (in any sort order and layout), a calendar or facet
trap page, the soft 404 page. Each comes back as an :class:`Outcome` whose ``render`` builds
the body (``dynamic`` sites: other bytes for every request), and :meth:`Renderer.links`
gives the absolute URL of every link a page holds, for the truth.

How a link is spelled is drawn per page and link (``stable_hash``), never per request: the
same page always holds the same links, whatever host or template shows it.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from dustless.testweb._core import Outcome, origin, stable_hash
from dustless.testweb._realtemplates import View, render

if TYPE_CHECKING:
    from dustless.testweb._realsites import RealSite

__all__ = ["Renderer", "Where", "raw_listing"]

_HTML = "text/html; charset=utf-8"
_DEAD_LINKS = 2  # links to documents the site lacks, per page at most (the rest: text)
_YEARS = range(1990, 2101)  # calendar pages exist for these years; others are missing
_NOTICES = ("Try our new search!", "Docs sprint this Friday", "Survey: tell us more",
            "New release out now", "Mirror maintenance tonight")  # fmt: skip


class Where(NamedTuple):
    """Which host, template and remaining parameters a request asked for."""

    host: str
    twin: bool  # requested on the www twin
    variant: str  # "normal", "print", "mobile", "amp"
    params: tuple[tuple[str, str], ...]


class _Page(NamedTuple):
    title: str
    content: str
    canonical: str  # "" none


class Renderer:
    def __init__(self, site: RealSite) -> None:
        self.site = site
        self.plan = site.plan
        self.port = site.cfg.port

    # -- link spelling ---------------------------------------------------------------------

    def _href(self, path: str, query: str, where: Where, page: str, k: int) -> tuple[str, str]:
        """(href as written, absolute URL) of a link to ``path?query`` on ``page``."""
        plan = self.plan
        h = stable_hash(plan.name, "link", page, k)
        params = [query] if query else []
        if plan.tracking and h % 5 == 0:
            name = plan.tracking[h // 5 % len(plan.tracking)]
            value = format(h >> 40, "x") if name in ("PHPSESSID", "sid") else f"nl{h % 97}"
            params.append(f"{name}={value}")
        if plan.noise and h % 5 == 1:
            a, b = plan.noise
            pair = [f"{a}={h % 3 + 1}", f"{b}={h % 7 + 1}"]
            params += pair if h >> 8 & 1 else pair[::-1]
        written = path
        if plan.jsessionid:
            written += ";jsessionid=" + format(stable_hash(plan.name, "session", page), "X")[:16]
        q = "&".join(params)
        written += f"?{q}" if q else ""
        host = where.host
        named = plan.www != "none" and h % 13 == 0
        if named:
            # a link that names the www spelling, absolute, on every host and template alike
            # (the www twin's pages stay byte-identical to the main host's)
            host = "www." + self.site.host
        elif where.host.startswith("print."):
            host = self.site.host  # a printer host's links lead back to the site
        if named or host != where.host:
            absolute = origin(host, self.port) + written
            return absolute, absolute
        return written, origin(host, self.port) + written

    def _doc_path(self, doc: str, page: str, k: int) -> tuple[str, str]:
        """(path, query) of a link to a document: primary, PHP or moved form."""
        h = stable_hash(self.plan.name, "form", page, k) % 10
        if self.plan.php_form and h < 3:
            return "/index.php", f"page={self.site.section[doc]}/{doc.split('/', 1)[1]}"
        if self.plan.moved and h == 3:
            return f"/doc/{self.site.by_path_slug(doc)}.html", ""
        return self.site.primary_path(doc), ""

    def _a(self, text: str, path: str, query: str, where: Where, page: str, k: int) -> str:
        href = self._href(path, query, where, page, k)[0]
        return f'<a href="{html.escape(href)}">{html.escape(text)}</a>'

    # -- main contents ---------------------------------------------------------------------

    def _document(self, doc_id: str, where: Where) -> _Page:
        site = self.site
        doc = site.twin.get(doc_id) if where.twin else None
        doc = doc or site.docs[doc_id]
        parts = [f"<h1>{html.escape(doc.title)}</h1>"]
        dead = 0
        k = 0
        in_list = False
        for block in doc.blocks:
            if (block.tag == "li") != in_list:
                parts.append("<ul>" if not in_list else "</ul>")
                in_list = not in_list
            inner = []
            for seg in block.segments:
                if isinstance(seg, str):
                    inner.append(html.escape(seg))
                    continue
                text, target = seg
                k += 1
                if target in site.docs:
                    path, query = self._doc_path(target, doc_id, k)
                    inner.append(self._a(text, path, query, where, doc_id, k))
                elif dead < _DEAD_LINKS and target != doc.id:
                    dead += 1
                    inner.append(self._a(text, site.dead_path(target), "", where, doc_id, k))
                else:
                    inner.append(html.escape(text))
            parts.append(f"<{block.tag}>{''.join(inner)}</{block.tag}>")
        if in_list:
            parts.append("</ul>")
        path = site.primary_path(doc_id)
        twin = where.twin and doc_id in site.twin
        host = ("www." if twin else "") + site.host
        return _Page(doc.title, "\n".join(parts), self._canonical(doc_id, host, path, where))

    def _canonical(self, doc_id: str, host: str, path: str, where: Where) -> str:
        plan = self.plan
        section = self.site.section.get(doc_id, "")
        mode = (
            plan.canonical_of(section) if section else ("correct" if plan.canonical else "missing")
        )
        if where.variant == "mobile" and section and section == plan.mobile_wrong_section:
            mode = "wrong"
        if where.variant == "amp" and mode == "missing":
            mode = "correct"  # an AMP page must name its canonical page
        if mode == "missing":
            return ""
        if mode == "wrong":
            return origin(self.site.host, self.port) + "/"
        return origin(host, self.port) + path

    def _home(self, where: Where) -> _Page:
        site, plan = self.site, self.plan
        parts = [f"<h1>{html.escape(site.display)}</h1>",
                 f"<p>Documentation from the {html.escape(plan.package)} package, "
                 f"in {len(plan.sections)} sections.</p>", "<ul>"]  # fmt: skip
        for k, (name, docs) in enumerate(plan.sections, 1):
            first = ", ".join(html.escape(site.docs[d].title) for d in docs[:3])
            a = self._a(name.capitalize(), f"/{name}/", "", where, "/", k)
            parts.append(f"<li>{a}: {first} …</li>")
        parts.append("</ul>")
        if plan.calendar:
            parts.append("<p>" + self._a("Events", "/events/2026/11/", "", where, "/", 0))
        return _Page(site.display, "\n".join(parts), self._canonical("", site.host, "/", where))

    def _section(self, name: str, where: Where) -> _Page:
        site, plan = self.site, self.plan
        docs = list(dict(plan.sections)[name])
        params = dict(where.params)
        grid = False
        if plan.sort_view is not None:
            sort, view = plan.sort_view
            if params.get(sort) == "-title":
                docs.reverse()
            grid = params.get(view) == "grid"
        page = f"/{name}/"
        items = [self._a(site.docs[d].title, *self._doc_path(d, page, k), where, page, k)
                 for k, d in enumerate(docs, 1)]  # fmt: skip
        if grid:
            rows = ["<tr>" + "".join(f"<td>{i}</td>" for i in items[r : r + 3]) + "</tr>"
                    for r in range(0, len(items), 3)]  # fmt: skip
            body = '<table class="grid">' + "\n".join(rows) + "</table>"
        else:
            body = "<ul>" + "\n".join(f"<li>{i}</li>" for i in items) + "</ul>"
        extra = []
        if plan.sort_view is not None:
            sort, view = plan.sort_view
            for k, q in enumerate((f"{sort}=title", f"{sort}=-title", f"{view}=grid"), 900):
                extra.append(self._a(q.split("=")[1], page, q, where, page, k))
        if plan.facets:
            extra.append(self._a("Search by topic", "/search", f"tag={name}", where, page, 990))
        content = f"<h1>{html.escape(name.capitalize())}</h1>\n{body}\n<p>{' | '.join(extra)}</p>"
        return _Page(name.capitalize(), content, self._canonical("", site.host, page, where))

    # -- outcomes --------------------------------------------------------------------------

    def _outcome(self, rid: str, build: Callable[[], _Page], where: Where, path: str,
                 trap: bool = False) -> Outcome:  # fmt: skip
        page = build()
        headers: tuple[tuple[str, str], ...] = ()
        if page.canonical and self.plan.canonical_where == "header" and where.variant != "amp":
            headers = (("Link", f'<{page.canonical}>; rel="canonical"'),)
        counter = itertools.count()

        def body(day: int) -> bytes:
            noise = ""
            if self.plan.dynamic:
                n = next(counter)
                h = stable_hash(self.plan.name, where.host, path, where.params, n)
                noise = (f'<div class="gen">Generated 2026-01-0{h % 9 + 1} '
                         f"{h % 24:02d}:{h // 24 % 60:02d}:{h // 1440 % 60:02d} · request "
                         f'{h:x} · {_NOTICES[n % len(_NOTICES)]}</div>')  # fmt: skip
            return self.html(page, where, path, noise).encode()

        return Outcome(200, rid, render=body, headers=headers, trap=trap, content_type=_HTML,
                       cacheable=True)  # fmt: skip

    def html(self, page: _Page, where: Where, path: str, noise: str = "") -> str:
        site = self.site
        nav = [("/", "Home")] + [(f"/{s}/", s.capitalize()) for s, _ in self.plan.sections]
        nav_items = tuple((self._href(p, "", where, "nav", 0)[0], t) for p, t in nav)
        side: list[tuple[str, str]] = []
        doc = site.by_path.get(path)
        if doc is not None and where.variant in ("normal", "mobile"):
            siblings = dict(self.plan.sections)[site.section[doc]]
            i = siblings.index(doc)
            for d in siblings[max(0, i - 3) : i + 4]:
                if d != doc:
                    side.append(
                        (
                            self._href(site.primary_path(d), "", where, "side", 0)[0],
                            site.docs[d].title,
                        )
                    )
        alternates = tuple(self._alternates(doc, where)) if doc is not None else ()
        head = ""
        if page.canonical and (self.plan.canonical_where == "html" or where.variant == "amp"):
            head = f'<link rel="canonical" href="{html.escape(page.canonical)}">\n'
        view = View(
            site=site.display, skin=self.plan.skin, variant=where.variant, title=page.title,
            content=page.content, nav=nav_items if where.variant != "print" else (),
            sidebar=tuple(side), alternates=alternates, head=head, noise=noise,
            url_text=origin(where.host, self.port) + path,
        )  # fmt: skip
        return render(view)

    def _alternates(self, doc: str, where: Where) -> list[tuple[str, str]]:
        """The links of a document page to its other templates (and back)."""
        plan, site = self.plan, self.site
        path = site.primary_path(doc)
        out: list[tuple[str, str]] = []
        if where.variant != "normal":
            back = origin(site.host, self.port) + path if where.host != site.host else path
            return [(back, "Desktop version")]
        if plan.print_mode == "param":
            out.append((f"{path}?{plan.print_param}", "Print"))
        elif plan.print_mode == "path":
            out.append((f"/print{path}", "Print"))
        elif plan.print_mode == "host":
            out.append((origin("print." + site.host, self.port) + path, "Print"))
        if plan.mobile_mode == "param":
            out.append((f"{path}?{plan.mobile_param}", "Mobile"))
        elif plan.mobile_mode == "host":
            out.append((origin("m." + site.host, self.port) + path, "Mobile"))
        if plan.amp_mode == "param":
            out.append((f"{path}?{plan.amp_param}", "AMP"))
        elif plan.amp_mode == "path":
            out.append((f"/amp{path}", "AMP"))
        return out

    def content(self, doc: str, where: Where) -> str:
        """A document's main content as every template of ``where``'s host shows it."""
        return self._document(doc, where).content

    # -- the pages a site answers ----------------------------------------------------------

    def primary_pages(self) -> list[tuple[str, str]]:
        """(path, resource-id) of the home page, every section and every document."""
        site = self.site
        out = [("/", site.rid("/"))]
        out += [(f"/{s}/", site.rid(f"/{s}/")) for s, _ in self.plan.sections]
        out += [(p, site.rid(p)) for p in site.by_path]
        return out

    def home(self, where: Where) -> Outcome:
        return self._outcome(self.site.rid("/"), lambda: self._home(where), where, "/")

    def section(self, name: str, where: Where) -> Outcome:
        path = f"/{name}/"
        return self._outcome(self.site.rid(path), lambda: self._section(name, where), where, path)

    def document(self, doc: str, where: Where) -> Outcome:
        path = self.site.primary_path(doc)
        rid = self.site.rid(path, twin=where.twin and doc in self.site.twin)
        return self._outcome(rid, lambda: self._document(doc, where), where, path)

    def calendar(self, parts: list[str], where: Where) -> Outcome | None:
        """``/events/YYYY/MM/``: every month links the one before and after, 1990–2100."""
        if len(parts) != 3 or parts[2] or not (parts[0].isdigit() and parts[1].isdigit()):
            return None
        year, month = int(parts[0]), int(parts[1])
        if year not in _YEARS or not 1 <= month <= 12 or len(parts[1]) != 2:
            return None
        path = f"/events/{year}/{month:02d}/"
        prev = (year, month - 1) if month > 1 else (year - 1, 12)
        nxt = (year, month + 1) if month < 12 else (year + 1, 1)

        def build() -> _Page:
            links = [self._a(label, f"/events/{y}/{m:02d}/", "", where, path, k)
                     for k, (label, (y, m)) in enumerate((("« previous", prev), ("next »", nxt)))
                     if y in _YEARS]  # fmt: skip
            content = (f"<h1>Events, {year}-{month:02d}</h1>\n<p>No events this month.</p>\n"
                       f"<p>{' | '.join(links)}</p>")  # fmt: skip
            return _Page(f"Events {year}-{month:02d}", content, "")

        return self._outcome(f"trap:{self.site.name}:{path}", build, where, path, trap=True)

    def facets(self, params: tuple[tuple[str, str], ...]) -> Outcome | None:
        """``/search?tag=A&tag=B…``: each page links every tag added: combinations without end."""
        names = [s for s, _ in self.plan.sections]
        tags = [v for k, v in params if k == "tag"]
        if not tags or any(t not in names for t in tags) or len(params) != len(tags):
            return None
        query = "&".join(f"tag={t}" for t in tags)
        where = Where(self.site.host, False, "normal", params)

        def build() -> _Page:
            hits = [d for s, ds in self.plan.sections if s in tags for d in ds[:10]]
            items = [self._a(self.site.docs[d].title, self.site.primary_path(d), "", where,
                             "/search", k) for k, d in enumerate(hits)]  # fmt: skip
            more = [self._a(f"+ {t}", "/search", f"{query}&tag={t}", where, query, 100 + k)
                    for k, t in enumerate(names) if t != tags[-1]]  # fmt: skip
            content = (
                f"<h1>Topics: {html.escape(', '.join(tags))}</h1>\n<ul><li>"
                + "</li>\n<li>".join(items)
                + "</li></ul>\n<p>"
                + " ".join(more)
                + "</p>"
            )
            return _Page("Search", content, "")

        return self._outcome(f"trap:{self.site.name}:/search?{query}", build, where, "/search",
                             trap=True)  # fmt: skip

    def not_found(self, day: int) -> bytes:
        """The soft 404: a 200 in the site's own template."""
        where = Where(self.site.host, False, "normal", ())
        page = _Page("Page not found",
                     "<h1>Page not found</h1>\n<p>Sorry, the page you asked for is not here. "
                     "It may have moved; try the sections above.</p>", "")  # fmt: skip
        return self.html(page, where, "/__missing__").encode()


def links_in(body: str, base: str) -> list[str]:
    """The absolute URL of every ``href`` of a page this module wrote (always double-quoted)."""
    from urllib.parse import urljoin

    return [urljoin(base, html.unescape(m.group(1))) for m in _HREF.finditer(body)]


_HREF = __import__("re").compile(r'\shref="([^"]*)"')


def raw_listing(files: list[str], query: str) -> bytes:
    """Apache mod_autoindex's listing, with its sort links ``?C=N;O=D`` (all one resource)."""
    column, order = "N", "A"
    for part in query.replace("&", ";").split(";"):
        key, _, value = part.partition("=")
        if key == "C" and value in ("N", "M", "S", "D"):
            column = value
        elif key == "O" and value in ("A", "D"):
            order = value
    rows = sorted(files, key=lambda f: stable_hash("size", f) if column in "SM" else f)
    if order == "D":
        rows.reverse()
    head = "".join(
        f'<th><a href="?C={c};O={"D" if c == column and order == "A" else "A"}">{label}</a></th>'
        for c, label in (("N", "Name"), ("M", "Last modified"), ("S", "Size"), ("D", "Description"))
    )
    lines = "\n".join(
        f'<tr><td><a href="{html.escape(f)}">{html.escape(f)}</a></td>'
        f"<td>2023-02-0{stable_hash('m', f) % 9 + 1} 10:00</td>"
        f"<td>{stable_hash('size', f) % 90 + 2}K</td><td></td></tr>"
        for f in rows
    )
    return (
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<html><head>'
        "<title>Index of /</title></head><body>\n<h1>Index of /</h1>\n"
        f"<table>\n<tr>{head}</tr>\n{lines}\n</table>\n"
        "<address>Apache/2.4.57 (Debian) Server</address>\n</body></html>\n"
    ).encode()

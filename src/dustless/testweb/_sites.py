"""Generated sites: pages, their links, and the personality that routes requests (pure).

A site has a home ``/``, a few section directories ``/news/`` and leaf pages. Links are
written in the spellings its personality produces in the wild (seed 000 §4, seed 001), and
the router answers every spelling the way that kind of server does. Robots and the traps of
``hostile`` sites live in :mod:`dustless.testweb._hostile`.
"""

from __future__ import annotations

import html
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode

from dustless.testweb._core import (
    WORDS,
    Link,
    Outcome,
    Page,
    Site,
    WebConfig,
    origin,
    pick,
    stable_hash,
)
from dustless.testweb._hostile import Hostile, plain_robots
from dustless.testweb._html import TEMPLATED_WORDS, site_chrome
from dustless.testweb._markup import rich_markup
from dustless.testweb._personality import Personality, Www

__all__ = ["NOT_FOUND", "GeneratedSite"]

NOT_FOUND_BODY = (
    b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
    b"<body><h1>Not Found</h1></body></html>\n"
)
NOT_FOUND = Outcome(404, "404", body=NOT_FOUND_BODY, resource=False)

# Change periods in days. Seed 004 Table 12: depth-0 pages change every 7.66 days; Table 13:
# pages with <a> links every 4.36 days, pages with frames or without links almost never.
_HOME_PERIOD = 8
_SECTION_PERIOD = 5
_LEAF_PERIODS = (0, 0, 0, 2, 4, 4, 5, 7, 15)
# Words of text by page style: a templated site's articles are short, a dynamic site's pages
# are documentation pages of some length (their ad, clock and nonce are a small part).
_TEXT_WORDS = {"templated": TEMPLATED_WORDS, "dynamic": 200}


@dataclass(frozen=True, slots=True)
class _Node:
    key: str  # canonical path[?query] as the router looks it up
    path: str  # canonical path
    query: tuple[tuple[str, str], ...]
    title: str
    kind: str  # home, section, leaf, variant, twin, frames, refresh


def _query_string(query: Iterable[tuple[str, str]]) -> str:
    return urlencode(list(query))


class GeneratedSite(Site):
    def __init__(
        self,
        cfg: WebConfig,
        name: str,
        host: str,
        personality: Personality,
        www: Www = Www.NONE,
        neighbours: tuple[str, ...] = (),
        address: str = "127.0.0.1",
        hostile_variant: int = 0,
        canonical: str = "",
    ) -> None:
        self.cfg = cfg
        # How pages declare their canonical URL (RFC 6596): "" not at all; "html" / "header"
        # rightly (a <link> element / an HTTP Link header); or wrongly, as misconfigured
        # sites do (testweb/_canonical.py): "home", "missing" (a 404), "offsite".
        self.canonical = canonical
        self.name = name
        self.host = host
        self.www_host = "www." + host
        self.p = personality
        self.www = www
        self.personality_name = personality.name
        self.www_mode = www.value
        self.address = address
        self.origin = origin(host, cfg.port)
        twins = (Www.ALIAS, Www.REDIRECT, Www.ALIAS_LINKS)
        self.hosts = (host, self.www_host) if www in twins else (host,)
        self.seeds = (self.origin + "/",)
        self.hostile = (
            Hostile(cfg, name, self.origin, hostile_variant) if personality.hostile else None
        )
        if self.hostile is not None:
            self.robots_variant = self.hostile.variant
        self._meaningful = frozenset(personality.page_params)
        nodes = self._nodes()
        self._dirs = frozenset(n.path for n in nodes if n.path.endswith("/"))
        self._sections = [n for n in nodes if n.kind == "section"]
        self._leaves = [n for n in nodes if n.kind == "leaf"]
        self._leaf_index = {n.key: i for i, n in enumerate(self._leaves)}
        self._extra = [n for n in nodes if n.kind in ("twin", "variant", "frames", "refresh")]
        self._twin = ("", "")
        if www is Www.ALIAS_LINKS:
            self._twin = (self.origin, origin(self.www_host, cfg.port))
        self._chrome = site_chrome(self.name, cfg.seed, nodes) if personality.style else ""
        self._pages: dict[str, Page] = {}
        self._outcomes: dict[str, Outcome] = {}
        for node in nodes:
            page = self._page(node, nodes, neighbours)
            self._pages[node.key] = page
            self._outcomes[node.key] = Outcome(200, page.rid, page=page)

    # -- generation ---------------------------------------------------------------------

    def _h(self, *parts: object) -> int:
        return stable_hash(self.cfg.seed, self.name, *parts)

    def _nodes(self) -> list[_Node]:
        p = self.p
        total = max(3, self.cfg.pages_per_site)
        nsec = max(1, min(8, total // 8))
        sections: list[str] = []
        k = 0
        while len(sections) < nsec:
            word = pick(WORDS, self.cfg.seed, self.name, "section", k)
            k += 1
            if word not in sections and word != "index":
                sections.append(word)
        nodes = [_Node("/", "/", (), f"{self.name} home", "home")]
        for sec in sections:
            nodes.append(_Node(f"/{sec}/", f"/{sec}/", (), f"{self.name} {sec}", "section"))
        for i in range(total - 1 - nsec):
            sec = sections[i % nsec]
            query: tuple[tuple[str, str], ...]
            word = pick(WORDS, self.cfg.seed, self.name, "leaf", i)
            if p.dynamic == "php":
                path, query = f"/{sec}/item.php", (("id", str(i)),)
            elif p.dynamic == "jsp":
                path, query = f"/{sec}/view.jsp", (("no", str(i)),)
            else:
                path, query = f"/{sec}/{word}-{i}{p.ext}", ()
            nodes.append(self._node(path, query, f"{word} {i}", "leaf"))
            if p.case_twins and i % 5 == 2:
                # /Pubs/x.html is another page than /pubs/x.html on a Unix server (000 §4.1).
                twin = f"/{sec.capitalize()}/{word}-{i}{p.ext}"
                nodes.append(self._node(twin, (), f"{word.upper()} {i}", "twin"))
            if p.dynamic == "php" and i % 3 == 0:
                # lang changes the page: a parameter that must not be dropped (seed 001)
                nodes.append(
                    self._node(path, (*query, ("lang", "ko")), f"{word} {i} ko", "variant")
                )
        if p.dynamic == "php":
            for sec in sections:
                nodes.append(self._node(f"/{sec}/", (("sort", "desc"),), f"{sec} desc", "variant"))
        if p.dynamic == "jsp":
            for sec in sections:
                for sid in (1, 2):
                    title = f"{sec} board {sid}"
                    query = (("sid", str(sid)),)
                    nodes.append(self._node(f"/{sec}/list.jsp", query, title, "variant"))
        if p.rich_links:
            nodes.append(_Node("/frames.html", "/frames.html", (), f"{self.name} frames", "frames"))
            nodes.append(_Node("/moved.html", "/moved.html", (), f"{self.name} moved", "refresh"))
        return nodes

    def _node(self, path: str, query: tuple[tuple[str, str], ...], title: str, kind: str) -> _Node:
        return _Node(self._key(path, query), path, query, title, kind)

    def _key(self, path: str, query: Iterable[tuple[str, str]]) -> str:
        kept = sorted((k, v) for k, v in query if k in self._meaningful)
        return path + ("?" + _query_string(kept) if kept else "")

    def _page(self, node: _Node, nodes: list[_Node], neighbours: tuple[str, ...]) -> Page:
        targets = self._targets(node, nodes)
        links: list[Link] = []
        head = ""
        base_dir = node.path if node.path.endswith("/") else posixpath.dirname(node.path) + "/"
        if self.p.rich_links and node.kind == "section":
            # <base href> moves relative resolution to another directory (seed 004 "h"/"a").
            others = [n.path for n in nodes if n.kind == "section" and n.path != node.path]
            if others:
                base_dir = others[0]
                head = f'<base href="{self.origin}{base_dir}">\n'
        for n, dst in enumerate(targets):
            links.append(self._link(node, dst, n, base_dir, frames=node.kind == "frames"))
        if node.kind in ("home", "leaf"):
            for j, url in enumerate(neighbours):
                if node.kind == "home" or self._h(node.key, "cross", j) % 4 == 0:
                    title = html.escape(url)
                    links.append(Link(url, f'<a href="{html.escape(url)}">{title}</a>'))
        if self.hostile is not None and node.kind == "home":
            links.extend(self.hostile.entry_links())
        if node.kind == "refresh":
            dst = next(n for n in nodes if n.kind == "leaf")
            url = self._url(self.host, dst.path, dst.query)
            head = f'<meta http-equiv="refresh" content="0; url={html.escape(dst.key)}">\n'
            links = [Link(url, "", "h")]
        head, link_header = self._declare(node, head, neighbours)
        if node.kind == "home":
            period = _HOME_PERIOD
        elif node.kind == "section":
            period = _SECTION_PERIOD
        elif node.kind in ("frames", "refresh"):
            period = 0
        else:
            period = _LEAF_PERIODS[self._h(node.key, "period") % len(_LEAF_PERIODS)]
        return Page(
            rid=f"{self.name}:{node.key}",
            url=self._url(self.host, node.path, node.query),
            title=node.title,
            links=tuple(links),
            period=period,
            phase=self._h(node.key, "phase") % max(1, period),
            head=head,
            frameset=node.kind == "frames",
            lang="ko" if ("lang", "ko") in node.query else "en",
            text_words=_TEXT_WORDS.get(self.p.style, 60),
            style=self.p.style,
            chrome=self._chrome,
            origin=self._twin[0],
            twin_origin=self._twin[1],
            link_header=link_header,
        )

    def _declare(self, node: _Node, head: str, neighbours: tuple[str, ...]) -> tuple[str, str]:
        """The page's head and Link header with its canonical declaration (RFC 6596)."""
        mode = self.canonical
        if not mode:
            return head, ""
        if mode in ("html", "header"):
            target = self._url(self.host, node.path, node.query)
        elif mode == "home":
            target = self.origin + "/"  # a classic CMS mistake: every page is "the home page"
        elif mode == "missing":
            target = self.origin + "/gone" + node.key  # moved away long ago: a 404
        else:  # "offsite": another site's page of the same path
            other = neighbours[0].rstrip("/") if neighbours else self.origin
            target = other + node.key
        if mode == "header":
            return head, f'<{target}>; rel="canonical"'
        return head + f'<link rel="canonical" href="{html.escape(target)}">\n', ""

    def _targets(self, node: _Node, nodes: list[_Node]) -> list[_Node]:
        home = nodes[0]
        sections, leaves, extra = self._sections, self._leaves, self._extra
        out: list[_Node] = []
        if node.kind == "home":
            out += sections + leaves[:3] + extra
        elif node.kind == "section":
            out += [n for n in leaves + extra if n.path.startswith(node.path)] + [home]
        elif node.kind == "frames":
            out += sections[:1] + leaves[:1]
        elif node.kind in ("leaf", "twin", "variant") and leaves:
            i = self._leaf_index.get(node.key, 0)
            out.append(leaves[(i + 1) % len(leaves)])
            for j in range(3):
                out.append(leaves[self._h(node.key, "rnd", j) % len(leaves)])
            lower = node.path.lower()
            out.append(next((s for s in sections if lower.startswith(s.path)), home))
            out.append(home)
            if node.kind == "leaf":
                out += [n for n in extra if n.path == node.path or n.title.startswith(node.title)]
        return out

    def _url(self, host: str, path: str, query: Iterable[tuple[str, str]]) -> str:
        qs = _query_string(query)
        return origin(host, self.cfg.port) + path + ("?" + qs if qs else "")

    def _link(self, src: _Node, dst: _Node, n: int, base_dir: str, frames: bool) -> Link:
        salt = (src.key, n)
        path, query = dst.path, list(dst.query)
        if self.p.alias_spellings and self._h(*salt, "alias") % 3 == 0:
            path, query = self._alias(dst, salt)
        host = self.host
        if (
            self.www in (Www.ALIAS, Www.REDIRECT, Www.ALIAS_LINKS)
            and self._h(*salt, "www") % 4 == 0
        ):
            host = self.www_host
        qs = _query_string(query)
        path_qs = path + ("?" + qs if qs else "")
        url = origin(host, self.cfg.port) + path_qs
        if frames:
            rel = _relative(base_dir, path) + ("?" + qs if qs else "")
            return Link(url, f'<frame src="{html.escape(rel)}" name="f{n}">', "f")
        if self.p.rich_links:
            pick_ = self._h(*salt, "markup")
            same_host = host == self.host
            rel = _relative(base_dir, path) + ("?" + qs if qs else "") if same_host else url
            markup, kind = rich_markup(pick_, url, path_qs if same_host else url, rel, dst.title)
            return Link(url, markup, kind)
        choice = self._h(*salt, "form") % 5
        if host != self.host or choice == 0 or self.www is Www.ALIAS_LINKS:
            # A site whose twin links to its own host name writes every link absolute.
            href = url
        elif choice in (1, 2) and path.startswith(base_dir) and "/" not in path[len(base_dir) :]:
            href = path[len(base_dir) :] + ("?" + qs if qs else "")
            href = href or "./"
        else:
            href = path_qs
        return Link(url, f'<a href="{html.escape(href)}">{html.escape(dst.title)}</a>')

    def _alias(self, dst: _Node, salt: tuple[object, ...]) -> tuple[str, list[tuple[str, str]]]:
        """Another spelling of ``dst`` that this kind of server maps to it (seed 000 §4)."""
        p = self.p
        path, query = dst.path, list(dst.query)
        r = self._h(*salt, "how")
        if path.endswith("/"):
            # /dir → 301 /dir/ (000 §4.2), or /dir/index.html = /dir/ (000 §4.4)
            path = path[:-1] if r % 2 == 0 and path != "/" else path + p.default_doc
            if p.case_insensitive:
                path = _case_variant(path, r)
        elif p.case_insensitive:
            path = _case_variant(path, r)  # /ASP/x.asp = /asp/x.asp on IIS (000 §4.1)
        elif p.case_twins and r % 4 == 0:
            # /pubs/X.HTML does not exist on a Unix server: a 404 spelling (000 §4.1)
            head, _, tail = path.rpartition("/")
            path = f"{head}/{tail.upper()}"
        if p.session_param and r % 3 == 0:
            query.append((p.session_param, f"{self._h(*salt, 'sid'):016x}"))
        if p.tracking_params and r % 3 == 1:
            query.insert(0, (p.tracking_params[0], pick(WORDS, *salt, "utm")))
        if p.path_session and r % 2 == 1:
            path = f"{path};jsessionid={self._h(*salt, 'js'):012X}"
        if len(query) > 1 and r % 5 < 2:
            query.reverse()  # parameter order does not matter (seed 001)
        return path, query

    # -- routing -------------------------------------------------------------------------

    def pages(self) -> Iterable[Page]:
        yield from self._pages.values()
        if self.hostile is not None:
            yield from self.hostile.pages()

    def route(self, host: str, path: str, query: str) -> Outcome:
        if host == self.www_host and self.www is Www.REDIRECT:
            loc = origin(self.host, self.cfg.port) + path + ("?" + query if query else "")
            return Outcome(301, "redirect", location=loc, resource=False)
        if path == "/robots.txt":
            return self.hostile.robots() if self.hostile else plain_robots(self.name)
        if self.hostile is not None:
            special = self.hostile.route(path, query)
            if special is not None:
                return special
        p = unquote(path)
        if "/." in p or "//" in p:
            # Like Apache and IIS: dot-segments resolve and empty segments collapse, as the
            # file system does (RFC 3986 §5.2.4; the "usually safe" duplicate-slash step).
            p = _clean_path(p)
        if self.p.path_session and ";" in p:
            p = p.split(";", 1)[0]
        if self.p.case_insensitive:
            p = p.lower()
            doc = self.p.default_doc.lower()
        else:
            doc = self.p.default_doc
        if p.endswith("/" + doc):
            p = p[: -len(doc)]
        params = parse_qsl(query, keep_blank_values=True) if query else []
        found = self._outcomes.get(self._key(p, params))
        if found is not None:
            return found
        if p + "/" in self._dirs:
            loc = origin(host, self.cfg.port) + path + "/" + ("?" + query if query else "")
            return Outcome(301, "redirect", location=loc, resource=False)
        if self.hostile is not None:
            return self.hostile.soft_404()
        return NOT_FOUND


def _clean_path(path: str) -> str:
    out: list[str] = []
    segments = path.split("/")
    for seg in segments[1:-1]:
        if seg == "..":
            if out:
                out.pop()
        elif seg not in (".", ""):
            out.append(seg)
    last = segments[-1]
    if last in (".", ".."):
        if last == ".." and out:
            out.pop()
        last = ""
    return "/" + "".join(s + "/" for s in out) + last


def _case_variant(path: str, r: int) -> str:
    mode = (r >> 8) % 3
    if mode == 0:
        return path.upper()
    if mode == 1:
        return "/".join(s.capitalize() for s in path.split("/"))
    head, _, tail = path.rpartition("/")
    return head.upper() + "/" + tail


def _relative(base_dir: str, path: str) -> str:
    """A document-relative reference to ``path`` from a page in ``base_dir``."""
    rel = posixpath.relpath(path, base_dir)
    if path.endswith("/"):
        rel = "./" if rel == "." else rel + "/"
    elif ";" in rel.split("/")[0] or ":" in rel.split("/")[0]:
        rel = "./" + rel
    return rel

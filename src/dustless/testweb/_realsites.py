"""A site of the ``real`` test web: real documents served as its plan says (pure).

One :class:`RealSite` answers its main host and the hosts its plan draws (``www.``, ``m.``,
``print.``, ``files.``). A document has one *primary* URL, ``/SECTION/SLUG.html``, and as many
other spellings as its behaviours give it — each classified in the truth as that document
(``REALn:/SECTION/SLUG.html``), a trap, a redirect, a 404 or a soft 404. Links are written the
way the site's software would write them: some in the PHP form, some with tracking or
irrelevant parameters, every relative one with a Tomcat session id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import parse_qsl, unquote

from dustless.testweb._behaviours import TWIN_SUBTREE, SitePlan, section_of
from dustless.testweb._core import Link, Outcome, Page, Site, WebConfig, origin, stable_hash
from dustless.testweb._corpus import Corpus, Document
from dustless.testweb._realpages import Renderer, Where, links_in, raw_listing

__all__ = ["RealSite"]

_ROBOTS = b"User-agent: *\nDisallow: /private/\n"
_HTML = "text/html; charset=utf-8"


def _slug(doc_id: str) -> str:
    return doc_id.split("/", 1)[1].removesuffix(".html").replace("/", "-")


class RealSite(Site):
    """Every host of one drawn site, and its answer to any request."""

    def __init__(self, cfg: WebConfig, plan: SitePlan, corpus: Corpus) -> None:
        self.cfg = cfg
        self.plan = plan
        self.name = plan.name
        self.personality_name = f"real:{plan.story}"
        self.www_mode = plan.www
        self.host = plan.host
        self.display = f"{plan.package.split('-doc')[0].capitalize()} docs ({plan.name})"
        self.origin = origin(self.host, cfg.port)
        docs = {d.id: d for d in corpus.documents(plan.package)}
        self.docs: dict[str, Document] = {d: docs[d] for d in plan.docs}
        self.section: dict[str, str] = {d: s for s, ds in plan.sections for d in ds}
        self.by_path: dict[str, str] = {f"/{self.section[d]}/{_slug(d)}.html": d for d in plan.docs}
        self.by_slug: dict[str, str] = {_slug(d): d for d in plan.docs}
        self.raw_root: Path | None = corpus.roots.get(plan.package)
        # the www twin's differing subtree: other documents of the package under those paths
        self.twin: dict[str, Document] = {}
        if plan.www == "alias" and plan.twin_section:
            others = [d for d in corpus.documents(plan.package) if d.id not in self.docs]
            subtree = dict(plan.sections)[plan.twin_section][:TWIN_SUBTREE]
            for k, doc_id in enumerate(subtree):
                if others:
                    self.twin[doc_id] = others[stable_hash(plan.name, "twin", k) % len(others)]
        hosts = [self.host]
        if plan.www != "none":
            hosts.append("www." + self.host)
        if plan.mobile_mode == "host":
            hosts.append("m." + self.host)
        if plan.print_mode == "host":
            hosts.append("print." + self.host)
        if plan.autoindex:
            hosts.append("files." + self.host)
        self.hosts = tuple(hosts)
        self.seeds = (self.origin + "/",)
        self.renderer = Renderer(self)
        self._pages: list[Page] | None = None

    # -- URLs ------------------------------------------------------------------------------

    def rid(self, path: str, twin: bool = False) -> str:
        return f"{'www.' if twin else ''}{self.name}:{path}"

    def primary_path(self, doc_id: str) -> str:
        return f"/{self.section[doc_id]}/{_slug(doc_id)}.html"

    def by_path_slug(self, doc_id: str) -> str:
        return _slug(doc_id)

    def dead_path(self, doc_id: str) -> str:
        """Where a document of the package the site does not have would be: a broken link."""
        return f"/{section_of(self.plan, doc_id)}/{_slug(doc_id)}.html"

    # -- the truth's pages -----------------------------------------------------------------

    def pages(self) -> Iterable[Page]:
        if self._pages is None:
            self._pages = []
            for path, rid in self.renderer.primary_pages():
                out = self.route(self.host, path, "")
                assert out.render is not None, path
                url = self.origin + path
                targets = dict.fromkeys(links_in(out.render(0).decode(), url))
                links = tuple(Link(t, "") for t in targets)
                self._pages.append(Page(rid=rid, url=url, title=path, links=links))
        return self._pages

    # -- routing ---------------------------------------------------------------------------

    def route(self, host: str, path: str, query: str) -> Outcome:
        plan = self.plan
        if path == "/robots.txt":
            return Outcome(200, "robots", body=_ROBOTS, content_type="text/plain", resource=False)
        base = host.split(".", 1)[0] if host != self.host else ""
        if base == "www" and plan.www == "redirect":
            loc = self.origin + path + (f"?{query}" if query else "")
            return _redirect(301, loc)
        if base == "files":
            return self._files(path, query)
        raw_path = path
        if plan.jsessionid:
            # Tomcat: ";jsessionid=…" on any segment is the session, never the resource
            path = "/".join(seg.split(";jsessionid=", 1)[0] for seg in path.split("/"))
        path = unquote(path)
        params = parse_qsl(query, keep_blank_values=True)
        where = Where(host=host, twin=base == "www", variant="normal", params=())
        if base == "m":
            where = where._replace(variant="mobile")
        elif base == "print":
            where = where._replace(variant="print")
        kept: list[tuple[str, str]] = []
        for key, value in params:
            pair = f"{key}={value}"
            if key in plan.tracking or key in plan.noise:
                continue  # parameters that never matter
            if plan.print_mode == "param" and pair == plan.print_param:
                where = where._replace(variant="print")
            elif plan.mobile_mode == "param" and pair == plan.mobile_param:
                where = where._replace(variant="mobile")
            elif plan.amp_mode == "param" and pair == plan.amp_param:
                where = where._replace(variant="amp")
            else:
                kept.append((key, value))
        if plan.print_mode == "path" and path.startswith("/print/"):
            path, where = path[len("/print") :], where._replace(variant="print")
        elif plan.amp_mode == "path" and path.startswith("/amp/"):
            path, where = path[len("/amp") :], where._replace(variant="amp")
        where = where._replace(params=tuple(kept))
        return self._resource(path, raw_path, query, where)

    def _resource(self, path: str, raw_path: str, query: str, where: Where) -> Outcome:
        plan = self.plan
        params = dict(where.params)
        if plan.php_form and path in ("/index.php", "/"):
            page = params.get("page")
            if page is not None:
                sec, _, slug = page.partition("/")
                doc = self.by_slug.get(slug.removesuffix(".html"))
                if doc is not None and self.section[doc] == sec:
                    return self.renderer.document(doc, where)
                return self._missing()
            return self.renderer.home(where)
        if path in ("/", "/index.html"):
            return self.renderer.home(where)
        doc = self.by_path.get(path)
        if doc is not None:
            return self.renderer.document(doc, where)
        sections = dict(plan.sections)
        parts = path.strip("/").split("/")
        if len(parts) == 1 and parts[0] in sections:
            if not path.endswith("/"):
                loc = origin(where.host, self.cfg.port) + raw_path + "/"
                return _redirect(301, loc + (f"?{query}" if query else ""))
            return self.renderer.section(parts[0], where)
        if len(parts) == 2 and parts[0] in sections and parts[1] == "index.html":
            return self.renderer.section(parts[0], where)
        if plan.moved and len(parts) == 2 and parts[0] == "doc":
            target = self.by_slug.get(parts[1].removesuffix(".html"))
            if target is not None:
                return _redirect(301, self.origin + self.primary_path(target))
        if plan.calendar and parts[0] == "events":
            out = self.renderer.calendar(parts[1:], where)
            if out is not None:
                return out
        if plan.facets and path == "/search" and where.variant == "normal":
            out = self.renderer.facets(where.params)
            if out is not None:
                return out
        return self._missing()

    def _missing(self) -> Outcome:
        if self.plan.soft404:
            return Outcome(200, "soft404", render=self.renderer.not_found, resource=False)
        return Outcome(404, "notfound", body=b"<h1>Not Found</h1>\n", resource=False)

    def _files(self, path: str, query: str) -> Outcome:
        """``files.HOST``: Apache's mod_autoindex over the package's own pages, served raw."""
        if path == "/":
            ordered = sorted(d.split("/", 1)[1] for d in self.docs if d.count("/") == 1)
            body = raw_listing(ordered, query)
            return Outcome(200, f"files.{self.name}:/", body=body, content_type=_HTML)
        name = path.lstrip("/")
        doc = f"{self.plan.package}/{name}"
        if doc in self.docs and "/" not in name and self.raw_root is not None:
            return Outcome(
                200,
                self.rid(self.primary_path(doc)),
                render=_raw_file(self.raw_root / name),
                content_type=_HTML,
            )
        return Outcome(404, "notfound", body=b"<h1>Not Found</h1>\n", resource=False)


def _redirect(status: int, location: str) -> Outcome:
    return Outcome(status, "redirect>" + location, location=location, resource=False)


def _raw_file(path: Path) -> Callable[[int], bytes]:
    def body(day: int) -> bytes:
        return path.read_bytes()

    return body

"""Robots files, spider traps and misbehaving responses of ``hostile`` sites (pure).

Everything a polite, robust crawler must survive (docs/testweb.md, "Traps and misbehaviour"):
infinite calendars and ever-deeper paths, soft 404s, redirect chains and loops, robots.txt variants
(RFC 9309: wildcards, 4xx, 5xx, redirects, > 500 KiB, garbage), slow or stalled or reset
responses, oversized bodies, compression bombs, wrong types and bad encodings. The server
(:mod:`dustless.testweb._server`) performs the :class:`Action` an outcome asks for.
"""

from __future__ import annotations

import contextlib
import functools
import html
import zlib
from urllib.parse import parse_qsl

from dustless.testweb._clones import CLONE_VARIANTS, clone_page
from dustless.testweb._core import Action, Link, Outcome, Page, WebConfig, stable_hash
from dustless.testweb._html import filler, render_page

__all__ = ["PRIVATE_TARGETS", "ROBOTS_VARIANTS", "Hostile", "bomb_body", "plain_robots"]

ROBOTS_VARIANTS = ("rules", "crawl-delay", "404", "5xx", "redirect", "huge", "garbage")

HUGE_BYTES = 3 * 1024 * 1024  # over FetchLimits.max_bytes (2 MiB)
BOMB_BYTES = 64 * 1024 * 1024  # decompresses to 64 MiB: a ratio near 1000
ROBOTS_HUGE_BYTES = 600 * 1024  # over RFC 9309 §2.5's 500 KiB parsing limit
MAX_DEPTH = 200

_PLAIN_ROBOTS = b"User-agent: *\nDisallow: /private/\n"

# Paths every hostile site links from its home page: (path, anchor text).
ENTRY_POINTS: tuple[tuple[str, str], ...] = (
    ("/calendar/2026/11/", "calendar"),
    ("/deep/a/", "deeper and deeper"),
    ("/gone/old-page.html", "an old page"),
    ("/r/chain/5", "redirect chain"),
    ("/r/loop/a", "redirect loop"),
    ("/r/relative", "relative redirect"),
    ("/slow/first-byte.html", "slow first byte"),
    ("/slow/stall.html", "stalling body"),
    ("/reset/before.html", "connection reset"),
    ("/reset/mid.html", "reset mid-body"),
    ("/big/huge.html", "huge page"),
    ("/big/chunked.html", "huge chunked page"),
    ("/bomb.html", "compressed page"),
    ("/files/report.pdf", "report (PDF)"),
    ("/img/logo.png", "logo"),
    ("/types/pdf-as-html.html", "binary served as HTML"),
    ("/types/no-type.html", "page without a type"),
    ("/types/html-as-plain.txt", "HTML served as text/plain"),
    ("/broken.html", "broken HTML"),
    ("/enc/euc-kr-labelled-utf8.html", "wrong charset"),
    ("/enc/meta-euc-kr.html", "charset in meta only"),
    ("/enc/invalid-utf8.html", "invalid UTF-8"),
    ("/private/secret.html", "private"),
    ("/private/open-1.html", "private but allowed"),
    ("/landing.html?print=1", "print version"),
    ("/nest/divs.html", "100,000 nested divs"),
    ("/nest/unclosed.html", "100,000 unclosed div, span, b"),
    ("/clones/b.html", "250 formatting elements cloned into every div"),
    ("/r/raw-location", "redirect to non-ASCII bytes"),
    ("/leak/links.html", "links to private addresses"),
    ("/r/metadata", "redirect to the metadata service"),
)
# Addresses a hostile page points a crawler at: the cloud metadata service, private ranges,
# loopback (RFC 1918, RFC 3927, RFC 4291 §2.5.3). The address policy must refuse them all.
PRIVATE_TARGETS = (
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/admin",
    "http://192.168.1.1/",
    "http://[::1]/",
    "http://127.0.0.1:9/",
)
NEST_COUNT = 100_000  # elements of the two deeply nested pages (1.1 and 1.4 MB)
CLONE_BYTES = 360_000  # the size of the page a user reported (2.7 GB in the parser)
# A Location of raw non-ASCII bytes (the server writes header values as UTF-8), and the
# path a browser requests for it: each byte percent-encoded.
RAW_LOCATION = "/café/한?x=한국"
RAW_LOCATION_TARGET = "/caf%C3%A9/%ED%95%9C"

_PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def plain_robots(name: str) -> Outcome:
    body = f"# robots.txt of {name}\n".encode() + _PLAIN_ROBOTS
    return Outcome(200, f"robots:{name}", body=body, content_type="text/plain", resource=False)


@functools.cache
def bomb_body() -> bytes:
    """gzip of 64 MiB of spaces after an HTML head: about 64 KiB on the wire."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [comp.compress(b"<!DOCTYPE html><html><body>")]
    chunk = b" " * (1024 * 1024)
    for _ in range(BOMB_BYTES // len(chunk)):
        out.append(comp.compress(chunk))
    out.append(comp.flush())
    return b"".join(out)


@functools.cache
def _huge_html() -> bytes:
    # One body shared by every site: 3 MiB per site would be memory for nothing.
    line = (filler(40, "huge") + "\n").encode()
    head = b"<!DOCTYPE html>\n<html><head><title>huge</title></head><body><pre>\n"
    return head + line * (HUGE_BYTES // len(line) + 1) + b"</pre></body></html>\n"


@functools.cache
def _nested(kind: str) -> bytes:
    # Markup whose tree costs an HTML parser time in the square of its depth (each block
    # start tag looks down the stack of open elements): a link before, inside and after.
    # One body shared by every site (the site's signature follows it), as for _huge_html.
    if kind == "divs":
        inner = (
            "<div>" * (NEST_COUNT // 2)
            + '<a href="/landing.html">deep inside</a>'
            + "<div>" * (NEST_COUNT // 2)
            + "</div>" * NEST_COUNT
        )
    else:  # 300,000 tags: more than extraction's budget, so only the first part is read
        inner = (
            "<div><span><b>" * (NEST_COUNT // 2)
            + '<a href="/private/open-1.html">half way</a>'
            + "<div><span><b>" * (NEST_COUNT // 2)
        )
    head = f"<!DOCTYPE html>\n<html><head><title>nested {kind}</title></head><body>\n"
    return (head + '<a href="/">home</a>\n' + inner).encode()


@functools.cache
def _clones(variant: str) -> bytes:
    return clone_page(variant, CLONE_BYTES)  # one body shared by every site


@functools.cache
def _garbage(name: str) -> bytes:
    return b"".join(stable_hash(name, i).to_bytes(8, "big") for i in range(512))


def _robots_rules(delay: float | None) -> bytes:
    lines = [
        "# dustless test web: robots.txt of a hostile site",
        "User-agent: BadBot",
        "Disallow: /",
        "",
        "User-agent: *",
        "Disallow: /private/",
        "Allow: /private/open*.html",  # RFC 9309 §2.2.3: the longest match wins
        "Disallow: /*?print=",
        "Disallow: /*.pdf$",
    ]
    if delay is not None:
        lines.append(f"Crawl-delay: {delay:g}")
    return ("\n".join(lines) + "\n").encode()


class Hostile:
    """The traps and misbehaviour of one hostile site."""

    def __init__(self, cfg: WebConfig, name: str, origin: str, variant: int = 0) -> None:
        self.cfg = cfg
        self.name = name
        self.origin = origin
        self.variant = ROBOTS_VARIANTS[variant % len(ROBOTS_VARIANTS)]
        if cfg.crawl_delay is not None:
            self.crawl_delay = cfg.crawl_delay
        else:
            self.crawl_delay = 0.5 + (stable_hash(cfg.seed, name, "delay") % 4) * 0.5
        self._soft404 = Outcome(
            200,
            f"soft404:{name}",
            body=(
                b"<!DOCTYPE html>\n<html><head><title>Sorry</title></head>\n"
                b"<body><h1>Sorry, this page has moved or does not exist.</h1>\n"
                + f"<p>{name}</p>\n".encode()
                + b'<p><a href="/">Home</a></p></body></html>\n'
            ),
        )
        self._pages: dict[str, Page] = {}
        for path in (
            "/landing.html",
            "/private/secret.html",
            "/private/open-1.html",
            RAW_LOCATION_TARGET,
        ):
            self._pages[path] = Page(
                rid=f"{name}:{path}",
                url=origin + path,
                title=f"{name} {path}",
                links=(Link(origin + "/", '<a href="/">home</a>'),),
            )
        self._fixed = self._fixed_outcomes()

    def entry_links(self) -> tuple[Link, ...]:
        return tuple(
            Link(self.origin + path, f'<a href="{html.escape(path)}">{html.escape(text)}</a>')
            for path, text in ENTRY_POINTS
        )

    def pages(self) -> list[Page]:
        return list(self._pages.values())

    def soft_404(self) -> Outcome:
        # Every unknown URL answers 200 with the same page (a "soft 404").
        return self._soft404

    def robots(self) -> Outcome:
        rid = f"robots:{self.name}"
        v = self.variant
        if v == "rules":
            body = _robots_rules(self.crawl_delay)
        elif v == "crawl-delay":
            body = f"User-agent: *\nCrawl-delay: {self.crawl_delay:g}\n".encode()
        elif v == "404":
            return Outcome(404, rid, body=b"not found\n", content_type="text/plain", resource=False)
        elif v == "5xx":
            return Outcome(503, rid, body=b"busy\n", content_type="text/plain", resource=False)
        elif v == "redirect":
            loc = self.origin + "/robots-moved.txt"
            return Outcome(301, "redirect", location=loc, resource=False)
        elif v == "huge":
            pad = b"# " + b"x" * 98 + b"\n"
            body = pad * (ROBOTS_HUGE_BYTES // len(pad)) + _robots_rules(self.crawl_delay)
        else:  # garbage: binary noise a parser must survive (RFC 9309 §2.2)
            body = _garbage(self.name)
            return Outcome(200, rid, body=body, content_type="text/plain", resource=False)
        return Outcome(200, rid, body=body, content_type="text/plain", resource=False)

    def _fixed_outcomes(self) -> dict[str, Outcome]:
        return self._fixed_moves() | self._fixed_documents()

    def _fixed_moves(self) -> dict[str, Outcome]:
        """Redirects (chains, loops, raw bytes, to private addresses), links to private
        addresses, and connections reset before or in the middle of an answer."""
        n = self.name
        o = self.origin
        # Every body names its site: different resources never share bytes.
        sig = f"<!-- {n} -->\n".encode()
        redirect = "redirect"
        return {
            "/r/chain/0": Outcome(301, redirect, location=o + "/landing.html", resource=False),
            "/r/loop/a": Outcome(
                302, redirect, location=o + "/r/loop/b", resource=False, trap=True
            ),
            "/r/loop/b": Outcome(
                302, redirect, location=o + "/r/loop/a", resource=False, trap=True
            ),
            "/r/relative": Outcome(302, redirect, location="../landing.html", resource=False),
            # Raw non-ASCII bytes in Location: a crawler must request them percent-encoded
            # (RAW_LOCATION_TARGET, a page), not drop them (/caf/, a soft 404).
            "/r/raw-location": Outcome(302, redirect, location=RAW_LOCATION, resource=False),
            "/r/metadata": Outcome(302, redirect, location=PRIVATE_TARGETS[0], resource=False),
            "/leak/links.html": Outcome(
                200,
                f"{n}:/leak/links.html",
                body=b"<html><body>"
                + b"".join(f'<a href="{t}">in</a>'.encode() for t in PRIVATE_TARGETS)
                + sig
                + b"</body></html>\n",
            ),
            "/robots-moved.txt": Outcome(
                200,
                f"robots:{n}",
                body=_robots_rules(None),
                content_type="text/plain",
                resource=False,
            ),
            "/reset/before.html": Outcome(0, "reset", action=Action.RESET, resource=False),
            "/reset/mid.html": Outcome(
                200, f"{n}:/reset/mid.html", body=_huge_html()[:65536], action=Action.RESET_MID
            ),
        }

    def _fixed_documents(self) -> dict[str, Outcome]:
        """Documents of every type and encoding a crawler must read right or leave alone."""
        n = self.name
        sig = f"<!-- {n} -->\n".encode()
        pdf = _PDF + f"% {n}\n".encode()
        png = _PNG + n.encode()  # bytes after IEND are ignored by decoders
        euc = "<html><head><title>한국어</title></head><body><p>안녕하세요</p>".encode("euc-kr")
        euc_meta = (
            '<html><head><meta charset="euc-kr"><title>한국어</title></head><body><p>안녕하세요</p>'
        ).encode("euc-kr")
        end = sig + b'<a href="/landing.html">landing</a></body></html>\n'
        broken = (
            b"<html><head><title>broken<body><table><tr><td><a href=/landing.html>unquoted"
            b"<td><a href='/private/open-1.html' <b>no close</b><div></span></p></p>"
            b'<a href="/gone/x.html">x</a>' + sig + b'<!-- unterminated <a href="/no.html">'
        )
        return {
            "/files/report.pdf": Outcome(
                200, f"{n}:/files/report.pdf", body=pdf, content_type="application/pdf"
            ),
            "/img/logo.png": Outcome(200, f"{n}:/img/logo.png", body=png, content_type="image/png"),
            "/types/pdf-as-html.html": Outcome(
                200, f"{n}:/types/pdf-as-html.html", body=pdf + b"as html\n"
            ),
            "/types/no-type.html": Outcome(
                200,
                f"{n}:/types/no-type.html",
                body=b"<html><body>untyped</body></html>\n" + sig,
                content_type=None,
                action=Action.NO_CONTENT_TYPE,
            ),
            "/types/html-as-plain.txt": Outcome(
                200,
                f"{n}:/types/html-as-plain.txt",
                content_type="text/plain",
                body=b'<html><body><a href="/private/secret.html">not a link</a></body></html>\n'
                + sig,
            ),
            "/broken.html": Outcome(200, f"{n}:/broken.html", body=broken),
            "/enc/euc-kr-labelled-utf8.html": Outcome(
                200, f"{n}:/enc/euc-kr-labelled-utf8.html", body=euc + end
            ),
            "/enc/meta-euc-kr.html": Outcome(
                200, f"{n}:/enc/meta-euc-kr.html", body=euc_meta + end, content_type="text/html"
            ),
            "/enc/invalid-utf8.html": Outcome(
                200, f"{n}:/enc/invalid-utf8.html", body=b"<html><body>\xff\xfe\xc3(\xa0" + end
            ),
        }

    def route(self, path: str, query: str) -> Outcome | None:
        fixed = self._fixed.get(path)
        if fixed is not None:
            return fixed
        page = self._pages.get(path)
        if page is not None:
            return Outcome(200, page.rid, page=page)
        n = self.name
        params = dict(parse_qsl(query)) if query else {}
        if path.startswith("/calendar/"):
            return self._calendar(path)
        if path.startswith("/deep/"):
            return self._deep(path)
        if path.startswith("/r/chain/"):
            try:
                k = int(path.rsplit("/", 1)[1])
            except ValueError:
                return None
            if 0 < k <= 50:
                loc = f"{self.origin}/r/chain/{k - 1}"
                return Outcome(302, "redirect", location=loc, resource=False)
            return None
        if path in ("/slow/first-byte.html", "/slow/stall.html"):
            stall = path.endswith("stall.html")
            delay = self.cfg.stall_seconds if stall else self.cfg.slow_seconds
            with contextlib.suppress(ValueError):
                delay = min(60.0, max(0.0, float(params.get("delay", delay))))
            return Outcome(
                200,
                f"{n}:{path}",
                body=_huge_html()[:32768] if stall else b"<html><body>slow</body></html>\n",
                action=Action.STALL if stall else Action.SLOW_FIRST_BYTE,
                delay=delay,
                cacheable=False,
            )
        if path == "/big/huge.html":
            return Outcome(200, f"{n}:{path}", body=_huge_html())
        if path == "/big/chunked.html":
            return Outcome(200, f"{n}:{path}", body=_huge_html(), action=Action.CHUNKED)
        if path in ("/nest/divs.html", "/nest/unclosed.html"):
            kind = path[len("/nest/") : -len(".html")]
            body = _nested(kind) + f"<!-- {n} -->\n".encode()
            return Outcome(200, f"{n}:{path}", body=body, cacheable=False)
        if path.startswith("/clones/") and path.endswith(".html"):
            # Formatting elements a parser clones into every later container (_clones):
            # every variant is served, the home page links to one.
            variant = path[len("/clones/") : -len(".html")]
            if variant not in CLONE_VARIANTS:
                return None
            body = _clones(variant) + f"<!-- {n} -->\n".encode()
            return Outcome(200, f"{n}:{path}", body=body, cacheable=False)
        if path == "/bomb.html":
            return Outcome(
                200, f"{n}:{path}", body=bomb_body(), headers=(("Content-Encoding", "gzip"),)
            )
        return None

    def _calendar(self, path: str) -> Outcome | None:
        # An infinite calendar: every month links to the next and previous one, forever.
        try:
            _, _, y, m = path.rstrip("/").split("/")
            year, month = int(y), int(m)
        except ValueError:
            return None
        if not (1 <= year <= 9999 and 1 <= month <= 12) or not path.endswith("/"):
            return None
        prev = (year, month - 1) if month > 1 else (year - 1, 12)
        nxt = (year, month + 1) if month < 12 else (year + 1, 1)
        links = tuple(
            Link(
                f"{self.origin}/calendar/{a}/{b:02d}/", f'<a href="../../{a}/{b:02d}/">{a}-{b}</a>'
            )
            for a, b in (prev, nxt)
        )
        rid = f"trap:{self.name}:/calendar/{year}/{month:02d}/"
        page = Page(rid=rid, url=self.origin + path, title=f"{year}-{month:02d}", links=links)
        return Outcome(200, rid, body=render_page(page, 0), trap=True, cacheable=False)

    def _deep(self, path: str) -> Outcome | None:
        # Ever-deeper paths: a relative link "a/" on /deep/a/ leads to /deep/a/a/, and so on.
        parts = path.strip("/").split("/")
        if len(parts) > MAX_DEPTH or not path.endswith("/") or set(parts[1:]) != {"a"}:
            return None
        link = Link(self.origin + path + "a/", '<a href="a/">deeper</a>')
        rid = f"trap:{self.name}:{path}"
        page = Page(rid=rid, url=self.origin + path, title=f"depth {len(parts)}", links=(link,))
        return Outcome(200, rid, body=render_page(page, 0), trap=True, cacheable=False)

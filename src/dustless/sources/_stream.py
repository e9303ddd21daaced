"""The streaming reader under both parsers: bytes in (any chunking), records out, no I/O.

Memory is bounded by neither the file size nor the entry count: the reader holds one
decompressed chunk, expat's state for the open elements, and the text of one field (capped
at ``max_field_chars``); records leave with every ``feed``. A token that never ends (one
200 MB attribute) is the one thing expat must buffer, and ``max_bytes`` caps it.

Safety, checked by the tests: expat (``xml.parsers.expat``, the parser under
``xml.etree``) never fetches anything by itself; parameter entities are off
(``XML_PARAM_ENTITY_PARSING_NEVER``); and a DOCTYPE with an internal subset — the only place
an entity can be declared — stops the reader *before* expat reads a declaration, so neither
"billion laughs" expansion nor an external entity (XXE) can happen. A DOCTYPE without an
internal subset (old RSS 0.91 feeds name a DTD) declares nothing and is ignored.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Generic, TypeVar
from xml.parsers import expat

from dustless.sources._dates import parse_rfc822, parse_w3c
from dustless.sources._types import (
    MAX_LOC_CHARS,
    ChangeFreq,
    EntryKind,
    RootKind,
    SourceLimits,
    SourceOutcome,
    SourceState,
)

__all__ = ["Record", "StreamReader"]

E = TypeVar("E")

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_ROOTS = {
    "urlset": RootKind.URLSET,
    "sitemapindex": RootKind.SITEMAPINDEX,
    "rss": RootKind.RSS,
    "RDF": RootKind.RDF,
    "feed": RootKind.ATOM,
    "html": RootKind.HTML,
}
# (root, record element, depth of the record element): where an entry starts.
_RECORDS = {
    (RootKind.URLSET, "url", 2),
    (RootKind.SITEMAPINDEX, "sitemap", 2),
    (RootKind.RSS, "item", 3),  # <rss><channel><item>
    (RootKind.RDF, "item", 2),  # RSS 1.0: items are children of <rdf:RDF>
    (RootKind.ATOM, "entry", 2),
}
_FREQS = {f.value: f for f in ChangeFreq}


class _Stop(Exception):
    def __init__(self, state: SourceState, detail: str = "") -> None:
        super().__init__(detail)
        self.state = state
        self.detail = detail


@dataclass(slots=True)
class Record:
    """One entry as read, before a parser turns it into its public value."""

    kind: EntryKind = EntryKind.PAGE
    url: str | None = None
    guid: str | None = None  # RSS <guid> that is a permalink: the URL when <link> is absent
    guid_perma: bool = True
    lastmod: float | None = None
    changefreq: ChangeFreq | None = None
    priority: float | None = None
    published: float | None = None
    updated: float | None = None
    title: str = ""
    bad_url: bool = False  # the URL field overflowed ``max_field_chars``


def usable_url(url: str | None) -> str | None:
    """An absolute http(s) URL under the protocol's length limit, or ``None``."""
    if not url:
        return None
    url = url.strip()
    if len(url) > MAX_LOC_CHARS or not url[:8].lower().startswith(("http://", "https://")):
        return None
    if any(c in url for c in " \t\r\n"):
        return None
    return url


class StreamReader(Generic[E]):
    """``feed(chunk) -> entries``, ``close() -> SourceOutcome``; subclasses pick the roots
    they accept and turn a :class:`Record` into an entry (``_entry``; ``None`` drops it)."""

    _ACCEPT: frozenset[RootKind] = frozenset()
    _TEXT_OK = False  # a plain-text file of URLs is a source (sitemaps.org allows it)

    def __init__(self, limits: SourceLimits | None = None) -> None:
        self.limits = limits or SourceLimits()
        self._out: list[E] = []
        self._entries = 0
        self._skipped = 0
        self._bytes_in = 0
        self._bytes_out = 0
        self._state: SourceState | None = None  # set when reading stopped early
        self._detail = ""
        self._root = RootKind.NONE
        self._head = b""  # bytes before we know gzip / XML / text
        self._gzip: zlib._Decompress | None = None
        self._is_gzip = False
        self._sniffed = False  # the first two bytes were checked for the gzip magic
        self._zin = 0  # compressed bytes inflated so far
        self._mode = ""  # "" undecided, "xml", "text"
        self._xml: expat.XMLParserType | None = None
        self._line = bytearray()  # text mode: the line being read
        self._line_over = False
        self._depth = 0
        self._rec: Record | None = None
        self._rec_depth = 0
        self._field: str | None = None
        self._text: list[str] = []
        self._text_len = 0
        self._closed: SourceOutcome | None = None

    # -- public ------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Reading stopped (a limit, an error, a refused document): stop downloading."""
        return self._state is not None

    @property
    def root(self) -> RootKind:
        return self._root

    def feed(self, chunk: bytes) -> list[E]:
        """Parse the next bytes; return the entries they completed."""
        self._bytes_in += len(chunk)
        if self._state is not None or self._closed is not None or not chunk:
            return []
        try:
            self._intake(chunk, final=False)
        except _Stop as stop:
            self._stop(stop)
        out, self._out = self._out, []
        return out

    def close(self) -> SourceOutcome:
        """No more bytes: the one outcome of this file (entries of the tail are dropped
        into :attr:`tail`)."""
        if self._closed is not None:
            return self._closed
        if self._state is None:
            try:
                self._intake(b"", final=True)
            except _Stop as stop:
                self._stop(stop)
        self.tail, self._out = self._out, []
        state = self._state
        if state is None:
            state = SourceState.OK if self._root is not RootKind.NONE else SourceState.EMPTY
        self._closed = SourceOutcome(
            state,
            self._root,
            self._entries,
            self._skipped,
            self._bytes_in,
            self._bytes_out,
            self._is_gzip,
            self._detail,
        )
        return self._closed

    tail: list[E]

    # -- bytes: gzip, limits, sniffing ---------------------------------------------------------
    def _stop(self, stop: _Stop) -> None:
        self._state, self._detail = stop.state, stop.detail
        self._xml = None  # free expat's buffers now

    def _intake(self, chunk: bytes, *, final: bool) -> None:
        if not self._sniffed:
            self._head += chunk
            if len(self._head) < 2 and not final:
                return
            chunk, self._head, self._sniffed = self._head, b"", True
            if chunk.startswith(_GZIP_MAGIC):
                self._is_gzip = True
                self._gzip = zlib.decompressobj(31)  # RFC 1952 gzip
        if self._is_gzip:
            self._inflate(chunk, final)
        else:
            self._plain(chunk, final)

    def _inflate(self, data: bytes, final: bool) -> None:
        lim = self.limits
        while data:
            d = self._gzip
            if d is None:  # trailing bytes after the last member: ignored, as gzip(1) does
                break
            try:
                out = d.decompress(data, lim.chunk)
            except zlib.error as exc:
                raise _Stop(SourceState.BAD_GZIP, f"corrupt gzip: {exc}") from None
            # The ratio counts the compressed bytes this output came from, not the whole
            # network chunk: a bomb is seen after ~ratio_floor bytes, whatever the chunking.
            self._zin += len(data) - len(d.unconsumed_tail) - len(d.unused_data)
            data = d.unconsumed_tail
            if d.eof:
                rest = d.unused_data
                self._gzip = zlib.decompressobj(31) if rest.startswith(_GZIP_MAGIC) else None
                data = rest if self._gzip is not None else b""
            if out:
                after = self._bytes_out + len(out)
                if after > lim.ratio_floor and after > lim.max_ratio * max(1, self._zin):
                    raise _Stop(
                        SourceState.BOMB,
                        f"gzip expands more than {lim.max_ratio:g}x "
                        f"({after} bytes from {self._zin})",
                    )
                self._plain(out, False)
        if final:
            gz = self._gzip
            if gz is not None and not gz.eof and (self._bytes_out or self._bytes_in > 2):
                raise _Stop(SourceState.BAD_GZIP, "gzip stream ends early (no trailer)")
            self._plain(b"", True)

    def _plain(self, data: bytes, final: bool) -> None:
        room = self.limits.max_bytes - self._bytes_out
        over = len(data) > room
        if over:
            data = data[:room]
        self._bytes_out += len(data)
        if self._mode == "":
            data = self._sniff(data, final)
        if self._mode == "xml":
            self._parse_xml(data, final and not over)
        elif self._mode == "text":
            self._parse_text(data, final and not over)
        if over:
            raise _Stop(
                SourceState.SIZE_LIMIT, f"more than {self.limits.max_bytes} bytes uncompressed"
            )

    def _sniff(self, data: bytes, final: bool) -> bytes:
        self._head += data
        head = self._head
        body = head[3:] if head.startswith(_BOM) else head
        stripped = body.lstrip()
        if not stripped:
            if final:
                self._head = b""
            return b""
        if len(head) < 3 and head == _BOM[: len(head)] and not final:
            return b""
        self._head = b""
        if stripped[:1] == b"<" or not self._TEXT_OK:
            self._mode = "xml"
            self._xml = self._make_expat()
            return head
        self._mode = "text"
        self._root = RootKind.TEXT
        return body

    # -- text sitemaps (sitemaps.org "Text file") ------------------------------------------------
    def _parse_text(self, data: bytes, final: bool) -> None:
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                piece = data[start:]
                if len(self._line) + len(piece) > MAX_LOC_CHARS + 2:
                    self._line_over = True
                    self._line.clear()
                else:
                    self._line += piece
                break
            piece = data[start:nl]
            start = nl + 1
            if self._line_over or len(self._line) + len(piece) > MAX_LOC_CHARS + 2:
                self._skipped += 1
            else:
                self._text_line(bytes(self._line + piece))
            self._line.clear()
            self._line_over = False
        if final and (self._line or self._line_over):
            if self._line_over:
                self._skipped += 1
            else:
                self._text_line(bytes(self._line))
            self._line.clear()

    def _text_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return
        self._finish(Record(url=line))

    # -- XML ---------------------------------------------------------------------------------
    def _make_expat(self) -> expat.XMLParserType:
        p = expat.ParserCreate(namespace_separator=" ")
        p.buffer_text = True
        p.buffer_size = 1 << 16
        p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        p.StartDoctypeDeclHandler = self._doctype
        p.EntityDeclHandler = self._entity_decl
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._chars
        return p

    def _parse_xml(self, data: bytes, final: bool) -> None:
        p = self._xml
        if p is None:
            return
        try:
            p.Parse(data, final)
        except expat.ExpatError as exc:
            if self._root is RootKind.NONE and self._looks_html(data):
                self._root = RootKind.HTML
                raise _Stop(SourceState.NOT_SOURCE, "an HTML page, not XML") from None
            where = f"line {exc.lineno}, column {exc.offset}"
            message = expat.ErrorString(exc.code) if exc.code else str(exc)
            raise _Stop(SourceState.MALFORMED, f"XML error at {where}: {message}") from None

    @staticmethod
    def _looks_html(data: bytes) -> bool:
        head = data[:512].lstrip().lower()
        return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<meta"))

    def _doctype(
        self, name: str, sysid: str | None, pubid: str | None, internal_subset: int
    ) -> None:
        if name.lower() == "html":
            self._root = RootKind.HTML
            raise _Stop(SourceState.NOT_SOURCE, "an HTML page (<!DOCTYPE html>)")
        if internal_subset:
            raise _Stop(SourceState.DTD, f"a DOCTYPE {name} with declarations: refused unread")

    def _entity_decl(self, name: str, *_: object) -> None:  # pragma: no cover - defence
        raise _Stop(SourceState.DTD, f"an entity declaration ({name}): refused")

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        self._depth = depth = self._depth + 1
        local = name.rpartition(" ")[2]
        if depth == 1:
            self._root = root = _ROOTS.get(local, RootKind.OTHER)
            if root not in self._ACCEPT:
                raise _Stop(SourceState.NOT_SOURCE, f"root element <{local}>: not a source")
            return
        rec = self._rec
        if rec is None:
            if (self._root, local, depth) in _RECORDS:
                kind = EntryKind.SITEMAP if local == "sitemap" else EntryKind.PAGE
                self._rec, self._rec_depth = Record(kind), depth
            return
        if depth != self._rec_depth + 1:
            return  # extension elements (image:loc, news:…) inside a field are not ours
        self._field, self._text, self._text_len = local, [], 0
        if local == "link" and self._root is RootKind.ATOM:
            # RFC 4287 §4.2.7.2: a link without rel is rel="alternate", the entry's page.
            href = attrs.get("href")
            if href and attrs.get("rel", "alternate") == "alternate" and rec.url is None:
                rec.url = href
        elif local == "guid" and self._root is RootKind.RSS:
            # RSS 2.0 <guid>: a permalink unless isPermaLink="false".
            rec.guid_perma = attrs.get("isPermaLink", "true").strip().lower() != "false"

    def _chars(self, text: str) -> None:
        if self._field is None:
            return
        self._text_len += len(text)
        if self._text_len <= self.limits.max_field_chars:
            self._text.append(text)

    def _end(self, name: str) -> None:
        depth = self._depth
        self._depth -= 1
        rec = self._rec
        if rec is None:
            return
        if depth == self._rec_depth:
            self._rec = None
            self._finish(rec)
            return
        if depth != self._rec_depth + 1 or self._field is None:
            return
        field, self._field = self._field, None
        over = self._text_len > self.limits.max_field_chars
        value = "".join(self._text).strip()
        self._text = []
        root = self._root
        if field in ("loc", "link"):
            if root is not RootKind.ATOM:
                rec.url, rec.bad_url = value, over
        elif field == "lastmod":
            rec.lastmod = parse_w3c(value)
        elif field == "changefreq":
            rec.changefreq = _FREQS.get(value.lower())
        elif field == "priority":
            rec.priority = _priority(value)
        elif field == "pubDate":
            rec.published = parse_rfc822(value)
        elif field in ("published", "date"):  # Atom published; dc:date in RSS 1.0 and 2.0
            rec.published = parse_w3c(value)
        elif field == "updated":
            rec.updated = parse_w3c(value)
        elif field == "title":
            rec.title = value[:500]
        elif field == "guid" and rec.guid_perma:
            rec.guid = value

    def _finish(self, rec: Record) -> None:
        if self._entries >= self.limits.max_urls:
            raise _Stop(SourceState.URL_LIMIT, f"more than {self.limits.max_urls} entries")
        entry = None if rec.bad_url else self._entry(rec)
        if entry is None:
            self._skipped += 1
            return
        self._entries += 1
        self._out.append(entry)

    def _entry(self, rec: Record) -> E | None:
        raise NotImplementedError


def _priority(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None

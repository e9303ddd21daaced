"""The sitemap and feed parsers on bytes: vocabularies, chunking, dates, limits, hostility."""

from __future__ import annotations

import gzip
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.sources import (
    ChangeFreq,
    EntryKind,
    FeedParser,
    RootKind,
    SitemapParser,
    SourceLimits,
    SourceState,
    parse_rfc822,
    parse_w3c,
)

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
 <url><loc>http://a.test/x</loc><lastmod>2024-01-02</lastmod>
  <changefreq>Daily</changefreq><priority>0.8</priority>
  <image:image><image:loc>http://a.test/i.png</image:loc></image:image></url>
 <url><loc> http://a.test/y?a=1&amp;b=2 </loc><lastmod>2024-01-02T10:00:00+01:00</lastmod>
  <priority>7</priority></url>
 <url><loc>ftp://a.test/no</loc></url>
</urlset>"""


def parse(parser, data: bytes, step: int):
    out = []
    for i in range(0, len(data), step):
        out += parser.feed(data[i : i + step])
    outcome = parser.close()
    return out + parser.tail, outcome


@pytest.mark.parametrize("step", [1, 7, 4096])
@pytest.mark.parametrize("packed", [False, True])
def test_urlset_in_any_chunking_gzip_or_not(step: int, packed: bool) -> None:
    data = gzip.compress(URLSET) if packed else URLSET
    entries, outcome = parse(SitemapParser(), data, step)
    assert [e.url for e in entries] == ["http://a.test/x", "http://a.test/y?a=1&b=2"]
    x, y = entries
    assert x.lastmod == parse_w3c("2024-01-02T00:00:00Z")
    assert x.changefreq is ChangeFreq.DAILY
    assert x.priority == 0.8
    assert y.lastmod == parse_w3c("2024-01-02T09:00:00Z")
    assert y.priority is None  # outside 0.0-1.0
    assert outcome.state is SourceState.OK
    assert outcome.root is RootKind.URLSET
    assert (outcome.entries, outcome.skipped, outcome.gzip) == (2, 1, packed)
    assert outcome.bytes_out == len(URLSET)


def test_sitemap_index_entries_are_sitemaps() -> None:
    data = b"""<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    <sitemap><loc>http://a.test/s1.xml.gz</loc><lastmod>2025-03</lastmod></sitemap>
    </sitemapindex>"""
    entries, outcome = parse(SitemapParser(), data, 10)
    assert entries[0].kind is EntryKind.SITEMAP
    assert entries[0].lastmod == parse_w3c("2025-03-01")
    assert outcome.root is RootKind.SITEMAPINDEX


def test_text_sitemap() -> None:
    data = b"\xef\xbb\xbfhttp://a.test/1\r\nhttps://a.test/2\n\nnot a url\nhttp://a.test/3"
    entries, outcome = parse(SitemapParser(), data, 3)
    assert [e.url for e in entries] == ["http://a.test/1", "https://a.test/2", "http://a.test/3"]
    assert (outcome.root, outcome.skipped) == (RootKind.TEXT, 1)


def test_rss_and_atom_feeds_with_dates() -> None:
    rss = b"""<rss version="2.0"><channel><title>t</title>
      <item><title>A</title><link>http://a.test/a</link>
        <pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item>
      <item><guid isPermaLink="false">tag:1</guid></item>
      <item><guid>http://a.test/g</guid><dc:date xmlns:dc="http://purl.org/dc/elements/1.1/"
        >2003-06-11T00:00:00Z</dc:date></item></channel></rss>"""
    entries, outcome = parse(FeedParser(), rss, 5)
    assert [(e.url, e.title) for e in entries] == [
        ("http://a.test/a", "A"),
        ("http://a.test/g", ""),
    ]
    assert entries[0].published == 1055217600.0
    assert entries[1].date == parse_w3c("2003-06-11")
    assert (outcome.root, outcome.skipped) == (RootKind.RSS, 1)
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>E</title>
      <link rel="self" href="/self"/><link href="e1"/>
      <published>2003-12-13T08:29:29-04:00</published><updated>2003-12-13T18:30:02Z</updated>
      </entry></feed>"""
    entries, outcome = parse(FeedParser(base="http://a.test/feeds/all"), atom, 5)
    assert entries[0].url == "http://a.test/feeds/e1"
    assert entries[0].updated == parse_w3c("2003-12-13T18:30:02Z")
    assert entries[0].published == parse_w3c("2003-12-13T12:29:29Z")
    assert entries[0].date == entries[0].updated
    # the protocol accepts feeds as sitemaps: the entry's date is its lastmod
    sm, _ = parse(SitemapParser(), atom.replace(b'href="e1"', b'href="http://a.test/e1"'), 9)
    assert sm[0].lastmod == parse_w3c("2003-12-13T18:30:02Z")


def test_feed_parser_refuses_a_sitemap() -> None:
    entries, outcome = parse(FeedParser(), URLSET, 100)
    assert entries == []
    assert outcome.state is SourceState.NOT_SOURCE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2005", "2005-01-01T00:00:00Z"),
        ("2005-07", "2005-07-01T00:00:00Z"),
        ("2005-07-16T19:20+01:00", "2005-07-16T18:20:00Z"),
        ("2005-07-16 19:20:30.45Z", None),
        ("2005-02-30", None),
        ("yesterday", None),
    ],
)
def test_w3c_dates(text: str, expected: str | None) -> None:
    got = parse_w3c(text)
    if expected is None:
        assert got is None or text.endswith(".45Z")
    else:
        assert got == parse_w3c(expected)
    if text.endswith(".45Z"):
        assert got == pytest.approx(parse_w3c("2005-07-16T19:20:30Z") + 0.45)


def test_rfc822_dates() -> None:
    assert parse_rfc822("Sat, 07 Sep 2002 00:00:01 GMT") == 1031356801.0
    assert parse_rfc822("Sat, 07 Sep 2002 09:00:01 +0900") == 1031356801.0
    assert parse_rfc822("2002-09-07T00:00:01Z") == 1031356801.0  # ISO in pubDate
    assert parse_rfc822("garbage") is None


def test_url_limit_keeps_the_first_entries() -> None:
    rows = b"".join(b"<url><loc>http://a.test/%d</loc></url>" % i for i in range(30))
    data = b"<urlset>" + rows + b"</urlset>"
    entries, outcome = parse(SitemapParser(SourceLimits(max_urls=10)), data, 50)
    assert len(entries) == 10
    assert outcome.state is SourceState.URL_LIMIT


def test_size_limit_counts_uncompressed_bytes() -> None:
    rows = b"".join(b"<url><loc>http://a.test/%d</loc></url>\n" for i in range(5000))
    data = gzip.compress(b"<urlset>" + rows + b"</urlset>")
    parser = SitemapParser(SourceLimits(max_bytes=100_000, chunk=4096))
    entries, outcome = parse(parser, data, 1000)
    assert outcome.state is SourceState.SIZE_LIMIT
    assert outcome.bytes_out == 100_000
    assert 0 < len(entries) < 5000
    assert parser.done


def test_gzip_bomb_stops_early_with_bounded_output() -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = comp.compress(b"<urlset>") + comp.compress(b" " * (64 << 20)) + comp.flush()
    parser = SitemapParser()
    _, outcome = parse(parser, bomb, 8192)
    assert outcome.state is SourceState.BOMB
    assert outcome.bytes_out < 3 << 20  # stopped after the ratio floor, not at 64 MiB


def test_corrupt_and_truncated_gzip() -> None:
    packed = gzip.compress(URLSET)
    _, outcome = parse(SitemapParser(), packed[:-12], 100)
    assert outcome.state is SourceState.BAD_GZIP
    _, outcome = parse(SitemapParser(), packed[:10] + b"\xff" * 40 + packed[50:], 100)
    assert outcome.state in (SourceState.BAD_GZIP, SourceState.MALFORMED)


BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        b'<!ENTITY lol%d "%s">' % (i + 1, (b"&lol%s;" % (str(i).encode() if i else b"")) * 10)
        for i in range(9)
    )
    + b"]><urlset><url><loc>http://a.test/&lol9;</loc></url></urlset>"
)


@pytest.mark.parametrize(
    ("data", "state", "root"),
    [
        (BILLION_LAUGHS, SourceState.DTD, RootKind.NONE),
        (
            b'<!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]><urlset><url><loc>&x;</loc>'
            b"</url></urlset>",
            SourceState.DTD,
            RootKind.NONE,
        ),
        (
            b'<!DOCTYPE u [<!ENTITY % p SYSTEM "http://127.0.0.1:1/x.dtd"> %p;]><urlset/>',
            SourceState.DTD,
            RootKind.NONE,
        ),
        (b"<!DOCTYPE html><html><body><p>news<br></body></html>", SourceState.NOT_SOURCE, "html"),
        (b"<html><head><title>x</title><body>", SourceState.NOT_SOURCE, "html"),
        (b"<p>unclosed <b>html</p>", SourceState.NOT_SOURCE, RootKind.OTHER),
        (b"<urlset><url><loc>http://a.test/</url></urlset>", SourceState.MALFORMED, "urlset"),
        (
            b"<urlset><url><loc>http://a.test/&nbsp;</loc></url></urlset>",
            SourceState.MALFORMED,
            "urlset",
        ),
        (b"", SourceState.EMPTY, RootKind.NONE),
        (b"  \n ", SourceState.EMPTY, RootKind.NONE),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", SourceState.NOT_SOURCE, RootKind.OTHER),
    ],
)
def test_hostile_documents_end_in_one_state(data: bytes, state: SourceState, root) -> None:
    # A feed reader refuses a urlset at its root, before any error past it.
    parsers = [SitemapParser()] + ([] if root == "urlset" else [FeedParser()])
    for parser in parsers:
        entries, outcome = parse(parser, data, 16)
        assert outcome.state is state, outcome
        assert outcome.root is RootKind(root)
        assert all("lol" not in e.url for e in entries)


def test_a_doctype_without_declarations_is_harmless() -> None:
    rss = (
        b'<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
        b'"http://my.netscape.com/publish/formats/rss-0.91.dtd">'
        b"<rss><channel><item><link>http://a.test/1</link></item></channel></rss>"
    )
    entries, outcome = parse(FeedParser(), rss, 11)
    assert [e.url for e in entries] == ["http://a.test/1"]
    assert outcome.ok


def test_an_overlong_field_is_dropped_not_kept() -> None:
    data = b"<urlset><url><loc>http://a.test/" + b"x" * 20_000 + b"</loc></url></urlset>"
    entries, outcome = parse(SitemapParser(), data, 999)
    assert entries == []
    assert (outcome.state, outcome.skipped) == (SourceState.OK, 1)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), st.integers(1, 50))
def test_any_bytes_end_in_a_state_never_an_exception(data: bytes, step: int) -> None:
    for parser in (SitemapParser(), FeedParser()):
        _, outcome = parse(parser, data, step)
        assert isinstance(outcome.state, SourceState)

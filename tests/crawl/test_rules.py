"""The pure parts of the crawl package: URL filter, scope and parties, limits, settings."""

import asyncio

import pytest

from dustless.crawl._build import discovery_of, fetcher_of, politeness_of
from dustless.crawl.config import CrawlConfig
from dustless.crawl.discover import (
    Candidate,
    fetch_form,
    hostname_of,
)
from dustless.crawl.filter import UrlFilter
from dustless.crawl.scope import Scope, is_internal, registrable_domain, site_of
from dustless.errors import InvalidOption
from dustless.kinds import LinkKind
from dustless.store import SQLiteStore, Verdict
from dustless.url import authority_of


class Identity:
    """A stand-in normalizer: lowercases the path, as an unsafe step would."""

    def normalize(self, url):
        return url.lower()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://a.test/page", None),
        ("https://a.test/p?q=1", None),
        ("ftp://a.test/file", "scheme"),
        ("mailto:x@a.test", "scheme"),
        ("http://a.test/" + "x" * 300, "length"),
        ("http://a.test/img/logo.PNG", "extension"),
        ("http://a.test/doc.pdf?download=1", "extension"),
        ("http://a.test/page.html", None),
        ("http://a.test/a/b/a/b/a/b/", "trap"),
        ("http://a.test/cal/2024/01/cal/2024/01/cal/", "trap"),
        ("http://a.test/a/b/a/b", None),
    ],
)
def test_filter_reasons(url, reason):
    assert UrlFilter().reject(url, 0) == reason


def test_filter_depth_and_patterns_and_mime():
    f = UrlFilter(max_depth=2, deny_patterns=(r"/private/", r"\?sid="))
    assert f.reject("http://a.test/x", 3) == "depth"
    assert f.reject("http://a.test/private/x", 0) == "pattern"
    assert f.reject("http://a.test/x?sid=1", 0) == "pattern"
    assert f.allows_mime("text/html")
    assert f.allows_mime(None)
    assert not f.allows_mime("image/png")
    with pytest.raises(InvalidOption, match="deny pattern"):
        UrlFilter(deny_patterns=("(",))


def test_sites_and_scope():
    assert registrable_domain("news.example.co.kr") == "example.co.kr"
    assert registrable_domain("www.example.com") == "example.com"
    assert registrable_domain("127.0.0.1") == "127.0.0.1"
    assert site_of("a.b.test", Scope.HOST) == "a.b.test"
    assert site_of("a.b.test", Scope.DOMAIN) == "b.test"
    assert is_internal(Scope.DOMAIN, "b.test", "www.b.test")
    assert not is_internal(Scope.HOST, "b.test", "www.b.test")
    assert is_internal(Scope.ANY, "b.test", "elsewhere.test")


def test_url_pieces():
    assert fetch_form("http://a.test/p#frag") == "http://a.test/p"
    assert authority_of("http://user@a.test:8080/p?q") == "a.test:8080"
    assert authority_of("http://a.test?q") == "a.test"
    assert hostname_of("a.test:8080") == "a.test"
    assert hostname_of("[::1]:80") == "[::1]"


A = LinkKind.ANCHOR


def _discovery(**kw):
    return discovery_of(CrawlConfig(**kw), Identity())


def _store(d, *sites):
    """A crawl DB whose given seeds made parties of ``sites`` (seed ids 1, 2, …)."""
    store = SQLiteStore(":memory:")
    store.start_batch("{}", 0.0)
    for site in sites:
        [seed] = d.links([(f"http://{site}/", "a")], depth=0, seed_id=None, party_site="-")
        given = Candidate(seed.url, seed.identity, seed.host, seed.site, 0, seed.kind, None,
                          given=True)  # fmt: skip
        store.admit([given.admit(None)], d.limits, 1)
    return store


def _admit(store, d, cands, parent=1):
    """What the crawl DB admits: ``(url, depth, kind letter, seed id)`` of the queued ones."""
    result = store.admit([c.admit(parent) for c in cands], d.limits, 1)
    for a in result.admitted:
        if a.verdict is not Verdict.QUEUED:
            d.stats.reject(a.verdict.value)
    kinds = dict(store.query("SELECT id, kind FROM urls"))
    return [
        (c.url, a.depth, kinds[a.url_id], a.seed_id)
        for c, a in zip(cands, result.admitted, strict=True)
        if a.verdict is Verdict.QUEUED
    ]


def test_internal_links_one_level_deeper_and_max_depth():
    d = _discovery(max_depth=1)
    store = _store(d, "a.test")
    cands = d.links(
        [("http://a.test/x", A), ("http://a.test/X#f", A), ("http://b.test/", A)],
        depth=0,
        seed_id=1,
        party_site="a.test",
    )
    # /x and /X#f are one identity here: the second spelling is no link of its own, only a
    # repeat that admission notes (Admission.discover), never admitted in the DB
    assert [(c.url, c.depth, c.external, c.repeat) for c in cands] == [
        ("http://a.test/x", 1, False, False),
        ("http://a.test/X", 1, False, True),
        ("http://b.test/", 1, True, False),
    ]
    cands = [c for c in cands if not c.repeat]
    assert _admit(store, d, cands) == [
        ("http://a.test/x", 1, "a", 1),
        ("http://b.test/", 0, "s", 2),  # a new party: a seed at depth 0 (004 §2)
    ]
    deeper = d.links([("http://a.test/y", A)], depth=1, seed_id=1, party_site="a.test")
    assert _admit(store, d, deeper) == []
    assert d.stats.rejected["depth"] == 1


def test_limits_pages_sites():
    d = _discovery(max_pages=3, max_sites=2, max_pages_per_site=2)
    store = _store(d, "a.test")
    links = [(f"http://a.test/{i}", A) for i in range(3)]
    links += [("http://b.test/", A), ("http://c.test/", A)]
    admitted = _admit(store, d, d.links(links, depth=0, seed_id=1, party_site="a.test"))
    assert [url for url, *_ in admitted] == ["http://a.test/0", "http://b.test/"]
    assert d.stats.rejected == {"max-pages-per-site": 2, "max-sites": 1}
    d2 = _discovery(max_sites=1)
    store2 = _store(d2, "a.test")
    cands = d2.links([("http://c.test/", A)], depth=0, seed_id=1, party_site="a.test")
    assert _admit(store2, d2, cands) == []
    assert d2.stats.rejected == {"max-sites": 1}


def test_link_to_a_known_site_joins_its_party_deeper():
    d = _discovery(max_depth=5)
    store = _store(d, "a.test", "b.test")
    cands = d.links([("http://b.test/p", LinkKind.FRAME)], depth=3, seed_id=1, party_site="a.test")
    [(_url, depth, kind, seed_id)] = _admit(store, d, cands)
    assert (seed_id, depth, kind) == (2, 4, "f")


def test_redirect_keeps_depth():
    d = _discovery()
    [c] = d.links(
        [("http://a.test/new", LinkKind.REDIRECT)],
        depth=2,
        seed_id=1,
        party_site="a.test",
        redirect=True,
    )
    assert c.depth == 2


def test_config_round_trips_through_json_and_validates():
    c = CrawlConfig(
        seeds=("http://a.test/",), scope=Scope.DOMAIN, max_pages=10, resolve=("*.test:127.0.0.1",)
    )
    assert CrawlConfig.from_json(c.to_json()) == c
    assert asyncio.run(fetcher_of(c).resolver.resolve("a.test")) == "127.0.0.1"
    resolver = fetcher_of(CrawlConfig(resolve=("H.test:[::1]",))).resolver
    assert asyncio.run(resolver.resolve("h.test")) == "::1"
    assert politeness_of(c).min_delay == c.delay
    for bad in ({"max_pages": 0}, {"concurrency": 0}, {"delay": -1.0}, {"max_depth": -1}):
        with pytest.raises(InvalidOption):
            CrawlConfig(**bad)
    with pytest.raises(InvalidOption, match="NAME:IP"):
        fetcher_of(CrawlConfig(resolve=("nocolon",)))


def test_another_spelling_on_the_same_page_is_passed_on_as_a_repeat():
    class DropV:  # a normalizer under which ?v= does not matter (as a learned rule would)
        def normalize(self, url):
            return url.split("?")[0]

    d = discovery_of(CrawlConfig(), DropV())
    cands = d.links(
        [("http://a.test/c?v=1", A), ("http://a.test/c?v=1", A), ("http://a.test/c?v=2", A)],
        depth=1,
        seed_id=1,
        party_site="a.test",
    )
    # The same link twice is one candidate; another spelling of its identity comes too, as a
    # repeat: admission notes it (a fallback spelling, a learned rule's merge to undo).
    assert [(c.url, c.repeat) for c in cands] == [
        ("http://a.test/c?v=1", False),
        ("http://a.test/c?v=2", True),
    ]
    assert {c.identity for c in cands} == {"http://a.test/c"}
    assert d.stats.internal == 1  # a repeat is not a link of its own

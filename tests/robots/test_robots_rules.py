"""RFC 9309 details beyond Google's suite: fetch rules, cache policy, crawl-delay, sitemaps."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.errors import InvalidURL
from dustless.robots import (
    ROBOTS_CACHE_SECONDS,
    ROBOTS_MAX_BYTES,
    ROBOTS_MAX_REDIRECTS,
    ROBOTS_RETRY_SECONDS,
    Robots,
    RobotsCache,
    RobotsOutcome,
    classify_response,
    product_token,
    robots_for_response,
    robots_key,
    robots_url,
)

BLOCK_ALL = b"User-agent: *\nDisallow: /\n"


def test_constants_are_the_rfc_values():
    assert ROBOTS_MAX_BYTES == 500 * 1024
    assert ROBOTS_MAX_REDIRECTS == 5
    assert ROBOTS_CACHE_SECONDS == 86400


@pytest.mark.parametrize(
    ("status", "allowed"),
    [
        (200, False),  # parsed: the body blocks everything
        (204, False),
        (301, True),  # a 3xx reaching us = redirects exhausted → unavailable
        (400, True),
        (401, True),
        (403, True),
        (404, True),
        (410, True),
        (429, False),  # slow down ≠ "no robots.txt"
        (500, False),
        (503, False),
        (599, False),
        (None, False),  # unreachable: no response at all
        (100, False),
        (700, False),
    ],
)
def test_fetch_rules(status, allowed):
    robots = robots_for_response(status, BLOCK_ALL)
    assert robots.allowed("dustless", "http://h.test/page") is allowed


def test_outcomes():
    assert classify_response(200) is RobotsOutcome.PARSED
    assert classify_response(404) is RobotsOutcome.UNAVAILABLE
    assert classify_response(503) is RobotsOutcome.UNREACHABLE
    assert classify_response(None) is RobotsOutcome.UNREACHABLE


def test_body_past_the_cap_is_ignored():
    # §2.5: a rule after 500 KiB is not read.
    padding = b"# " + b"x" * ROBOTS_MAX_BYTES + b"\n"
    body = b"User-agent: *\nDisallow: /early\n" + padding + b"Disallow: /late\n"
    robots = robots_for_response(200, body)
    assert not robots.allowed("a", "/early")
    assert robots.allowed("a", "/late")
    assert not Robots.parse(body).allowed("a", "/late")


def test_allow_all_and_disallow_all():
    assert Robots.allow_all().allowed("x", "/anything")
    assert not Robots.disallow_all().allowed("x", "/anything")
    # §2.2.2: /robots.txt itself is implicitly allowed.
    assert Robots.disallow_all().allowed("x", "/robots.txt")
    assert Robots.disallow_all().crawl_delay("x") is None


def test_crawl_delay_by_group():
    robots = Robots.parse(
        b"User-agent: *\nCrawl-delay: 7\nDisallow: /x\n\n"
        b"User-agent: dustless\nDisallow: /y\nCrawl-delay: 2.5\n"
        b"User-agent: other\nCrawl-delay: nonsense\n"
    )
    assert robots.crawl_delay("dustless/0.1 (+https://example.com)") == 2.5
    assert robots.crawl_delay("SomeBot") == 7.0
    assert robots.crawl_delay("other") is None
    assert robots.allowed("dustless", "/x")  # its own group replaces '*'
    assert not robots.allowed("dustless", "/y")


@pytest.mark.parametrize("value", [b"-1", b"nan", b"inf", b"", b"1e400", b"\xff"])
def test_bad_crawl_delays_are_ignored(value):
    robots = Robots.parse(b"User-agent: *\nCrawl-delay: " + value + b"\n")
    assert robots.crawl_delay("a") is None


def test_sitemaps_recorded_anywhere_once():
    robots = Robots.parse(
        b"Sitemap: https://h.test/a.xml\nUser-agent: *\nDisallow: /\n"
        b"sitemap: https://h.test/b.xml\nSitemap: https://h.test/a.xml\nSitemap:\n"
    )
    assert robots.sitemaps == ("https://h.test/a.xml", "https://h.test/b.xml")


def test_product_token():
    assert product_token("dustless/0.1 (+https://x)") == "dustless"
    assert product_token("FooBot") == "foobot"
    assert product_token("Foo Bar") == "foo bar"  # Google: not the "foo" group


def test_merged_groups_and_bom_and_crlf():
    body = b"\xef\xbb\xbfUser-agent: a\r\nDisallow: /one\r\n\r\nUser-agent: a\rDisallow: /two\r"
    robots = Robots.parse(body)
    assert not robots.allowed("a", "/one")
    assert not robots.allowed("a", "/two")
    assert robots.allowed("a", "/three")


def test_wildcards_do_not_backtrack():
    pattern = b"/" + b"*a" * 200 + b"b"
    robots = Robots.parse(b"User-agent: *\nDisallow: " + pattern + b"\n")
    assert robots.allowed("x", "/" + "a" * 5000)
    assert not robots.allowed("x", "/" + "a" * 300 + "b")


def test_robots_key_and_url():
    assert robots_key("HTTP://Example.COM/a?b") == ("http", "example.com", 80)
    assert robots_key("https://h.test:8443/") == ("https", "h.test", 8443)
    assert robots_url("https://h.test:443/deep/page") == "https://h.test/robots.txt"
    assert robots_url("http://h.test:8080/x") == "http://h.test:8080/robots.txt"
    assert robots_url("http://[::1]:8080/x") == "http://[::1]:8080/robots.txt"
    for bad in ("ftp://h.test/", "/relative", "http://h.test:99999/", "http:///nohost"):
        with pytest.raises(InvalidURL):
            robots_key(bad)


class TestCache:
    key = ("http", "h.test", 80)

    def test_fresh_then_expired(self):
        cache = RobotsCache()
        assert cache.get(self.key, 0.0) is None
        robots = cache.put(self.key, 200, BLOCK_ALL, now=100.0)
        assert not robots.allowed("a", "/x")
        assert cache.get(self.key, 100.0 + ROBOTS_CACHE_SECONDS - 1) is robots
        assert cache.get(self.key, 100.0 + ROBOTS_CACHE_SECONDS) is None

    def test_unreachable_is_retried_sooner_and_disallows(self):
        cache = RobotsCache()
        robots = cache.put(self.key, 503, b"", now=0.0)
        assert not robots.allowed("a", "/x")
        assert cache.get(self.key, ROBOTS_RETRY_SECONDS - 1) is robots
        assert cache.get(self.key, ROBOTS_RETRY_SECONDS) is None
        assert ROBOTS_RETRY_SECONDS < ROBOTS_CACHE_SECONDS

    def test_unreachable_keeps_a_recent_good_copy(self):
        cache = RobotsCache(stale_seconds=3600)
        good = cache.put(self.key, 200, b"User-agent: *\nDisallow: /private\n", now=0.0)
        later = ROBOTS_CACHE_SECONDS + 10
        assert cache.put(self.key, None, b"", now=later) is good
        entry = cache.entry(self.key)
        assert entry.outcome is RobotsOutcome.UNREACHABLE
        assert entry.expires == later + ROBOTS_RETRY_SECONDS
        # Too old: the good copy is no longer trusted.
        much_later = ROBOTS_CACHE_SECONDS + 7200
        assert not cache.put(self.key, 500, b"", now=much_later).allowed("a", "/public")

    def test_not_found_allows_for_a_day(self):
        cache = RobotsCache()
        assert cache.put(self.key, 404, b"", now=0.0).allowed("a", "/x")
        assert cache.get(self.key, ROBOTS_CACHE_SECONDS - 1) is not None

    def test_bounded(self):
        cache = RobotsCache(max_entries=3)
        for port in range(10):
            cache.put(("http", "h.test", port), 404, b"", now=0.0)
        assert len(cache) == 3
        assert cache.get(("http", "h.test", 9), 0.0) is not None
        assert cache.get(("http", "h.test", 0), 0.0) is None


_robots_bytes = st.one_of(
    st.binary(max_size=2000),
    st.lists(
        st.sampled_from(
            [
                b"User-agent: *",
                b"user-agent foo",
                b"Disallow: /",
                b"Allow: /a*b$",
                b"disallow: *$",
                b"Crawl-delay: 3",
                b"Sitemap: x",
                b"#",
                b"\xff\xfe",
                b"\xef\xbb",
                b":",
                b"allow:%zz%e3\x80",
                b"",
            ]
        ),
        max_size=30,
    ).map(lambda lines: b"\r\n".join(lines)),
)


@settings(max_examples=300, deadline=None)
@given(body=_robots_bytes, url=st.text(max_size=60), agent=st.text(max_size=20))
def test_arbitrary_bytes_never_raise(body, url, agent):
    robots = Robots.parse(body)
    assert isinstance(robots.allowed(agent, url), bool)
    delay = robots.crawl_delay(agent)
    assert delay is None or delay >= 0
    for status in (200, 404, 503, None):
        assert isinstance(robots_for_response(status, body).allowed(agent, url), bool)

"""The pure parts: URL checks, blocklist, aliases, expiry, rate limit, proxies, UA families."""

import pytest

from dustless.shortener._clicks import referrer_host, ua_family
from dustless.shortener._ratelimit import ClientResolver, RateLimiter
from dustless.shortener._validate import (
    Blocklist,
    Rejected,
    UrlChecker,
    check_alias,
    parse_expiry,
)

CHECK = UrlChecker("rfc3986", ["sho.rt"])


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("javascript:alert(1)", "scheme"),
        ("JavaScript:alert(1)", "scheme"),
        ("data:text/html,<script>alert(1)</script>", "scheme"),
        ("ftp://example.com/file", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("https://user:secret@example.com/", "credentials"),
        ("https://user@example.com/", "credentials"),
        ("https://sho.rt/abc", "own-domain"),
        ("https://SHO.RT./abc", "own-domain"),
        ("example.com/no-scheme", "malformed"),
        ("http://exa mple.com/", "malformed"),
        ("http://example.com:99999/", "malformed"),
        ("http:///no-host", "malformed"),
        ("", "empty"),
        ("https://example.com/" + "a" * 2030, "too-long"),
        (42, "type"),
    ],
)
def test_bad_long_urls_are_rejected_naming_the_problem(url, problem):
    with pytest.raises(Rejected) as info:
        CHECK.check(url)
    assert info.value.problem == problem
    assert info.value.status == 400
    assert str(info.value)


def test_the_length_limit_is_2048_characters():
    base = "https://example.com/"
    assert CHECK.check(base + "a" * (2048 - len(base))).stored.endswith("a")
    with pytest.raises(Rejected, match="2049 characters"):
        CHECK.check(base + "a" * (2049 - len(base)))


def test_stored_form_is_rfc3986_and_keeps_the_fragment():
    checked = CHECK.check("HTTP://Example.COM:80/a/./b/../c?q=<x>#Top")
    assert checked.stored == "http://example.com/a/c?q=%3Cx%3E#Top"
    assert checked.key == checked.stored


def test_another_policy_changes_only_the_comparison_key():
    checker = UrlChecker("paper", [])
    checked = checker.check("http://Example.com/Pubs")
    assert checked.stored == "http://example.com/Pubs"
    assert checked.key == "http://example.com/pubs/"


def test_blocklist_matches_host_suffixes_and_path_prefixes(tmp_path):
    path = tmp_path / "blocked.txt"
    path.write_text(
        "# Safe Browsing expressions\nevil.example/\nexample.com/phish/\nhttp://BAD.test/x/../y\n"
    )
    blocklist = Blocklist.from_file(path)
    checker = UrlChecker("rfc3986", [], blocklist)
    for url in (
        "http://evil.example/",
        "https://a.b.EVIL.example/anything?q=1",
        "http://example.com/phish/login.html",
        "http://www.example.com/phish/",
        "http://bad.test/y",
    ):
        with pytest.raises(Rejected) as info:
            checker.check(url)
        assert info.value.status == 403, url
        assert info.value.problem == "blocked"
    for url in ("http://example.com/", "http://example.com/phishing", "http://notevil.example2/"):
        assert checker.check(url).stored


def test_an_unreadable_blocklist_is_one_clear_error(tmp_path):
    with pytest.raises(Exception, match="cannot read blocklist"):
        Blocklist.from_file(tmp_path / "missing.txt")


def test_aliases_are_checked_and_reserved():
    assert check_alias("my-link_2") == "my-link_2"
    for bad in ("ab", "-x-y", "has space", "a" * 65, "slash/y", "ünï"):
        with pytest.raises(Rejected, match="customSlug must be"):
            check_alias(bad)
    for reserved in ("api", "static", "openapi.json", "healthz"):
        with pytest.raises(Rejected):
            check_alias(reserved)


def test_expiry_must_be_a_future_time_with_a_zone():
    now = 1_700_000_000.0
    assert parse_expiry(None, now) is None
    assert parse_expiry(now + 10, now) == now + 10
    assert parse_expiry("2030-01-01T00:00:00Z", now) == 1_893_456_000.0
    for bad in ("2020-01-01T00:00:00Z", "2030-01-01T00:00:00", "tomorrow", True, [1], now - 1):
        with pytest.raises(Rejected) as info:
            parse_expiry(bad, now)
        assert info.value.problem == "expires"


def test_token_bucket_allows_a_burst_of_100_then_one_per_second():
    limiter = RateLimiter(rate=1.0, burst=100)
    now = 1000.0
    assert all(limiter.take("a", now) == 0.0 for _ in range(100))
    wait = limiter.take("a", now)
    assert wait == pytest.approx(1.0)
    assert RateLimiter.retry_after(wait) == "1"
    assert limiter.take("b", now) == 0.0  # buckets are per client
    assert limiter.take("a", now + 0.5) == pytest.approx(0.5)
    assert limiter.take("a", now + 1.0) == 0.0
    assert limiter.take("a", now + 1.0) > 0
    # A long pause refills up to the burst, not beyond.
    later = now + 10_000
    assert sum(limiter.take("a", later) == 0.0 for _ in range(150)) == 100


def test_rate_limit_zero_disables_it():
    limiter = RateLimiter(rate=0)
    assert not limiter.enabled
    assert all(limiter.take("a", 0.0) == 0.0 for _ in range(1000))


def test_retry_after_is_whole_seconds_rounded_up():
    assert RateLimiter.retry_after(0.01) == "1"
    assert RateLimiter.retry_after(2.2) == "3"


def test_proxy_headers_count_only_from_trusted_proxies():
    headers = {"x-forwarded-for": "6.6.6.6, 203.0.113.9"}
    assert ClientResolver().resolve("10.0.0.1", headers) == "10.0.0.1"
    trusted = ClientResolver(["10.0.0.0/8"])
    assert trusted.resolve("10.0.0.1", headers) == "203.0.113.9"
    assert trusted.resolve("192.0.2.1", headers) == "192.0.2.1"  # not our proxy: ignored
    chained = {"x-forwarded-for": "203.0.113.9, 10.0.0.7"}
    assert trusted.resolve("10.0.0.1", chained) == "203.0.113.9"
    assert trusted.resolve("10.0.0.1", {}) == "10.0.0.1"


@pytest.mark.parametrize(
    ("agent", "family"),
    [
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/120.0 Safari/537.36",
            "Chrome",
        ),
        ("Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0", "Firefox"),
        (
            "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 "
            "Safari/605.1.15",
            "Safari",
        ),
        ("Mozilla/5.0 ... Chrome/120.0 Safari/537.36 Edg/120.0", "Edge"),
        ("curl/8.5.0", "curl"),
        ("Mozilla/5.0 (compatible; Googlebot/2.1)", "Googlebot"),
        ("Mozilla/5.0 (compatible; SomeCrawler/1.0; +http://x.example/bot)", "bot"),
        ("", "(none)"),
        ("something else", "other"),
    ],
)
def test_user_agent_families(agent, family):
    assert ua_family(agent) == family


def test_referrer_hosts():
    assert referrer_host("") == ""
    assert referrer_host("https://News.Example.COM:8443/a?b") == "news.example.com"
    assert referrer_host("not a url") == "(invalid)"

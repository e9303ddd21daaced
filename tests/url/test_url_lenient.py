"""The lenient reading of a URL (``dustless.url.split_lenient`` and the slicing helpers): the
one place every package reads URL parts that must not raise — rules, robots keys, sitemap
origins, SURT keys, soft-404 probes."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dustless.errors import InvalidURL
from dustless.url import (
    authority_of,
    hostname_of,
    origin_of,
    port_number,
    replace_host,
    robots_key,
    robots_url,
    split_authority,
    split_lenient,
    with_authority,
)


@given(st.text())
def test_any_string_splits_and_recomposes(text: str) -> None:
    # RFC 3986 §5.3: recomposition of what Appendix B split gives the string back.
    assert split_lenient(text).unsplit() == text


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("http://u@H.x:81/a;b?q#f", ("http", "u@H.x:81", "/a;b", "q", "f")),
        ("/rel?x", (None, None, "/rel", "x", None)),
        ("mailto:a@b", ("mailto", None, "a@b", None, None)),
        ("http://h?#", ("http", "h", "", "", "")),
        ("", (None, None, "", None, None)),
    ],
)
def test_components(url: str, parts: tuple[str | None, ...]) -> None:
    p = split_lenient(url)
    assert (p.scheme, p.authority, p.path, p.query, p.fragment) == parts


def test_authority_pieces() -> None:
    assert split_authority("user:pw@Example.COM:8080") == ("example.com", "8080")
    assert split_authority("[2001:DB8::1]:443") == ("[2001:db8::1]", "443")
    assert split_authority("h:") == ("h", "")
    assert replace_host("u@a.test:81", "b.test") == "u@b.test:81"
    assert split_lenient("http://A.test:9/").host == "a.test"
    assert split_lenient("http://A.test:9/").port == "9"


def test_slicing_helpers() -> None:
    assert origin_of("http://a@b.test:1/x?y#z") == "http://a@b.test:1"
    assert origin_of("https://b.test?q") == "https://b.test"
    assert authority_of("http://a@b.test:1/x") == "b.test:1"
    assert hostname_of("[::1]:8080") == "[::1]"
    assert hostname_of("b.test:8080") == "b.test"
    assert with_authority("http://a@b.test:1/x", "c.test") == "http://a@c.test/x"
    assert with_authority("https://b.test?q#f", "c.test:8") == "https://c.test:8?q#f"
    assert with_authority("http://www.b.test", "b.test") == "http://b.test"


@pytest.mark.parametrize("port", ["", None])
def test_no_port(port: str | None) -> None:
    assert port_number(port) is None


@pytest.mark.parametrize("port", ["x", "65536", "-1", "٣"])
def test_bad_port(port: str) -> None:
    with pytest.raises(ValueError, match="invalid port"):
        port_number(port)


@pytest.mark.parametrize(
    "url",
    [
        "http://Example.COM/a",
        "HTTPS://example.com:8443/x?y",
        "http://user:pw@example.com:80/",
        "http://[::1]:8080/",
        "https://[2001:db8::1]/",
        "http://example.com:/",
    ],
)
def test_robots_key_agrees_with_urllib(url: str) -> None:
    # What the key was when urllib read it: a cached robots.txt keeps its key.
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}[parts.scheme.lower()]
    want = (parts.scheme.lower(), parts.hostname, parts.port or default)
    assert robots_key(url) == want


@pytest.mark.parametrize("url", ["ftp://h/", "http:///x", "http://h:99999/", "/x", "http://h:a/"])
def test_robots_key_refuses(url: str) -> None:
    with pytest.raises(InvalidURL):
        robots_key(url)


def test_robots_url() -> None:
    assert robots_url("HTTP://Ex.com:80/a") == "http://ex.com/robots.txt"
    assert robots_url("https://[::1]:8443/a?b") == "https://[::1]:8443/robots.txt"

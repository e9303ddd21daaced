"""split_url and host_of: RFC 3986 §3 components, and where a bad URL goes wrong."""

import pytest

from dustless.errors import InvalidURL, UsageError
from dustless.url import URLParts, host_of, split_url


def test_split_all_components():
    assert split_url("HTTP://User:Pw@Example.COM:8080/a/b;p?q=1&r#frag") == URLParts(
        scheme="HTTP",
        userinfo="User:Pw",
        host="Example.COM",
        port=8080,
        path="/a/b;p",
        query="q=1&r",
        fragment="frag",
    )


@pytest.mark.parametrize(
    ("url", "host", "port", "path", "query", "fragment"),
    [
        ("http://h", "h", None, "", None, None),
        ("http://h:/", "h", None, "/", None, None),
        ("http://h?", "h", None, "", "", None),
        ("http://h#", "h", None, "", None, ""),
        ("http://[::1]:80/x", "[::1]", 80, "/x", None, None),
        ("http://[v7.abc]/", "[v7.abc]", None, "/", None, None),
        ("http://h/a?b?c#d#e", "h", None, "/a", "b?c", "d#e"),
        ("http://a@b@h/", "h", None, "/", None, None),
    ],
)
def test_split_edges(url, host, port, path, query, fragment):
    parts = split_url(url)
    assert (parts.host, parts.port, parts.path, parts.query, parts.fragment) == (
        host,
        port,
        path,
        query,
        fragment,
    )


@pytest.mark.parametrize(
    ("url", "message", "position"),
    [
        ("", "empty URL", 0),
        ("   ", "empty URL", 0),
        ("www.example.com/x", "missing scheme", 0),
        ("1http://h/", "missing scheme", 0),
        ("http:x", "missing host", 5),
        ("http://", "missing host", 7),
        ("http://u@:1/", "missing host", 9),
        ("http://h:99999/", "invalid port '99999'", 9),
        ("http://h:-1/", "invalid port '-1'", 9),
        ("http://[::1/", "unclosed IPv6 literal at 7", 7),
        ("http://[::1]x/", "unexpected 'x' after IPv6 literal at 12", 12),
        ("http://h<i/", "invalid character '<' in host at 8", 8),
        ("http://%zz/", "bad percent-escape at 7", 7),
        ("http://u%@h/", "bad percent-escape at 8", 8),
        ("http://h/%", "bad percent-escape at 9", 9),
        ("  http://h/%", "bad percent-escape at 11", 11),
    ],
)
def test_invalid(url, message, position):
    with pytest.raises(InvalidURL) as exc:
        split_url(url)
    assert str(exc.value) == message
    assert exc.value.position == position
    assert isinstance(exc.value, UsageError)
    assert isinstance(exc.value, ValueError)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("HTTP://User@WWW.Example.COM:8080/x", "www.example.com"),
        ("http://BÜCHER.de/", "xn--bcher-kva.de"),
        ("http://[2001:DB8::0:1]:80/", "[2001:db8::1]"),
        ("http://ex%41mple.com/", "example.com"),
        ("http://10.0.0.1/", "10.0.0.1"),
    ],
)
def test_host_of(url, host):
    assert host_of(url) == host
    assert host_of(url) == host  # from the cache


def test_host_of_invalid():
    with pytest.raises(InvalidURL, match="missing host"):
        host_of("file:///etc/passwd")


def test_space_at_the_end_of_the_host_is_invalid_even_when_cached():
    from dustless.url import Normalizer

    n = Normalizer()
    assert n.normalize("http://a.com") == "http://a.com/"
    with pytest.raises(InvalidURL, match=r"^invalid character ' ' in host at 12$"):
        n.normalize("http://a.com ?x")


def test_idn_mapping_to_a_delimiter_is_invalid():
    from dustless.url import normalize

    with pytest.raises(InvalidURL, match="invalid international host"):
        normalize("http://¯/")  # UTS 46 maps U+00AF to a space


# WHATWG toascii.json cases where host_of differs, with the reason.
TOASCII_DIFFERENCES = {
    "xn--a.ß": "ASCII labels pass through unchecked, so the invalid punycode 'xn--a' is kept",
    "<\u0338": "'<' is checked against RFC 3986 §3.2.2 before UTS 46 composes '<'+U+0338 to '≮'",
    "<\xad\u0338": "'<' is checked against RFC 3986 §3.2.2 before UTS 46 composes it to '≮'",
    ">\u0338": "'>' is checked against RFC 3986 §3.2.2 before UTS 46 composes '>'+U+0338 to '≯'",
    ">\xad\u0338": "'>' is checked against RFC 3986 §3.2.2 before UTS 46 composes it to '≯'",
}


def test_whatwg_toascii_through_host_of():
    import json

    import support

    path = support.testdata("whatwg", "toascii.json")
    cases = [c for c in json.loads(path.read_text(encoding="utf-8")) if isinstance(c, dict)]
    differences = set()
    for case in cases:
        try:
            host = host_of("http://" + case["input"] + "/x")
        except InvalidURL:
            host = None
        if host != case["output"]:
            differences.add(case["input"])
    assert differences == set(TOASCII_DIFFERENCES)
    assert len(cases) - len(differences) == 82

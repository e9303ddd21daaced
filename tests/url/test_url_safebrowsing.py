"""Google Safe Browsing canonicalization and lookup expressions, with Google's own examples
(Safe Browsing v4 "URLs and Hashing", and the v5 IPv6 rules)."""

import subprocess
import sys

import pytest

from dustless.url import normalize, safebrowsing_canonicalize, safebrowsing_expressions

# Google's table, verbatim ("Canonicalize(x) = y").
GOOGLE_EXAMPLES = [
    ("http://host/%25%32%35", "http://host/%25"),
    ("http://host/%25%32%35%25%32%35", "http://host/%25%25"),
    ("http://host/%2525252525252525", "http://host/%25"),
    ("http://host/asdf%25%32%35asd", "http://host/asdf%25asd"),
    ("http://host/%%%25%32%35asd%%", "http://host/%25%25%25asd%25%25"),
    ("http://www.google.com/", "http://www.google.com/"),
    (
        "http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/%77%77%77%2E%65%62%61%79%2E%63%6F%6D/",
        "http://168.188.99.26/.secure/www.ebay.com/",
    ),
    (
        "http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/",
        "http://195.127.0.11/uploads/%20%20%20%20/.verify/.eBaysecure=updateuserdataxplimnbqmn-xplmvalidateinfoswqpcmlx=hgplmcx/",
    ),
    (
        "http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B",
        "http://host%23.com/~a!b@c%23d$e%25f^00&11*22(33)44_55+",
    ),
    ("http://3279880203/blah", "http://195.127.0.11/blah"),
    ("http://www.google.com/blah/..", "http://www.google.com/"),
    ("www.google.com/", "http://www.google.com/"),
    ("www.google.com", "http://www.google.com/"),
    ("http://www.evil.com/blah#frag", "http://www.evil.com/blah"),
    ("http://www.GOOgle.com/", "http://www.google.com/"),
    ("http://www.google.com.../", "http://www.google.com/"),
    ("http://www.google.com/foo\tbar\rbaz\n2", "http://www.google.com/foobarbaz2"),
    ("http://www.google.com/q?", "http://www.google.com/q?"),
    ("http://www.google.com/q?r?", "http://www.google.com/q?r?"),
    ("http://www.google.com/q?r?s", "http://www.google.com/q?r?s"),
    ("http://evil.com/foo#bar#baz", "http://evil.com/foo"),
    ("http://evil.com/foo;", "http://evil.com/foo;"),
    ("http://evil.com/foo?bar;", "http://evil.com/foo?bar;"),
    # Google writes this one in raw bytes: the host is the bytes 0x01 0x80, given here
    # percent-escaped (a Python str "\x80" is U+0080, which is two bytes in UTF-8).
    ("http://%01%80.com/", "http://%01%80.com/"),
    ("http://\x01\x80.com/", "http://%01%C2%80.com/"),
    ("http://notrailingslash.com", "http://notrailingslash.com/"),
    ("http://www.gotaport.com:1234/", "http://www.gotaport.com/"),
    ("  http://www.google.com/  ", "http://www.google.com/"),
    ("http:// leadingspace.com/", "http://%20leadingspace.com/"),
    ("http://%20leadingspace.com/", "http://%20leadingspace.com/"),
    ("%20leadingspace.com/", "http://%20leadingspace.com/"),
    ("https://www.securesite.com/", "https://www.securesite.com/"),
    ("http://host.com/ab%23cd", "http://host.com/ab%23cd"),
    ("http://host.com//twoslashes?more//slashes", "http://host.com/twoslashes?more//slashes"),
]


@pytest.mark.parametrize(("url", "expected"), GOOGLE_EXAMPLES)
def test_google_canonicalization_examples(url, expected):
    assert safebrowsing_canonicalize(url) == expected
    assert normalize(url, "google-safebrowsing") == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://0x7f.1/", "http://127.0.0.1/"),  # hex, fewer than four parts
        ("http://0177.0.0.1/", "http://127.0.0.1/"),  # octal
        ("http://127.1/", "http://127.0.0.1/"),
        ("http://1.2.3.4.5/", "http://1.2.3.4.5/"),  # not an IPv4 address
        ("http://[::FFFF:1.2.3.4]/", "http://1.2.3.4/"),  # v5: IPv4-mapped
        ("http://[64:ff9b::102:304]/", "http://1.2.3.4/"),  # v5: NAT64 (RFC 6052)
        ("http://[2001:DB8:0:0:0:0:0:1]:8080/x", "http://[2001:db8::1]/x"),  # v5: RFC 5952
        ("http://user:pw@BÜCHER.de/", "http://xn--bcher-kva.de/"),
        ("HTTP://a.com/b/./c/../d", "http://a.com/b/d"),
    ],
)
def test_host_rules(url, expected):
    assert safebrowsing_canonicalize(url) == expected


def test_expressions_google_example_with_query():
    assert safebrowsing_expressions("http://a.b.c/1/2.html?param=1") == [
        "a.b.c/1/2.html?param=1",
        "a.b.c/1/2.html",
        "a.b.c/",
        "a.b.c/1/",
        "b.c/1/2.html?param=1",
        "b.c/1/2.html",
        "b.c/",
        "b.c/1/",
    ]


def test_expressions_google_example_long_host():
    assert safebrowsing_expressions("http://a.b.c.d.e.f.g/1.html") == [
        "a.b.c.d.e.f.g/1.html",
        "a.b.c.d.e.f.g/",
        "c.d.e.f.g/1.html",
        "c.d.e.f.g/",
        "d.e.f.g/1.html",
        "d.e.f.g/",
        "e.f.g/1.html",
        "e.f.g/",
        "f.g/1.html",
        "f.g/",
    ]


def test_expressions_google_example_ip_host():
    assert safebrowsing_expressions("http://1.2.3.4/1/") == ["1.2.3.4/1/", "1.2.3.4/"]


def test_expressions_at_most_four_path_prefixes():
    expressions = safebrowsing_expressions("http://a.com/1/2/3/4/5/x.html?q")
    assert expressions == [
        "a.com/1/2/3/4/5/x.html?q",
        "a.com/1/2/3/4/5/x.html",
        "a.com/",
        "a.com/1/",
        "a.com/1/2/",
        "a.com/1/2/3/",
    ]


def test_safebrowsing_is_idempotent_on_examples():
    for url, expected in GOOGLE_EXAMPLES:
        assert safebrowsing_canonicalize(expected) == expected, url


def test_decoded_host_delimiters_stay_escaped_so_the_host_reads_the_same():
    # Deviation from Google's table (it has no such case): "@" ":" "/" "?" decoded in a host
    # are escaped again, or the URL would name another host when read back.
    assert safebrowsing_canonicalize("http://a%40b.com/") == "http://a%40b.com/"
    assert safebrowsing_canonicalize("http://a%3Ab.com:80/") == "http://a%3Ab.com/"
    assert safebrowsing_canonicalize("0::") == "http://0.0.0.0/"


def test_idna_before_the_ipv4_reading():
    # UTS 46 maps "¹" to "1": the host is then the IPv4 number 1, as a browser reads it.
    assert safebrowsing_canonicalize("http://¹/") == "http://0.0.0.1/"
    assert safebrowsing_canonicalize("http://a。b。/") == "http://a.b/"


# --- Google's Safe Browsing examples as bytes, end to end -----------------------------------

# Google's v4 table (33 cases) writes its \x01\x80 example in raw bytes; GOOGLE_EXAMPLES gives
# it two ways (as %-escapes, and as the str "\x80" = U+0080). As bytes, with the three IPv6
# examples of the v5 text ("[2001:0db8:0000::1]", IPv4-mapped, NAT64), there are 36 cases.
GOOGLE_V5_IPV6 = [
    ("http://[2001:0db8:0000::1]/", "http://[2001:db8::1]/"),
    ("http://[::ffff:1.2.3.4]/", "http://1.2.3.4/"),
    ("http://[64:ff9b::1.2.3.4]/", "http://1.2.3.4/"),
]
GOOGLE_AS_BYTES = (
    [
        (url.encode("utf-8"), expected)
        for url, expected in GOOGLE_EXAMPLES
        if url not in ("http://%01%80.com/", "http://\x01\x80.com/")
    ]
    + [(b"http://\x01\x80.com/", "http://%01%80.com/")]
    + [(url.encode("ascii"), expected) for url, expected in GOOGLE_V5_IPV6]
)


def test_there_are_googles_36_cases():
    assert len(GOOGLE_AS_BYTES) == 33 + 3
    assert len({url for url, _ in GOOGLE_AS_BYTES}) == 36


@pytest.mark.parametrize(("url", "expected"), GOOGLE_AS_BYTES)
def test_google_examples_as_bytes_through_the_api(url, expected):
    assert safebrowsing_canonicalize(url) == expected
    assert normalize(url, "google-safebrowsing") == expected


def test_google_examples_as_bytes_through_the_cli_arguments():
    # argv as bytes, exactly Google's (a leading space, tabs, CR and LF included)
    proc = dustless_normalize(
        "--policy", "google-safebrowsing", *(url for url, _ in GOOGLE_AS_BYTES)
    )
    assert proc.stderr == b""
    assert proc.returncode == 0
    got = proc.stdout.decode("utf-8").split("\n")[:-1]
    assert got == [expected for _, expected in GOOGLE_AS_BYTES]
    passed = sum(g == e for g, (_, e) in zip(got, GOOGLE_AS_BYTES, strict=True))
    assert passed == 36


def test_google_examples_as_bytes_on_stdin():
    # One URL a line: the one case holding a line feed cannot be a line, the other 35 are.
    cases = [(url, expected) for url, expected in GOOGLE_AS_BYTES if b"\n" not in url]
    assert len(cases) == 35
    proc = dustless_normalize(
        "--policy", "google-safebrowsing", stdin=b"\n".join(u for u, _ in cases)
    )
    assert proc.stderr == b""
    assert proc.returncode == 0
    assert proc.stdout.decode("utf-8").split("\n")[:-1] == [e for _, e in cases]


def dustless_normalize(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "dustless", "normalize", *args],
        input=stdin,
        capture_output=True,
        check=False,
    )

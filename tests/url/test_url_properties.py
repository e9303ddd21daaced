"""Property tests (CONVENTIONS §10): idempotence for every policy, the fast path agrees with
the step-by-step path, and a safe step never changes what the URL points to."""

import contextlib
import itertools
import re
from urllib.parse import unquote_to_bytes

import ada_url
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dustless.errors import InvalidURL
from dustless.url import (
    ORDER,
    POLICIES,
    STEPS,
    Normalizer,
    Policy,
    Safety,
    explain,
    get_policy,
    normalize,
    split_url,
)
from dustless.url._steps import CONFLICTS

_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

schemes = st.sampled_from(["http", "HTTP", "https", "Https", "ftp", "ws"])
hosts = st.sampled_from(
    [
        "example.com",
        "WWW.Example.COM",
        "www.com",
        "www.co.kr",
        "acm.or.kr",
        "ex%41mple.org",
        "ex%7cample.org",
        "bücher.de",
        "B%C3%BCcher.de",
        "127.0.0.1",
        "[2001:DB8:0::1]",
        "[::ffff:1.2.3.4]",
        "localhost",
        "a-b.c_d.net",
    ]
)
ports = st.sampled_from([None, "", "80", "443", "8080", "0080", "21"])
userinfos = st.sampled_from([None, "", "User", "u%3aP:pw", "Ü ser", "%7Euser"])
segment_atoms = st.sampled_from(
    [
        "",
        ".",
        "..",
        "a",
        "B",
        "index.html",
        "INDEX.HTM",
        "default.htm",
        "x.pdf",
        "%2f",
        "%2F",
        "%7e",
        "%41",
        "%2e",
        "%2E%2E",
        "%25",
        " ",
        "ü",
        "[x]",
        ";p=1",
        ":@!$",
        "%c3%a9",
    ]
)
segments = st.lists(
    st.lists(segment_atoms, min_size=1, max_size=2).map("".join), min_size=0, max_size=5
)
params = st.sampled_from(
    [
        "",
        "a=1",
        "b=",
        "b",
        "A=2",
        "utm_source=x",
        "fbclid=y",
        "PHPSESSID=z",
        "%26=%3D",
        "q=a+b",
        "q=%20",
        "id=",
        "sort=ascending",
        "x=%2f",
        "ü=ö",
        "c=?/",
    ]
)
queries = st.one_of(st.none(), st.lists(params, max_size=5).map("&".join))
fragments = st.one_of(st.none(), st.sampled_from(["", "top", "a#b", "%7E", "s p", "/../x"]))


@st.composite
def urls(draw):
    url = f"{draw(schemes)}://"
    userinfo = draw(userinfos)
    if userinfo is not None:
        url += userinfo + "@"
    url += draw(hosts)
    port = draw(ports)
    if port is not None:
        url += ":" + port
    parts = draw(segments)
    if parts:
        url += "/" + "/".join(parts)
    query = draw(queries)
    if query is not None:
        url += "?" + query
    fragment = draw(fragments)
    if fragment is not None:
        url += "#" + fragment
    return url


def _non_conflicting(steps):
    for a, b in CONFLICTS:
        if a in steps and b in steps:
            steps.discard(b)
    return frozenset(steps)


step_sets = st.sets(st.sampled_from([s for s in ORDER if s != "site-rules"])).map(_non_conflicting)
NAMED = [p for name, p in POLICIES.items() if name != "google-safebrowsing"]
EVERY_POLICY = [*POLICIES.values(), get_policy("paper + remove-www - add-trailing-slash")]


@SETTINGS
@given(url=urls(), policy=st.sampled_from(EVERY_POLICY))
def test_normalizing_twice_equals_once_for_every_policy(url, policy):
    once = normalize(url, policy)
    assert normalize(once, policy) == once


@SETTINGS
@given(url=urls(), steps=step_sets)
def test_idempotent_for_any_set_of_steps(url, steps):
    policy = Policy("any", steps)
    once = normalize(url, policy)
    assert normalize(once, policy) == once


@SETTINGS
@given(
    url=urls(),
    policy=st.sampled_from(
        [
            *NAMED,
            get_policy("aggressive + https-to-http"),
            get_policy("aggressive + remove-trailing-slash"),
        ]
    ),
)
def test_fast_path_agrees_with_explain(url, policy):
    result = Normalizer(policy).normalize(url)
    changes = explain(url, policy)
    # With no change, the result is the URL as written, without surrounding whitespace.
    assert (changes[-1].after if changes else url.strip(_C0_AND_SPACE)) == result


# Any text at all, lone surrogates included (what surrogateescape makes of stray bytes, and
# worse), plus pieces that make a URL likely, so that the steps are reached, not only parse().
_ANY_CHAR = st.characters(exclude_categories=())
_URL_PIECES = st.sampled_from(
    [
        "http://", "HTTPS://", "a://", "ws://", "www.", "WWW.", "xn--", "%", "%2", "%41", "%e9",
        "%25", "[", "]", "[::1]", ":", ":80", "@", "/", "/./", "/../", "//", "?", "&", "=",
        "#", ".", "..", "index.html", "ü", "😀", "％", "。", "\udc80", "\ud800", " ", "\t",
    ]
)  # fmt: skip
any_text = st.one_of(
    st.text(_ANY_CHAR, max_size=40),
    st.lists(st.one_of(_URL_PIECES, _ANY_CHAR), max_size=16).map("".join),
    st.text(_ANY_CHAR, max_size=40).map(lambda t: "http://" + t),
    st.text(_ANY_CHAR, max_size=40).map(lambda t: "HTTP://h.COM/" + t),
)
any_bytes = st.one_of(
    st.binary(max_size=40),
    st.binary(max_size=30).map(lambda b: b"http://" + b),
)
POLICY_NAMES = list(POLICIES)


def _once_and_twice(url, policy):
    """Normalizing is total (a URL or InvalidURL, nothing else) and idempotent."""
    try:
        once = normalize(url, policy)
        message = None
    except InvalidURL as exc:
        once, message = "", str(exc)
    if message is not None:
        assert message, url  # says what is wrong
        return
    assert normalize(once, policy) == once
    if policy != "google-safebrowsing":
        changes = explain(url, policy)
        assert (changes[-1].after if changes else once) == once


@settings(SETTINGS, max_examples=400)
@given(url=any_text)
@example(url="ttp://www.www.goog(le.com/")  # aggressive stripped one www. per pass
@example(url="http://%2\U0001f6005/")  # google-safebrowsing: "%" moved by punycode
@example(url="HTTP://b\xfc\udc80her.[de/")  # google-safebrowsing: bytes that are not UTF-8
@example(url="a://..[]~\\/@A:80#)]")  # google-safebrowsing: "[" in a host, no literal
@example(url="C://\ud800")  # a lone surrogate: InvalidURL, not UnicodeEncodeError
def test_arbitrary_text_is_a_url_or_invalid_url_and_idempotent(url):
    for policy in POLICY_NAMES:
        _once_and_twice(url, policy)


@settings(SETTINGS, max_examples=200)
@given(url=any_bytes)
@example(url=b"http://\x01\x80.com/")
def test_arbitrary_bytes_are_a_url_or_invalid_url_and_idempotent(url):
    for policy in POLICY_NAMES:
        _once_and_twice(url, policy)
        with contextlib.suppress(InvalidURL):
            assert normalize(url, policy).isascii()  # every byte kept, percent-encoded


@SETTINGS
@given(url=st.text(max_size=40).map(lambda t: "http://h/" + t))
def test_safebrowsing_is_total_on_http_urls(url):
    # Google's pipeline never refuses a URL with a host (it escapes whatever it finds).
    assert normalize(url, "google-safebrowsing").startswith("http://")


# --- a safe step never changes what the URL points to -------------------------------------

# "[" and "]" delimit only an IP literal (RFC 3986 §3.2.2): elsewhere they are not allowed
# raw, so they are data that encode-unsafe escapes. Likewise a second "#" in a fragment.
_RESERVED_SPLIT = re.compile(r"([:/?#@!$&'()*+,;=])")
_FRAGMENT_SPLIT = re.compile(r"([:/?@!$&'()*+,;=])")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


def _decoded(text, split=_RESERVED_SPLIT):
    # Reserved characters are structure (RFC 3986 §2.2); everything between them is compared
    # by its bytes, so "%7E" == "~" and " " == "%20", but "%2F" != "/".
    if text is None:
        return None
    return tuple(
        tok if i % 2 else unquote_to_bytes(tok.encode("utf-8", "surrogatepass"))
        for i, tok in enumerate(split.split(text))
    )


def _path_key(path):
    segments = [_decoded(s) for s in (path or "/").split("/")]
    out = []
    for i, seg in enumerate(segments):
        if seg in ((b".",), (b"..",)):
            if seg == (b"..",) and len(out) > 1:
                out.pop()
            if i == len(segments) - 1:
                out.append((b"",))
        else:
            out.append(seg)
    return tuple(out)


def resource(url):
    """What the URL points to, computed without dustless's steps."""
    parts = split_url(url)
    host = parts.host
    if host.startswith("["):
        host = host.lower()
        import ipaddress

        host = str(ipaddress.IPv6Address(host[1:-1]))
    else:
        host = ada_url.idna_to_ascii(unquote_to_bytes(host).decode("utf-8")).decode()
    scheme = parts.scheme.lower()
    return (
        scheme,
        _decoded(parts.userinfo),
        host,
        parts.port or _DEFAULT_PORTS.get(scheme),
        _path_key(parts.path),
        _decoded(parts.query),
        _decoded(parts.fragment, _FRAGMENT_SPLIT),
    )


SAFE_STEPS = [name for name, info in STEPS.items() if info.safety is Safety.SAFE]


@SETTINGS
@given(url=urls(), step=st.sampled_from(SAFE_STEPS))
def test_a_safe_step_keeps_the_resource(url, step):
    after = normalize(url, Policy(step, frozenset({step})))
    assert resource(after) == resource(url)


@SETTINGS
@given(url=urls())
def test_the_rfc3986_policy_keeps_the_resource(url):
    assert resource(normalize(url, "rfc3986")) == resource(url)


@pytest.mark.parametrize(
    ("step", "url"),
    [
        ("lowercase-path", "http://h/A"),
        ("remove-www", "http://www.h.com/"),
        ("sort-query", "http://h/?b&a"),
        ("https-to-http", "https://h/"),
    ],
)
def test_the_resource_oracle_sees_unsafe_changes(step, url):
    # The property above can fail: unsafe steps do change the resource.
    assert resource(normalize(url, Policy(step, frozenset({step})))) != resource(url)


def test_every_pair_of_path_steps_is_idempotent_on_tricky_paths():
    path_steps = [
        "remove-dot-segments",
        "collapse-slashes",
        "lowercase-path",
        "remove-default-document",
        "add-trailing-slash",
        "remove-trailing-slash",
    ]
    tricky = ["/a/index.html/", "/a//index.html//", "/A/./INDEX.HTML/", "/x/..//", "//", "/a/b"]
    for n in (1, 2, 3):
        for combo in itertools.combinations(path_steps, n):
            steps = _non_conflicting(set(combo))
            policy = Policy("combo", steps)
            for path in tricky:
                once = normalize("http://h" + path, policy)
                assert normalize(once, policy) == once, (combo, path)

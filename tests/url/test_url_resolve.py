"""resolve(): RFC 3986 §5.4's examples and the WHATWG URL test data.

Resolution follows WHATWG (what browsers do, via ada-url); the result with a host is then in
its rfc3986 form. Where the two standards disagree, WHATWG wins: those cases are listed in
``WHATWG_WINS`` with both answers.
"""

import json

import pytest

import support
from dustless.errors import InvalidURL
from dustless.url import normalize, resolve
from dustless.url._parse import BAD_ESCAPE_RE

BASE = "http://a/b/c/d;p?q"

# RFC 3986 §5.4.1 "Normal Examples" and §5.4.2 "Abnormal Examples", as the RFC gives them.
RFC_EXAMPLES = [
    ("g:h", "g:h"),
    ("g", "http://a/b/c/g"),
    ("./g", "http://a/b/c/g"),
    ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"),
    ("//g", "http://g"),
    ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"),
    ("#s", "http://a/b/c/d;p?q#s"),
    ("g#s", "http://a/b/c/g#s"),
    ("g?y#s", "http://a/b/c/g?y#s"),
    (";x", "http://a/b/c/;x"),
    ("g;x", "http://a/b/c/g;x"),
    ("g;x?y#s", "http://a/b/c/g;x?y#s"),
    ("", "http://a/b/c/d;p?q"),
    (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"),
    ("..", "http://a/b/"),
    ("../", "http://a/b/"),
    ("../g", "http://a/b/g"),
    ("../..", "http://a/"),
    ("../../", "http://a/"),
    ("../../g", "http://a/g"),
    # §5.4.2
    ("../../../g", "http://a/g"),
    ("../../../../g", "http://a/g"),
    ("/./g", "http://a/g"),
    ("/../g", "http://a/g"),
    ("g.", "http://a/b/c/g."),
    (".g", "http://a/b/c/.g"),
    ("g..", "http://a/b/c/g.."),
    ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"),
    ("./g/.", "http://a/b/c/g/"),
    ("g/./h", "http://a/b/c/g/h"),
    ("g/../h", "http://a/b/c/h"),
    ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("g;x=1/../y", "http://a/b/c/y"),
    ("g?y/./x", "http://a/b/c/g?y/./x"),
    ("g?y/../x", "http://a/b/c/g?y/../x"),
    ("g#s/./x", "http://a/b/c/g#s/./x"),
    ("g#s/../x", "http://a/b/c/g#s/../x"),
    ("http:g", "http:g"),  # §5.4.2: "for strict parsers"
]

# Where WHATWG and RFC 3986 disagree, WHATWG wins (a link means what browsers make of it):
# reference -> (RFC 3986 answer, our answer, why).
WHATWG_WINS = {
    "//g": (
        "http://g",
        "http://g/",
        "WHATWG serializes a special URL's empty path as '/', as does our rfc3986 form (§6.2.3)",
    ),
    "http:g": (
        "http:g",
        "http://a/b/c/g",
        "WHATWG reads a same-scheme special URL without '//' as relative "
        "(RFC 3986 §5.4.2's 'backward compatibility' reading)",
    ),
}


@pytest.mark.parametrize(
    ("reference", "rfc"), RFC_EXAMPLES, ids=[r or "<empty>" for r, _ in RFC_EXAMPLES]
)
def test_rfc3986_5_4_examples(reference, rfc):
    if reference in WHATWG_WINS:
        rfc_answer, ours, _why = WHATWG_WINS[reference]
        assert rfc == rfc_answer
        assert resolve(BASE, reference) == ours
    else:
        assert resolve(BASE, reference) == rfc


def test_resolve_result_is_in_rfc3986_form():
    assert resolve("HTTP://Example.COM:80/a/", "../%7Eb/./c d") == "http://example.com/~b/c%20d"


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("/search?q=100%", "http://a.test/search?q=100%25"),
        ("/foo%zz/", "http://a.test/foo%25zz/"),
        ("/foo%2", "http://a.test/foo%252"),
        ("x#%GH", "http://a.test/d/x#%25GH"),
        # Only the stray "%" is written %25; escapes beside it are normalized as usual.
        ("/%%41%2f", "http://a.test/%25A%2F"),
    ],
)
def test_a_stray_percent_in_a_link_becomes_percent_25(reference, expected):
    result = resolve("http://a.test/d/", reference)
    assert result == expected
    assert normalize(result, "rfc3986") == result  # a valid URI now, in its rfc3986 form


def test_normalize_itself_still_refuses_a_stray_percent():
    # Given as a URL (not found in a page), "%zz" is the caller's error, with its position.
    with pytest.raises(InvalidURL, match="bad percent-escape at 20"):
        normalize("http://example.com/a%zz", "rfc3986")


def test_resolve_invalid_is_invalid_url():
    with pytest.raises(InvalidURL):
        resolve("http://a/", "http://[::1")
    with pytest.raises(InvalidURL):
        resolve("not a base", "g")


def test_resolve_without_base_needs_an_absolute_url():
    assert resolve(None, "HTTP://A.com") == "http://a.com/"
    with pytest.raises(InvalidURL):
        resolve("", "relative/only")


# --- WHATWG urltestdata.json ---------------------------------------------------------------

_HOST_CHARS = (
    'the host holds characters outside RFC 3986 §3.2.2 reg-name (" ` { }), which WHATWG '
    "allows in opaque hosts: dustless refuses the URL"
)
# (input, base) -> reason. These raise InvalidURL where WHATWG gives a URL.
EXPECTED_FAILURES = {
    ("http://!\"$&'()*+,-.;=_`{}~/", None): _HOST_CHARS,
    ("foo://!\"$%&'()*+,-.;=_`{}~/", None): _HOST_CHARS,
    ("wss://!\"$&'()*+,-.;=_`{}~/", None): _HOST_CHARS,
    (
        "sc://\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16"
        "\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f!\"$%&'()*+,-.;=_`{}~/",
        None,
    ): _HOST_CHARS,
}


def _whatwg_cases():
    path = support.testdata("whatwg", "urltestdata.json")
    return [c for c in json.loads(path.read_text(encoding="utf-8")) if isinstance(c, dict)]


def test_whatwg_data_through_resolve():
    cases = _whatwg_cases()
    assert len(cases) == 891
    exact = rfc_form = stray_percent = refused = 0
    problems = []
    seen_failures = set()
    for case in cases:
        key = (case["input"], case["base"])
        try:
            result = resolve(case["base"], case["input"])
        except InvalidURL:
            if case.get("failure"):
                refused += 1
            elif key in EXPECTED_FAILURES:
                seen_failures.add(key)
            else:
                problems.append(("raised", key))
            continue
        if case.get("failure"):
            problems.append(("accepted", key, result))
        elif key in EXPECTED_FAILURES:
            problems.append(("listed failure now passes", key))
        elif result == case["href"]:
            exact += 1
        elif BAD_ESCAPE_RE.search(case["href"]) is None and result == normalize(
            case["href"], "rfc3986"
        ):
            # Same URL as WHATWG's, spelled in the rfc3986 form (escapes decoded or upper-
            # cased, characters WHATWG leaves raw in paths encoded, IDN hosts in punycode).
            rfc_form += 1
        elif result == normalize(BAD_ESCAPE_RE.sub("%25", case["href"]), "rfc3986"):
            # WHATWG keeps a "%" that starts no escape; the rfc3986 form writes it %25
            # (RFC 3986 §2.4), the rest as above.
            stray_percent += 1
        else:
            problems.append(("differs", key, case["href"], result))
    assert problems == []
    assert seen_failures == set(EXPECTED_FAILURES)
    assert refused == 267  # every must-fail case fails
    assert stray_percent == 18
    assert exact + rfc_form + stray_percent + refused + len(EXPECTED_FAILURES) == len(cases)
    assert exact >= 574  # non-special schemes keep an empty path (RFC 3986 §6.2.3)

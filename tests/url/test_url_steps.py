"""Each step on its own: names, safety classes, options, and seed 001's example for every step."""

import itertools
import re
from pathlib import Path

import pytest

from dustless.errors import InvalidPolicy
from dustless.url import ORDER, STEPS, Policy, Safety, StepOptions, explain, normalize
from support import require

ARCHITECTURE = Path(__file__).resolve().parents[3] / "shared" / "ARCHITECTURE.md"


def only(step, url, **options):
    """``url`` normalized by ``step`` alone (plus nothing else)."""
    return normalize(url, Policy(f"only {step}", frozenset({step}), StepOptions(**options)))


EXPECTED_SAFETY = {
    "safe": [
        "lowercase-scheme",
        "lowercase-host",
        "uppercase-percent-hex",
        "decode-unreserved",
        "remove-dot-segments",
        "remove-default-port",
        "empty-path-to-slash",
        "encode-unsafe",
        "idna-host",
    ],
    "usually": ["add-trailing-slash", "remove-fragment"],
    "unsafe": [
        "lowercase-path",
        "uppercase-path",
        "remove-trailing-slash",
        "add-www",
        "remove-www",
        "remove-default-document",
        "collapse-slashes",
        "remove-empty-query",
        "sort-query",
        "remove-query-params",
        "remove-default-query-values",
        "https-to-http",
        "site-rules",
    ],
}


def test_every_architecture_step_exists_with_its_safety_class():
    expected = {name: Safety(cls) for cls, names in EXPECTED_SAFETY.items() for name in names}
    assert {name: info.safety for name, info in STEPS.items()} == expected
    assert set(ORDER) == set(STEPS)


def test_step_names_match_architecture_md_when_present():
    require(ARCHITECTURE.exists(), "ARCHITECTURE.md not beside the repository")
    section = ARCHITECTURE.read_text(encoding="utf-8").split("## Names for the normalization")[1]
    section = section.split("Policies are named")[0]
    named = set(re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", section))
    assert named == set(STEPS)


def test_every_step_has_a_one_line_description():
    for info in STEPS.values():
        assert info.description
        assert "\n" not in info.description
        assert len(info.description) < 100


def test_trailing_slash_description_says_it_skips_extensions():
    assert "extension" in STEPS["add-trailing-slash"].description


def test_default_options():
    options = StepOptions()
    assert options.default_documents[:3] == ("index.htm", "index.html", "default.htm")  # 000
    # IIS's default documents besides 000's three (seed 001's example is default.asp)
    assert options.default_documents[3:] == (
        "default.asp",
        "default.aspx",
        "index.asp",
        "iisstart.htm",
    )
    assert "utm_*" in options.remove_params
    assert {"fbclid", "gclid"} <= set(options.remove_params)
    assert "jsessionid" in options.session_params


def test_options_are_frozen():
    with pytest.raises(AttributeError):
        StepOptions().default_documents = ()  # type: ignore[misc]


# --- seed 001, every step's example ------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "url", "expected"),
    [
        # 의미론을 보존하는 정규화
        ("uppercase-percent-hex", "http://example.com/foo%2a", "http://example.com/foo%2A"),
        ("lowercase-scheme", "HTTP://User@Example.COM/Foo", "http://User@Example.COM/Foo"),
        ("lowercase-host", "HTTP://User@Example.COM/Foo", "HTTP://User@example.com/Foo"),
        ("decode-unreserved", "http://example.com/%7Efoo", "http://example.com/~foo"),
        (
            "remove-dot-segments",
            "http://example.com/foo/./bar/baz/../qux",
            "http://example.com/foo/bar/qux",
        ),
        ("empty-path-to-slash", "http://example.com", "http://example.com/"),
        ("remove-default-port", "http://example.com:80/", "http://example.com/"),
        # 일반적으로 의미론을 유지하는 정규화
        ("add-trailing-slash", "http://example.com/foo", "http://example.com/foo/"),
        # 의미를 변경하는 정규화
        ("remove-fragment", "http://example.com/bar.html#section1", "http://example.com/bar.html"),
        ("https-to-http", "https://example.com/", "http://example.com/"),
        ("collapse-slashes", "http://example.com/foo//bar.html", "http://example.com/foo/bar.html"),
        ("remove-www", "http://www.example.com/", "http://example.com/"),
        (
            "sort-query",
            "http://example.com/display?lang=en&article=fred",
            "http://example.com/display?article=fred&lang=en",
        ),
        ("remove-empty-query", "http://example.com/display?", "http://example.com/display"),
        ("remove-default-document", "http://example.com/a/index.html", "http://example.com/a/"),
    ],
)
def test_seed_001_example(step, url, expected):
    assert only(step, url) == expected


def test_seed_001_both_rfc_examples_of_the_case_rule():
    assert normalize("HTTP://User@Example.COM/Foo") == "http://User@example.com/Foo"


@pytest.mark.parametrize("document", ["default.asp", "default.aspx", "index.asp", "iisstart.htm"])
def test_iis_default_documents_are_in_the_default_list(document):
    # seed 001's example http://example.com/default.asp → http://example.com/
    assert only("remove-default-document", f"http://example.com/{document}") == (
        "http://example.com/"
    )
    assert normalize(f"http://example.com/a/{document}?x=1", "aggressive") == (
        "http://example.com/a/?x=1"
    )
    # the paper's own list, as Table 1 and evaluate measure it, leaves them alone
    paper = ("index.htm", "index.html", "default.htm")
    url = f"http://example.com/{document}"
    assert only("remove-default-document", url, default_documents=paper) == url


def test_default_documents_match_whole_names_only():
    for url in ("http://h/mydefault.asp", "http://h/default.asp.bak", "http://h/default.asp/x"):
        assert only("remove-default-document", url) == url


def test_seed_001_unused_query_variable():
    url = "http://example.com/display?id=123&fakefoo=fakebar"
    assert only("remove-query-params", url, remove_params=("fakefoo",)) == (
        "http://example.com/display?id=123"
    )


def test_seed_001_default_query_values():
    url = "http://example.com/display?id=&sort=ascending"
    result = only("remove-default-query-values", url, default_query_values=(("sort", "ascending"),))
    assert result == "http://example.com/display"


def test_seed_001_url_list_rule_through_site_rules():
    class StoryRule:  # 001 "URI 리스트에 근거한 정규화": story?id=xyz ≡ story_xyz
        def apply(self, url: str) -> str:
            return re.sub(r"/story\?id=(\w+)$", r"/story_\1", url)

    result = only("site-rules", "http://example.com/story?id=xyz", site_rules=(StoryRule(),))
    assert result == "http://example.com/story_xyz"


# --- each step's edges -------------------------------------------------------------------


def test_encode_unsafe_uses_utf8_and_keeps_reserved():
    assert only("encode-unsafe", "http://h/a b/ü?q=ü ü#ä|") == (
        "http://h/a%20b/%C3%BC?q=%C3%BC%20%C3%BC#%C3%A4%7C"
    )
    assert only("encode-unsafe", "http://h/a/b;c=d?e=f&g=h/i?j") == "http://h/a/b;c=d?e=f&g=h/i?j"
    assert only("encode-unsafe", "http://us er@h/") == "http://us%20er@h/"
    assert only("encode-unsafe", "http://h/[x]^`{}") == "http://h/%5Bx%5D%5E%60%7B%7D"


def test_uppercase_percent_hex_everywhere_but_not_elsewhere():
    assert only("uppercase-percent-hex", "http://u%3a@h/p%2f?q%3d#f%2f") == (
        "http://u%3A@h/p%2F?q%3D#f%2F"
    )
    assert only("uppercase-percent-hex", "http://h/abc%2fdef") == "http://h/abc%2Fdef"


def test_decode_unreserved_never_decodes_reserved_delimiters():
    url = "http://h/%2F%3F%23%25%26%3D%2f%3f?%2F%3F%23%25%26%3D#%2F%23"
    assert only("decode-unreserved", url) == url
    assert only("decode-unreserved", "http://h/%41%61%30%2D%2E%5F%7E") == "http://h/Aa0-._~"
    assert only("decode-unreserved", "http://h/%C3%A9") == "http://h/%C3%A9"


def test_remove_dot_segments_rfc_5_2_4_cases():
    for path, expected in [
        ("/a/b/c/./../../g", "/a/g"),
        ("/..", "/"),
        ("/../..", "/"),
        ("/a/..", "/"),
        ("/a/.", "/a/"),
        ("/a/./b", "/a/b"),
        ("/a/...", "/a/..."),
        ("/.a/..b", "/.a/..b"),
        ("/a//../b", "/a/b"),
    ]:
        assert only("remove-dot-segments", "http://h" + path) == "http://h" + expected


def test_remove_default_port_per_scheme():
    assert only("remove-default-port", "https://h:443/") == "https://h/"
    assert only("remove-default-port", "https://h:80/") == "https://h:80/"
    assert only("remove-default-port", "http://h:/") == "http://h/"
    assert only("remove-default-port", "http://h:0080/") == "http://h/"
    assert only("remove-default-port", "http://h:8080/") == "http://h:8080/"
    assert only("remove-default-port", "ftp://h:21/") == "ftp://h/"


def test_https_to_http_drops_the_https_default_port():
    assert only("https-to-http", "https://h:443/x") == "http://h/x"
    assert only("https-to-http", "https://h:8443/x") == "http://h:8443/x"
    assert only("https-to-http", "http://h/x") == "http://h/x"


def test_lowercase_host_keeps_userinfo_and_ipv6():
    assert only("lowercase-host", "http://User:PassWord@EXAMPLE.com/") == (
        "http://User:PassWord@example.com/"
    )
    assert only("lowercase-host", "http://[2001:DB8:0:0::1]:8080/") == "http://[2001:db8::1]:8080/"
    assert only("lowercase-host", "http://EX%7Cample/") == "http://ex%7Cample/"


def test_idna_host_to_punycode():
    assert only("idna-host", "http://bücher.de/") == "http://xn--bcher-kva.de/"
    assert only("idna-host", "http://한국.kr/") == "http://xn--3e0b707e.kr/"
    assert only("idna-host", "http://b%C3%BCcher.de/") == "http://xn--bcher-kva.de/"
    assert only("idna-host", "http://☃.net/") == "http://xn--n3h.net/"  # as browsers do
    assert only("idna-host", "http://Example.COM/") == "http://Example.COM/"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com", "http://example.com/"),
        ("HTTPS://example.com?q", "HTTPS://example.com/?q"),
        ("ws://example.com#f", "ws://example.com/#f"),
        ("wss://example.com", "wss://example.com/"),
        # RFC 3986 §6.2.3: only where the scheme defines an empty path as "/"
        ("a://b", "a://b"),
        ("ftp://example.com", "ftp://example.com"),
        ("foo://example.com?q", "foo://example.com?q"),
    ],
)
def test_empty_path_to_slash_only_where_the_scheme_says_so(url, expected):
    assert only("empty-path-to-slash", url) == expected
    for policy in ("rfc3986", "aggressive"):
        assert normalize(url, policy).endswith(("/", "/?q", "/#f")) == expected.endswith(
            ("/", "/?q", "/#f")
        )


def test_remove_www_removes_every_leading_www_label():
    # one www. per pass would make normalizing twice differ from once
    assert only("remove-www", "http://www.www.example.com/") == "http://example.com/"
    assert only("remove-www", "http://WWW.www.Example.com/") == "http://Example.com/"
    assert only("remove-www", "http://www.www.com/") == "http://www.com/"
    assert normalize("ttp://www.www.goog(le.com/", "aggressive") == "ttp://goog(le.com/"


def test_www_steps_never_leave_a_public_suffix():
    assert only("remove-www", "http://www.com/") == "http://www.com/"
    assert only("remove-www", "http://www.co.kr/") == "http://www.co.kr/"
    assert only("remove-www", "http://www.acm.or.kr/") == "http://acm.or.kr/"
    assert only("remove-www", "http://www.1.2.3/") == "http://1.2.3/"
    assert only("remove-www", "http://WWW.acm.org/") == "http://acm.org/"
    assert only("add-www", "http://acm.org/") == "http://www.acm.org/"
    assert only("add-www", "http://snu.ac.kr/") == "http://www.snu.ac.kr/"
    assert only("add-www", "http://blog.acm.org/") == "http://blog.acm.org/"
    assert only("add-www", "http://co.kr/") == "http://co.kr/"
    assert only("add-www", "http://localhost/") == "http://localhost/"
    assert only("add-www", "http://10.0.0.1/") == "http://10.0.0.1/"
    assert only("add-www", "http://[::1]/") == "http://[::1]/"


def test_path_case_steps_keep_escapes():
    assert only("lowercase-path", "http://H/ASP/Own%2Fership.ASP?Q=A") == (
        "http://H/asp/own%2Fership.asp?Q=A"
    )
    assert only("uppercase-path", "http://h/asp/own%2fership.asp") == (
        "http://h/ASP/OWN%2fERSHIP.ASP"
    )


def test_trailing_slash_steps():
    assert only("add-trailing-slash", "http://h/a/paper.pdf") == "http://h/a/paper.pdf"
    assert only("add-trailing-slash", "http://h/a/") == "http://h/a/"
    assert only("add-trailing-slash", "http://h/a?x=1.2") == "http://h/a/?x=1.2"
    assert only("remove-trailing-slash", "http://h/a//") == "http://h/a"
    assert only("remove-trailing-slash", "http://h/") == "http://h/"


def test_remove_default_document_only_last_segment_exact_name():
    assert only("remove-default-document", "http://h/index.html/x") == "http://h/index.html/x"
    assert only("remove-default-document", "http://h/myindex.html") == "http://h/myindex.html"
    assert only("remove-default-document", "http://h/a/index.htm?x#y") == "http://h/a/?x#y"


def test_remove_query_params_patterns_names_and_sessions():
    url = "http://h/p?utm_source=a&id=1&UTM_X=2&fbclid=3&PHPSESSID=4&b=&c"
    assert only("remove-query-params", url) == "http://h/p?id=1&UTM_X=2&b=&c"
    assert only("remove-query-params", "http://h/p?utm_source=a") == "http://h/p"
    assert only("remove-query-params", url, remove_params=("id", "b*"), session_params=()) == (
        "http://h/p?utm_source=a&UTM_X=2&fbclid=3&PHPSESSID=4&c"
    )


def test_sort_query_keeps_bytes_blanks_and_repeated_order():
    url = "http://h/?b=2&a=&c&a=1&%41=x&a+b=%20&z=%2F"
    assert only("sort-query", url) == "http://h/?%41=x&a=&a=1&a+b=%20&b=2&c&z=%2F"
    assert only("sort-query", "http://h/?x=2&&x=1") == "http://h/?x=2&x=1"


def test_conflicting_steps_are_refused():
    with pytest.raises(InvalidPolicy):
        Policy("bad", frozenset({"add-www", "remove-www"}))
    with pytest.raises(InvalidPolicy):
        Policy("bad", frozenset({"no-such-step"}))


def test_order_percent_first_then_case():
    # decode-unreserved before lowercase-host: the decoded "A" must still be lowercased.
    assert normalize("http://ex%41mple.COM/") == "http://example.com/"
    # decode-unreserved before remove-dot-segments: "%2E%2E" is ".." (RFC 3986 §6.2.2.3)
    assert normalize("http://h/a/%2E%2E/b") == "http://h/b"


def test_explain_lists_each_changing_step_in_order():
    changes = explain("HTTP://Example.COM:80/a/../b", "rfc3986")
    assert [c.step for c in changes] == [
        "lowercase-scheme",
        "lowercase-host",
        "remove-default-port",
        "remove-dot-segments",
    ]
    assert changes[0].before == "HTTP://Example.COM:80/a/../b"
    assert changes[-1].after == "http://example.com/b"
    for first, second in itertools.pairwise(changes):
        assert first.after == second.before
    assert explain("http://example.com/", "paper") == []


def test_site_rules_may_be_unhashable_objects():
    class Rule:
        __hash__ = None  # e.g. a mutable dataclass

        def apply(self, url: str) -> str:
            return url.replace("/old/", "/new/")

    assert only("site-rules", "http://h/old/x", site_rules=(Rule(),)) == "http://h/new/x"


def test_package_docstring_examples():
    import doctest

    import dustless.url

    result = doctest.testmod(dustless.url)
    assert result.attempted >= 2
    assert result.failed == 0


def test_remove_dot_segments_reads_escaped_dots():
    # "%2E" is "." (RFC 3986 §2.3), with or without decode-unreserved before it.
    assert only("remove-dot-segments", "http://h/a/%2e%2E/b/%2e/c") == "http://h/b/c"
    assert only("remove-dot-segments", "http://h/a/.%2e") == "http://h/"
    assert only("remove-dot-segments", "http://h/a/%2e%2e%2e") == "http://h/a/%2e%2e%2e"

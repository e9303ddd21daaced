"""The named policies, policy expressions, and seed 000's worked examples (§2.2, §3, §4)."""

import dataclasses
from itertools import groupby

import pytest

from dustless.errors import InvalidPolicy, InvalidURL
from dustless.url import (
    ORDER,
    POLICIES,
    STEPS,
    Normalizer,
    Safety,
    get_policy,
    normalize,
)

SAFE = {name for name, info in STEPS.items() if info.safety is Safety.SAFE}


def test_the_five_named_policies():
    assert list(POLICIES) == ["rfc3986", "standard", "paper", "aggressive", "google-safebrowsing"]
    assert POLICIES["rfc3986"].steps == SAFE
    assert POLICIES["standard"].steps == SAFE | {"remove-fragment"}
    assert POLICIES["paper"].steps == SAFE | {
        "remove-fragment",
        "lowercase-path",
        "add-trailing-slash",
    }
    assert POLICIES["aggressive"].steps == POLICIES["paper"].steps | {
        "remove-www",
        "remove-default-document",
        "collapse-slashes",
        "remove-empty-query",
        "sort-query",
        "remove-query-params",
    }
    assert POLICIES["google-safebrowsing"].pipeline == "google-safebrowsing"


def test_policies_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        POLICIES["paper"].name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        POLICIES["new"] = POLICIES["paper"]  # type: ignore[index]


def test_policy_safety():
    assert POLICIES["rfc3986"].safety is Safety.SAFE
    assert POLICIES["standard"].safety is Safety.USUALLY
    assert POLICIES["paper"].safety is Safety.UNSAFE


def test_ordered_steps_follow_the_one_order():
    for policy in POLICIES.values():
        steps = policy.ordered_steps()
        assert list(steps) == sorted(steps, key=ORDER.index)


@pytest.mark.parametrize(
    ("expr", "added", "removed"),
    [
        ("paper + remove-www - add-trailing-slash", {"remove-www"}, {"add-trailing-slash"}),
        ("paper +remove-www -add-trailing-slash", {"remove-www"}, {"add-trailing-slash"}),
        ("  standard  ", set(), set()),
        ("rfc3986 - remove-dot-segments", set(), {"remove-dot-segments"}),
    ],
)
def test_policy_expressions(expr, added, removed):
    base = POLICIES[expr.split()[0]]
    policy = get_policy(expr)
    assert policy.steps == (base.steps | added) - removed


def test_expression_result_normalizes_as_described():
    url = "http://WWW.acm.org/Pubs"
    assert normalize(url, "paper + remove-www - add-trailing-slash") == "http://acm.org/pubs"


def test_enabling_a_step_replaces_its_opposite():
    policy = get_policy("paper + remove-trailing-slash")
    assert "add-trailing-slash" not in policy.steps
    assert normalize("http://h/a/", policy) == "http://h/a"


@pytest.mark.parametrize(
    "expr",
    [
        "nope",
        "paper + nope",
        "paper remove-www",
        "paper ++ remove-www",
        "google-safebrowsing + sort-query",
        "",
    ],
)
def test_bad_policy_expressions(expr):
    with pytest.raises(InvalidPolicy):
        get_policy(expr)


def test_with_options():
    policy = POLICIES["aggressive"].with_options(default_documents=("index.php",))
    assert normalize("http://h/a/index.php", policy) == "http://h/a/"
    assert normalize("http://h/a/index.html", policy) == "http://h/a/index.html"
    with pytest.raises(InvalidPolicy):
        POLICIES["paper"].with_options(no_such_option=1)


@pytest.mark.parametrize(
    ("policy", "url", "expected"),
    [
        (
            "rfc3986",
            "HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top",
            "http://example.com/a/c?b=2&a=1#top",
        ),
        (
            "standard",
            "HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top",
            "http://example.com/a/c?b=2&a=1",
        ),
        (
            "paper",
            "HTTP://Example.COM:80/a/./B/../C?b=2&a=1#top",
            "http://example.com/a/c/?b=2&a=1",
        ),
        (
            "aggressive",
            "HTTP://www.Example.COM:80//a/./Index.HTML?utm_source=x&b=2&a=1&jsessionid=9#top",
            "http://example.com/a/?a=1&b=2",
        ),
        ("aggressive", "http://www.example.com/display?", "http://example.com/display/"),
        (
            "google-safebrowsing",
            "http://www.GOOgle.com:8080/a/../b//c?x=1#frag",
            "http://www.google.com/b/c?x=1",
        ),
    ],
)
def test_named_policy_examples(policy, url, expected):
    assert normalize(url, policy) == expected


# --- correctness points where the peers break (bench/normalize_peers.py) ---------------


@pytest.mark.parametrize("policy", ["rfc3986", "standard", "paper", "aggressive"])
def test_reserved_delimiters_stay_encoded(policy):
    result = normalize("http://h/a%2Fb%3Fc%23d%25e%26f%3Dg?x=%2F%3F%23%25%26%3D", policy)
    for escape in ("%2F", "%3F", "%23", "%25", "%26", "%3D"):
        assert result.count(escape) == 2, escape


def test_sort_query_keeps_each_parameter_and_blank_values():
    url = "http://h/?b=&a=%2B&c&a=x+y&d=%3D"
    assert normalize(url, "aggressive") == "http://h/?a=%2B&a=x+y&b=&c&d=%3D"


@pytest.mark.parametrize("policy", ["rfc3986", "standard", "paper", "aggressive"])
def test_userinfo_is_not_lowercased(policy):
    assert normalize("http://User:PassWord@Example.com/", policy).startswith(
        "http://User:PassWord@example.com/"
    )


@pytest.mark.parametrize("policy", ["rfc3986", "standard", "paper", "aggressive"])
def test_idn_becomes_punycode(policy):
    assert normalize("http://BÜCHER.de/", policy) == "http://xn--bcher-kva.de/"


@pytest.mark.parametrize("policy", ["rfc3986", "standard", "paper", "aggressive"])
def test_ipv6_literal_and_port_survive(policy):
    assert normalize("http://[2001:DB8::1]:8080/", policy) == "http://[2001:db8::1]:8080/"
    assert normalize("http://[::1]/", policy) == "http://[::1]/"
    assert normalize("http://127.0.0.1:8080/", policy) == "http://127.0.0.1:8080/"


def test_www_com_is_not_turned_into_com():
    assert normalize("http://www.com/", "aggressive") == "http://www.com/"


@pytest.mark.parametrize("policy", ["rfc3986", "standard", "paper", "aggressive"])
@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("example.com/a", "missing scheme"),
        ("//example.com/a", "missing scheme"),
        ("http:/example.com/a", "missing host"),
        ("http:///a", "missing host"),
        ("mailto:someone@example.com", "missing host"),
        ("http://example.com:99999/", "invalid port '99999'"),
        ("http://example.com:8o/", "invalid port '8o'"),
        ("http://exa mple.com/", "invalid character ' ' in host at 10"),
        ("http://[::g]/", "invalid IPv6 address '[::g]' at 7"),
        ("http://example.com/a%zz", "bad percent-escape at 20"),
        ("http://example.com/?q=%", "bad percent-escape at 22"),
        ("", "empty URL"),
    ],
)
def test_invalid_urls_say_what_and_where(policy, url, message):
    with pytest.raises(InvalidURL) as exc:
        normalize(url, policy)
    assert str(exc.value) == message
    assert exc.value.url == url


def test_bad_percent_escape_position_is_its_character_offset():
    with pytest.raises(InvalidURL, match=r"^bad percent-escape at 14$") as exc:
        normalize("http://a.b/cd/%g1")
    assert exc.value.position == 14


# --- Normalizer ------------------------------------------------------------------------


def test_normalizer_keeps_its_policy_and_cache_is_invisible():
    n = Normalizer(get_policy("paper - lowercase-path"))
    assert n.policy.name == "paper - lowercase-path"
    for _ in range(2):
        assert n.normalize("HTTP://A.com:80/X") == "http://a.com/X/"


def test_leading_and_trailing_whitespace_is_not_part_of_the_url():
    assert normalize("  http://a.com/x \r\n") == "http://a.com/x"


# --- seed 000 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.com:80/", "http://example.com/"),  # 첫째: default port
        ("http://EXAMPLE.com", "http://example.com"),  # 둘째: case of scheme and host
        ("http://example.com", "http://example.com/"),  # 셋째: empty path
        ("http://example.com/~smith", "http://example.com/%7Esmith"),  # 넷째: encoding
        ("http://example.com/list.htm#chap1", "http://example.com/list.htm"),  # 다섯째: fragment
    ],
)
def test_seed_000_2_2_standard_normalization_merges(a, b):
    assert normalize(a, "standard") == normalize(b, "standard")


def test_seed_000_2_2_forms():
    assert normalize("http://example.com:80/", "standard") == "http://example.com/"
    assert normalize("http://EXAMPLE.com", "standard") == "http://example.com/"
    assert normalize("http://example.com/%7Esmith", "standard") == "http://example.com/~smith"
    assert (
        normalize("http://example.com/list.htm#chap1", "standard") == "http://example.com/list.htm"
    )


def test_seed_000_2_2_standard_keeps_the_paper_s_two_urls_apart():
    # §1: "http://www.acm.org/pubs" and ".../pubs/" are not merged by the standard ...
    assert normalize("http://www.acm.org/pubs", "standard") != normalize(
        "http://www.acm.org/pubs/", "standard"
    )
    # ... and are by the paper's recommendation.
    assert normalize("http://www.acm.org/pubs", "paper") == normalize(
        "http://www.acm.org/pubs/", "paper"
    )


# 000 §3 Example: ten URLs (scheme omitted in the paper), u1 … u10.
U = [
    "www.microsoft.com/",
    "www.microsoft.com/default.asp",
    "www.microsoft.com/index.htm",
    "www.microsoft.com/index.html",
    "nasdaq.com/asp/ownership.asp",
    "nasdaq.com/ASP/ownership.asp",
    "ietf.org/tao.html",
    "ietf.org/TAO.html",
    "ietf.org/Tao.html",
    "www.acm.org/",
]


def candidate_sets(policy):
    """Equivalence-candidate sets with two or more members, as 1-based URL numbers."""
    keyed = sorted((normalize("http://" + u, policy), i + 1) for i, u in enumerate(U))
    sets = [[i for _key, i in group] for _k, group in groupby(keyed, key=lambda t: t[0])]
    return sorted(s for s in sets if len(s) > 1)


def redundancy(downloads):
    """000 §3 formula (1): Σ(n(D_i) − un(D_i)) / Σ n(D_i)."""
    return sum(len(d) - len(set(d)) for d in downloads) / sum(len(d) for d in downloads)


def coverage_loss(n_normal, downloads):
    """000 §3 formula (2): 1 − N_normal / Σ un(D_i)."""
    return 1 - n_normal / sum(len(set(d)) for d in downloads)


def test_seed_000_3_default_page_classification():
    # "웹 서버의 기본 페이지에 따라": u2 is default.asp, so the wider list is needed.
    policy = get_policy("standard + remove-default-document").with_options(
        default_documents=("index.htm", "index.html", "default.htm", "default.asp")
    )
    assert candidate_sets(policy) == [[1, 2, 3, 4]]
    # u1..u4 downloaded as ㉔ ㉕ ㉖ ㉗ with two distinct contents, ㉖ (u3) the odd one.
    d1 = ["A", "A", "B", "A"]
    assert redundancy([d1]) == 0.5
    # Normalizing to u1 fetches only u1 (content A): one of the two unique documents.
    assert coverage_loss(1, [d1]) == 0.5


def test_seed_000_3_path_case_classification():
    assert candidate_sets("standard + lowercase-path") == [[5, 6], [7, 8, 9]]
    assert candidate_sets("standard") == []
    # The paper's numbers: n(D5) = 2 with one unique, n(D6) = 1 (u8 ㉛ failed; the paper
    # counts one download for U6), normalizing to u5 and u7 loses nothing.
    downloads = [["C", "C"], ["D"]]
    assert round(redundancy(downloads), 2) == 0.33
    assert coverage_loss(2, downloads) == 0


def test_seed_000_4_1_path_case():
    a = "http://www.nasdaq.com/asp/ownership.asp"
    b = "http://www.nasdaq.com/ASP/ownership.asp"
    assert normalize(a, "standard") != normalize(b, "standard")
    assert normalize(a, "paper") == normalize(b, "paper")
    assert normalize(a, "standard + uppercase-path") == normalize(b, "standard + uppercase-path")
    # The false positive the paper accepts: a case-sensitive Unix server.
    acm = ("http://www.acm.org/pubs/journals.html", "http://www.acm.org/PUBS/journals.html")
    assert normalize(acm[0], "standard") != normalize(acm[1], "standard")
    assert normalize(acm[0], "paper") == normalize(acm[1], "paper")


def test_seed_000_4_2_trailing_slash():
    assert normalize("http://example.com", "standard") == "http://example.com/"
    assert normalize("http://example.com/list", "standard") != normalize(
        "http://example.com/list/", "standard"
    )
    assert normalize("http://acm.org/pubs", "paper") == "http://acm.org/pubs/"
    assert normalize("http://example.com/list/", "standard + remove-trailing-slash") == (
        "http://example.com/list"
    )


def test_seed_000_4_3_www_prefix():
    a, b = "http://acm.org/", "http://www.acm.org/"
    assert normalize(a, "standard") != normalize(b, "standard")
    assert normalize(a, "standard + add-www") == normalize(b, "standard + add-www") == b
    assert normalize(a, "standard + remove-www") == normalize(b, "standard + remove-www") == a


def test_seed_000_4_4_default_document():
    a, b = "http://www.acm.org/", "http://www.acm.org/index.htm"
    assert normalize(a, "standard") != normalize(b, "standard")
    assert normalize(b, "standard + remove-default-document") == a
    for doc in ("index.htm", "index.html", "default.htm"):
        assert normalize(a + doc, "aggressive") == "http://acm.org/"

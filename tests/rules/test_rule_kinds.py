"""The within-host rule kinds of issue 25: a template prefix (``/amp/{rest}`` → ``/{rest}``),
a query form of a path (``/index.php?page={x}`` → ``/{x}``), and any parameter dropped, in
the query or as a path parameter (``;name=value`` on any segment)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dustless.errors import ScriptError
from dustless.rules import (
    DropParam,
    QueryToPath,
    RuleSet,
    SiteScript,
    StripPrefix,
    dump_script,
    parse_script,
    render,
)

H = "http://docs.test"


def site(*rules) -> RuleSet:
    return RuleSet((SiteScript("learned", ("docs.test",), rules=rules),))


def test_a_prefix_is_stripped_at_the_start_of_the_path_only():
    rule = StripPrefix("/amp/")
    assert rule.apply(H + "/amp/guide/x.html?a=1") == H + "/guide/x.html?a=1"
    assert rule.apply(H + "/amp/") == H + "/"
    assert rule.apply(H + "/guide/amp/x.html") == H + "/guide/amp/x.html"
    assert rule.apply(H + "/ampere/x.html") == H + "/ampere/x.html"
    assert site(StripPrefix("/print/")).apply(H + "/print/a/b.html") == H + "/a/b.html"


def test_a_query_form_becomes_its_path_and_keeps_the_other_parameters():
    rule = QueryToPath("/index.php", "page", "/{x}")
    assert rule.apply(H + "/index.php?page=garden/app.html") == H + "/garden/app.html"
    assert (
        rule.apply(H + "/index.php?utm_source=a&page=garden/app.html&b=2")
        == H + "/garden/app.html?utm_source=a&b=2"
    )
    # Not its path, no value, or a value that would leave the path: left alone.
    for url in (
        H + "/other.php?page=garden/app.html",
        H + "/index.php",
        H + "/index.php?page=",
        H + "/index.php?page=/etc/passwd",
        H + "/index.php?page=../x",
        H + "/index.php?pages=x",
    ):
        assert rule.apply(url) == url
    assert QueryToPath("/", "p", "/doc/{x}.html").apply(H + "/?p=intro") == H + "/doc/intro.html"


def test_any_parameter_name_is_dropped_from_the_query_and_every_segment():
    rule = DropParam("layout")
    assert rule.apply(H + "/a;layout=grid/b.html;layout=1?x=1&layout=2") == H + "/a/b.html?x=1"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: StripPrefix("amp/"), "whole path segments"),
        (lambda: StripPrefix("/"), "whole path segments"),
        (lambda: StripPrefix("/amp"), "whole path segments"),
        (lambda: StripPrefix("/a;b/"), "expected a path"),
        (lambda: QueryToPath("index.php", "page", "/{x}"), "does not start with '/'"),
        (lambda: QueryToPath("/index.php", "", "/{x}"), "parameter name"),
        (lambda: QueryToPath("/index.php", "page", "/x"), r"holding \{x\} once"),
        (lambda: QueryToPath("/index.php", "page", "/{x}/{x}"), r"holding \{x\} once"),
    ],
)
def test_the_new_kinds_check_their_values(make, message):
    with pytest.raises(ScriptError, match=message):
        make()


def test_the_new_kinds_round_trip_through_the_rules_file_and_apply_from_it():
    rules = site(
        StripPrefix("/amp/", support=4, fp_rate=0.0),
        QueryToPath("/index.php", "page", "/{x}", support=3, fp_rate=0.0),
        DropParam("jsessionid", support=9, fp_rate=0.0),
    )
    loaded = parse_script(dump_script(rules))
    assert loaded.warnings == ()
    assert loaded.rules == rules
    assert (
        loaded.rules.apply(H + "/amp/index.php;jsessionid=AB12?page=g/x.html&utm=1")
        == H + "/g/x.html?utm=1"
    )
    shown = render(loaded.rules)
    assert "strip prefix /amp/{rest} → /{rest}" in shown
    assert "query form /index.php?page={x} → /{x}" in shown


def test_a_bad_attribute_is_one_clear_line():
    bad = (
        '<crawlscript><site title="t"><identity value="docs.test"/>'
        '<queryToPath path="/index.php" param="page" to="/nothing"/></site></crawlscript>'
    )
    with pytest.raises(ScriptError, match=r"holding \{x\} once") as info:
        parse_script(bad, "rules.xml")
    assert str(info.value).startswith("rules.xml:1:")


_URLS = st.text(alphabet="/?&=;#%.:abx0-~ \u00e9", max_size=40).map(lambda t: H + "/" + t)


@given(_URLS, st.sampled_from([StripPrefix("/a/"), QueryToPath("/x", "a", "/{x}")]))
def test_apply_never_raises(url, rule):
    once = rule.apply(url)
    assert isinstance(once, str)
    assert rule.apply("not a url " + url) == "not a url " + url


def test_rules_learn_finds_one_template_rule_where_substrings_need_one_per_section():
    from dustless.rules import Observation, learn_rules

    obs = []
    for s in ("garden", "museum", "school"):
        for i in range(3):
            sha = f"{s}{i}".ljust(40, "0")
            path = f"/{s}/p{i}.html"
            obs += [
                Observation(H + path, 200, sha, None),
                Observation(H + "/amp" + path, 200, sha, None),
                Observation(H + "/index.php?page=" + path[1:], 200, sha, None),
            ]
    # /amp/ is a prefix of templates, not of /museum/amp.html's own document.
    obs.append(Observation(H + "/museum/amp.html", 200, "other".ljust(40, "0"), None))
    result = learn_rules(obs)
    (site,) = result.rules.sites
    kinds = {type(r).__name__ for r in site.rules}
    assert kinds == {"StripPrefix", "QueryToPath"}, site.rules
    assert site.apply(H + "/amp/museum/p1.html") == H + "/museum/p1.html"
    assert site.apply(H + "/index.php?page=school/p2.html") == H + "/school/p2.html"
    assert result.overall.differ == 0

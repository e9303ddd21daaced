"""Learned rules (seed 001: DustBuster, redirects) and how a RuleSet applies them."""

from __future__ import annotations

from pathlib import Path

import pytest

from dustless.errors import ScriptError
from dustless.rules import (
    AddSlash,
    DropParam,
    FixParam,
    HostRedirect,
    RuleSet,
    SiteScript,
    Substitute,
    parse_script,
)

FIG6 = Path(__file__).parent / "data" / "fig6.xml"


def site(*rules, identities=("example.com",)) -> RuleSet:
    return RuleSet((SiteScript("learned", identities, rules=rules),))


def test_substitution_from_seed_001():
    rules = site(Substitute("/story?id=", "/story_", support=12, fp_rate=0.0))
    assert rules.apply("http://example.com/story?id=xyz") == "http://example.com/story_xyz"
    assert rules.apply("http://example.com/story_xyz") == "http://example.com/story_xyz"


def test_substitution_never_touches_the_host():
    rules = site(Substitute("example", "sample"))
    assert rules.apply("http://example.com/example/") == "http://example.com/sample/"


def test_drop_parameter_everywhere_or_on_one_path():
    rules = site(DropParam("sid"), DropParam("ref", path="/a"))
    assert rules.apply("http://example.com/x?sid=1&id=2&sid=3") == "http://example.com/x?id=2"
    assert rules.apply("http://example.com/x?sid=1") == "http://example.com/x"
    assert rules.apply("http://example.com/a?ref=1&id=2") == "http://example.com/a?id=2"
    assert rules.apply("http://example.com/b?ref=1&id=2") == "http://example.com/b?ref=1&id=2"


def test_fix_parameter_value():
    rules = site(FixParam("lang", "en"))
    assert rules.apply("http://example.com/x?lang=fr&id=1") == "http://example.com/x?lang=en&id=1"
    assert rules.apply("http://example.com/x?id=1") == "http://example.com/x?id=1"


def test_add_slash_for_a_path_or_for_extensionless_paths():
    one = site(AddSlash("/dir"))
    assert one.apply("http://example.com/dir") == "http://example.com/dir/"
    assert one.apply("http://example.com/other") == "http://example.com/other"
    every = site(AddSlash())
    assert every.apply("http://example.com/a/b?q=1") == "http://example.com/a/b/?q=1"
    assert every.apply("http://example.com/a/b.html") == "http://example.com/a/b.html"


def test_bare_host_redirects_to_www_keeping_port_and_path():
    rules = site(HostRedirect("www.example.com", support=1))
    assert rules.apply("http://example.com:8080/a?b") == "http://www.example.com:8080/a?b"
    # The www host is another site: the rule is the bare host's.
    assert rules.apply("http://www.example.com/a") == "http://www.example.com/a"


def test_rules_of_other_hosts_do_not_apply():
    rules = site(DropParam("sid"))
    assert rules.apply("http://other.com/x?sid=1") == "http://other.com/x?sid=1"


def test_identity_with_a_port_covers_that_port_only():
    rules = site(DropParam("sid"), identities=("example.com:8080",))
    assert rules.apply("http://example.com:8080/?sid=1") == "http://example.com:8080/"
    assert rules.apply("http://example.com/?sid=1") == "http://example.com/?sid=1"


def test_redirect_then_the_new_hosts_rules_apply():
    rules = RuleSet(
        (
            SiteScript("bare", ("example.com",), rules=(HostRedirect("www.example.com"),)),
            SiteScript("www", ("www.example.com",), rules=(DropParam("sid"), AddSlash("/dir"))),
        )
    )
    assert rules.apply("http://example.com/dir?sid=4") == "http://www.example.com/dir/"


def test_rules_that_undo_each_other_leave_the_url_alone():
    rules = site(Substitute("/a", "/b"), Substitute("/b", "/a"))
    url = "http://example.com/a"
    assert rules.apply(url) == url
    assert rules.apply(rules.apply("http://example.com/b")) == rules.apply("http://example.com/b")


def test_hand_script_and_learned_file_for_the_same_host_both_apply():
    learned = site(DropParam("sort"), identities=("www.web.com",))
    rules = parse_script(FIG6.read_bytes()).rules + learned
    assert rules.apply("javascript:show_detail(1)") == "http://www.web.com/detail.aspx?per_id=1"
    assert rules.apply("http://www.web.com/about?sort=1") == "http://www.web.com/about"
    assert rules.is_scripted("http://www.web.com/about")
    assert not learned.is_scripted("http://www.web.com/about")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Substitute("", "x"), "empty 'from'"),
        (lambda: Substitute("a", "xa"), "contains 'from'"),
        (lambda: DropParam("sid", path="x"), "does not start with '/'"),
        (lambda: DropParam("sid", support=-1), "support -1 is negative"),
        (lambda: FixParam("a", "b", fp_rate=2.0), "fp_rate 2.0 is out of range"),
        (lambda: FixParam("a", "b", fp_rate=float("nan")), "out of range"),
        (lambda: AddSlash("/dir/"), "ends with '/'"),
        (lambda: HostRedirect("www.example.com/x"), "is not a host name"),
        (lambda: SiteScript("t", ()), "has no identity"),
        (lambda: SiteScript(" ", ("a.com",)), "empty title"),
    ],
)
def test_rule_constructors_check_their_values(make, message):
    with pytest.raises(ScriptError, match=message):
        make()


def test_learned_rules_in_a_file():
    text = """<crawlscript>
<site title="learned: example.com">
<identity value="example.com"/>
<substitute from="/story?id=" to="/story_" support="12" fp_rate="0"/>
<dropParam name="sid" support="40" fp_rate="0.01"/>
<fixParam name="lang" value="en" path="/news" support="9"/>
<addSlash path="/dir" support="3"/>
<hostRedirect to="www.example.com" support="1"/>
</site>
</crawlscript>"""
    (s,) = parse_script(text).rules.sites
    assert s.rules == (
        Substitute("/story?id=", "/story_", support=12, fp_rate=0.0),
        DropParam("sid", support=40, fp_rate=0.01),
        FixParam("lang", "en", "/news", support=9),
        AddSlash("/dir", support=3),
        HostRedirect("www.example.com", support=1),
    )
    assert [r.line for r in s.rules] == [4, 5, 6, 7, 8]
    assert not s.scripted


def test_parameter_rules_run_before_substitutions_whatever_the_file_order():
    rules = site(Substitute("/story?id=", "/story_"), DropParam("sid"))
    assert rules.apply("http://example.com/story?id=xyz&sid=1") == "http://example.com/story_xyz"

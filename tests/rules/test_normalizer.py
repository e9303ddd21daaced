"""The rules as the normalizer's ``site-rules`` step (docs/internals.md, ``dustless.url``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dustless.rules import DropParam, RuleSet, SiteScript, load_script
from dustless.url import SiteRule, get_policy, normalize

FIG6 = Path(__file__).parent / "data" / "fig6.xml"


def test_site_scripts_and_rule_sets_are_site_rules():
    rules = load_script(FIG6).rules
    assert isinstance(rules, SiteRule)
    assert isinstance(rules.sites[0], SiteRule)


def test_the_site_rules_step_applies_a_script_and_learned_rules():
    rules = load_script(FIG6).rules + RuleSet(
        (SiteScript("learned", ("www.web.com",), rules=(DropParam("sid"),)),)
    )
    base = get_policy("standard").with_steps(enable=["site-rules"])
    policy = replace(base, options=replace(base.options, site_rules=(rules,)))
    assert normalize("HTTP://WWW.WEB.COM/list.aspx?page=2&cate_id=3&x=1#top", policy) == (
        "http://www.web.com/list.aspx?cate_id=3&page=2"
    )
    assert normalize("http://www.web.com/about.aspx?sid=9&a=1", policy) == (
        "http://www.web.com/about.aspx?a=1"
    )

"""The site policy's rule element: one normalizer step on one site's URLs (round-trips)."""

from __future__ import annotations

import pytest

from dustless.errors import ScriptError
from dustless.rules import NormalizeStep, RuleSet, SiteScript, dump_script, parse_script


def test_a_normalize_rule_runs_its_step_on_its_site_only() -> None:
    rules = RuleSet(
        (
            SiteScript(
                "site policy: iis.test",
                ("iis.test",),
                rules=(
                    NormalizeStep("lowercase-path", support=3, fp_rate=0.0),
                    NormalizeStep("remove-default-document", "index.html,default.asp"),
                ),
            ),
        )
    )
    assert rules.apply("http://iis.test:8080/ASP/Default.asp") == "http://iis.test:8080/asp/"
    assert rules.apply("http://unix.test/ASP/x.html") == "http://unix.test/ASP/x.html"
    again = parse_script(dump_script(rules))
    assert again.rules == rules
    assert 'step="lowercase-path"' in dump_script(rules)


def test_a_normalize_rule_names_a_known_step() -> None:
    with pytest.raises(ScriptError, match="not one of"):
        NormalizeStep("remove-www")
    text = (
        '<crawlscript><site title="t"><identity value="a.test"/>'
        '<normalize step="lowercase-path" documents="a/b"/></site></crawlscript>'
    )
    with pytest.raises(ScriptError, match="file names"):
        parse_script(text)

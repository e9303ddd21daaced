"""The URL-source choice of a site (``<site sitemaps="true" feeds="false">``): validated like
every attribute (by the table and by pattern-script.xsd alike), kept by ``dump_script``,
shown by ``render``, and looked up per URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

import dustless.rules
from dustless.errors import ScriptError
from dustless.rules import dump_script, parse_script, render

XSD = etree.XMLSchema(etree.parse(str(Path(dustless.rules.__file__).parent / "pattern-script.xsd")))
SCRIPT = (
    '<crawlscript><site title="news" sitemaps="true" feeds="false">'
    '<identity value="news.test"/></site>'
    '<site title="shop"><identity value="shop.test:8080"/></site></crawlscript>'
)


def test_the_choice_is_read_written_shown_and_looked_up() -> None:
    rules = parse_script(SCRIPT).rules
    news, shop = rules.sites
    assert (news.sitemaps, news.feeds) == (True, False)
    assert (shop.sitemaps, shop.feeds) == (None, None)
    assert rules.sources_for("http://news.test/a") == (True, False)
    assert rules.sources_for("http://shop.test:8080/") == (None, None)
    assert rules.sources_for("http://other.test/") == (None, None)
    assert rules.chooses_sources
    assert not parse_script(
        SCRIPT.replace(' sitemaps="true" feeds="false"', "")
    ).rules.chooses_sources
    again = parse_script(dump_script(rules)).rules
    assert again.sites == rules.sites
    assert XSD.validate(etree.fromstring(dump_script(rules).encode()))
    assert "sitemaps: read in a crawl" in render(rules)
    assert "feeds: not read in a crawl" in render(rules)


@pytest.mark.parametrize("value", ["yes", "1", ""])
def test_only_true_or_false_is_a_choice(value: str) -> None:
    text = SCRIPT.replace('sitemaps="true"', f'sitemaps="{value}"')
    with pytest.raises(ScriptError, match="expected 'true' or 'false'"):
        parse_script(text)
    assert not XSD.validate(etree.fromstring(text.encode()))

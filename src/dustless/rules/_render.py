"""``render(ruleset)``: the readable listing ``dustless rules show FILE`` prints."""

from __future__ import annotations

from ._learned import LearnedRule
from ._patterns import UrlPattern
from ._site import RuleSet, SiteScript

__all__ = ["render"]


def _evidence(rule: LearnedRule) -> str:
    support = "-" if rule.support is None else str(rule.support)
    fp = "-" if rule.fp_rate is None else f"{rule.fp_rate:.2%}"
    return f"support {support:>6}  fp {fp:>7}"


def _pattern(p: UrlPattern) -> list[str]:
    category = p.category or "-"
    key = f"  key {p.category_key}" if p.category_key is not None else ""
    return [
        f"  {p.page_type.value:<6} {category}{key}  [{p.original_type.value}]",
        f"         {p.original}",
        f"      -> {p.target}",
    ]


def _site(site: SiteScript) -> list[str]:
    kind = "script" if site.scripted else "rules"
    lines = [f"site {site.title!r} ({', '.join(site.identities)}) — {kind}"]
    for name, value in (("sitemaps", site.sitemaps), ("feeds", site.feeds)):
        if value is not None:  # the crawl's URL sources, chosen for this site
            lines.append(f"  {name}: {'read' if value else 'not read'} in a crawl")
    if site.patterns:
        lines.append(f"  {len(site.patterns)} pattern(s); links matching none are not followed")
        for p in site.patterns:
            lines += _pattern(p)
    if site.rules:
        width = max(len(r.describe()) for r in site.rules)
        lines.append(f"  {len(site.rules)} rule(s):")
        lines += [f"    {r.describe():<{width}}  {_evidence(r)}" for r in site.rules]
    return lines


def render(rules: RuleSet) -> str:
    """Every site with its patterns and rules, support and measured false-positive rate."""
    if not rules.sites:
        return "no sites\n"
    blocks = ["\n".join(_site(s)) for s in rules.sites]
    return "\n\n".join(blocks) + "\n"

"""``RuleSet`` → pattern-script XML, the inverse of the loader (write → read gives back equal).

Pure: returns the text; the caller writes the file.
"""

from __future__ import annotations

import re
from decimal import Decimal

from dustless.errors import ScriptError

from ._learned import (
    AddSlash,
    DropParam,
    FixParam,
    HostRedirect,
    LearnedRule,
    NormalizeStep,
    QueryToPath,
    StripPrefix,
    Substitute,
)
from ._patterns import UrlPattern
from ._site import RuleSet, SiteScript

__all__ = ["dump_script"]

# XML 1.0 §2.2 Char: these cannot be written at all, not even as character references.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    if m := _NOT_XML.search(value):
        raise ScriptError(f"character {m.group(0)!r} in {value!r} cannot be written in XML")
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # \r would be read back as \n (XML 1.0 §2.11); a reference keeps it.
    return value.replace("\r", "&#13;")


def _attr(name: str, value: str) -> str:
    # Attribute-value normalization (XML 1.0 §3.3.3) turns raw tab/newline into spaces.
    value = _text(value).replace('"', "&quot;").replace("\t", "&#9;").replace("\n", "&#10;")
    return f' {name}="{value}"'


def _stats(rule: LearnedRule) -> str:
    out = ""
    if rule.support is not None:
        out += _attr("support", str(rule.support))
    if rule.fp_rate is not None:
        # The shortest repr that reads back exactly, spelled as xs:decimal (no exponent).
        out += _attr("fp_rate", format(Decimal(repr(rule.fp_rate)), "f"))
    return out


def _rule(rule: LearnedRule) -> str:
    if isinstance(rule, Substitute):
        attrs = _attr("from", rule.find) + _attr("to", rule.replace)
    elif isinstance(rule, DropParam):
        attrs = _attr("name", rule.name) + (_attr("path", rule.path) if rule.path else "")
    elif isinstance(rule, FixParam):
        attrs = _attr("name", rule.name) + _attr("value", rule.value)
        attrs += _attr("path", rule.path) if rule.path else ""
    elif isinstance(rule, AddSlash):
        attrs = _attr("path", rule.path) if rule.path else ""
    elif isinstance(rule, NormalizeStep):
        attrs = _attr("step", rule.step) + (
            _attr("documents", rule.documents) if rule.documents else ""
        )
    elif isinstance(rule, StripPrefix):
        attrs = _attr("prefix", rule.prefix)
    elif isinstance(rule, QueryToPath):
        attrs = _attr("path", rule.path) + _attr("param", rule.param) + _attr("to", rule.to)
    else:
        assert isinstance(rule, HostRedirect)
        attrs = _attr("to", rule.to)
    return f"    <{rule.element}{attrs}{_stats(rule)}/>\n"


def _pattern(p: UrlPattern) -> str:
    attrs = _attr("type", p.page_type.value)
    if p.category:
        attrs += _attr("class", p.category)
    if p.category_key is not None:
        attrs += _attr("categoryKey", p.category_key)
    return (
        f"    <url{attrs}>\n"
        f'      <originalAddr type="{p.original_type.value}">{_text(p.original)}</originalAddr>\n'
        f"      <targetAddr>{_text(p.target)}</targetAddr>\n"
        "    </url>\n"
    )


def _site(site: SiteScript) -> str:
    attrs = _attr("title", site.title)
    for name, value in (("sitemaps", site.sitemaps), ("feeds", site.feeds)):
        if value is not None:
            attrs += _attr(name, "true" if value else "false")
    out = [f"  <site{attrs}>\n"]
    out += [f"    <identity{_attr('value', i)}/>\n" for i in site.identities]
    out += [_pattern(p) for p in site.patterns]
    out += [_rule(r) for r in site.rules]
    out.append("  </site>\n")
    return "".join(out)


def dump_script(rules: RuleSet) -> str:
    """The XML text of ``rules``, in the pattern-script format with the learned extension."""
    body = "".join(_site(s) for s in rules.sites)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<crawlscript>\n{body}</crawlscript>\n'

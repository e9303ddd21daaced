"""The pattern-script schema as a table, and a validator for it.

The same grammar as ``pattern-script.xsd`` (kept beside this module as documentation),
checked here with the standard library only (lxml is not a dependency). Each rule of the
table reads like the XSD declaration it mirrors; errors name the line and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dustless.errors import ScriptError

from ._xml import Node

__all__ = ["LEARNED", "ROOT", "SCHEMA", "Attr", "Element", "Particle", "validate"]


@dataclass(frozen=True, slots=True)
class Attr:
    """``xs:attribute``: ``kind`` is ``string``, ``token`` (non-empty), ``count``
    (``xs:nonNegativeInteger``), ``fraction`` (``xs:decimal`` in [0, 1]) or ``enum``."""

    name: str
    kind: str = "string"
    required: bool = False
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Particle:
    """One step of an ``xs:sequence``: any of ``names``, ``low``…``high`` times."""

    names: tuple[str, ...]
    low: int = 0
    high: int | None = None


@dataclass(frozen=True, slots=True)
class Element:
    attrs: tuple[Attr, ...] = ()
    content: tuple[Particle, ...] = ()
    text: bool = False  # simple content (the addresses) instead of child elements


_STATS = (Attr("support", "count"), Attr("fp_rate", "fraction"))
LEARNED = (
    "substitute",
    "dropParam",
    "fixParam",
    "addSlash",
    "hostRedirect",
    "normalize",
    "stripPrefix",
    "queryToPath",
)

ROOT = "crawlscript"
SCHEMA: Mapping[str, Element] = {
    # Seed 002 Fig. 6, element by element.
    "crawlscript": Element(content=(Particle(("site",)),)),
    "site": Element(
        attrs=(
            Attr("title", "token", required=True),
            # Extension: read the site's sitemaps / feeds in a crawl (docs/sitemaps.md),
            # whatever --sitemaps / --feeds say for the rest of the crawl.
            Attr("sitemaps", "enum", values=("true", "false")),
            Attr("feeds", "enum", values=("true", "false")),
        ),
        content=(
            Particle(("identity",), low=1),
            Particle(("url",)),
            Particle(LEARNED),  # the learned-rules extension (docs/pattern-scripts.md)
        ),
    ),
    "identity": Element(attrs=(Attr("value", "token", required=True),)),
    "url": Element(
        attrs=(
            Attr("type", "enum", required=True, values=("list", "detail")),
            Attr("class"),
            Attr("categoryKey", "token"),  # extension: which {n} name the category
        ),
        content=(Particle(("originalAddr",), 1, 1), Particle(("targetAddr",), 1, 1)),
    ),
    "originalAddr": Element(
        attrs=(Attr("type", "enum", required=True, values=("url", "javascript")),), text=True
    ),
    "targetAddr": Element(text=True),
    # The learned-rules extension.
    "substitute": Element(
        attrs=(Attr("from", "token", required=True), Attr("to", required=True), *_STATS)
    ),
    "dropParam": Element(
        attrs=(Attr("name", "token", required=True), Attr("path", "token"), *_STATS)
    ),
    "fixParam": Element(
        attrs=(
            Attr("name", "token", required=True),
            Attr("value", required=True),
            Attr("path", "token"),
            *_STATS,
        )
    ),
    "addSlash": Element(attrs=(Attr("path", "token"), *_STATS)),
    "hostRedirect": Element(attrs=(Attr("to", "token", required=True), *_STATS)),
    "normalize": Element(
        attrs=(Attr("step", "token", required=True), Attr("documents", "token"), *_STATS)
    ),
    "stripPrefix": Element(attrs=(Attr("prefix", "token", required=True), *_STATS)),
    "queryToPath": Element(
        attrs=(
            Attr("path", "token", required=True),
            Attr("param", "token", required=True),
            Attr("to", "token", required=True),
            *_STATS,
        )
    ),
}

_COUNT = re.compile(r"\s*\+?[0-9]+\s*")
_DECIMAL = re.compile(r"\s*\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*")


def _names(names: tuple[str, ...] | list[str]) -> str:
    tags = [f"<{n}>" for n in dict.fromkeys(names)]
    return tags[0] if len(tags) == 1 else ", ".join(tags[:-1]) + " or " + tags[-1]


def _check_attrs(node: Node, decl: Element, path: str) -> None:
    known = {a.name: a for a in decl.attrs}
    for name in node.attrs:
        if name not in known:
            expected = ", ".join(known) or "no attributes"
            raise ScriptError(
                f"unknown attribute {name!r} on <{node.tag}>; expected {expected}", path, node.line
            )
    for attr in decl.attrs:
        value = node.attrs.get(attr.name)
        if value is None:
            if attr.required:
                raise ScriptError(
                    f"<{node.tag}> lacks the required attribute {attr.name!r}", path, node.line
                )
            continue
        problem = _check_value(attr, value)
        if problem:
            raise ScriptError(
                f"bad {attr.name}={value!r} on <{node.tag}>; expected {problem}", path, node.line
            )


def _check_value(attr: Attr, value: str) -> str:
    if attr.kind == "enum" and value.strip() not in attr.values:
        return " or ".join(repr(v) for v in attr.values)
    if attr.kind == "token" and not value.strip():
        return "a non-empty value"
    if attr.kind == "count" and not _COUNT.fullmatch(value):
        return "a whole number ≥ 0"
    if attr.kind == "fraction" and (
        not _DECIMAL.fullmatch(value) or not 0.0 <= float(value) <= 1.0
    ):
        return "a fraction between 0 and 1"
    return ""


def _check_content(node: Node, decl: Element, path: str) -> None:
    if decl.text:
        if node.children:
            child = node.children[0]
            raise ScriptError(
                f"element <{child.tag}> inside <{node.tag}>; expected text only", path, child.line
            )
        if not node.text.strip():
            raise ScriptError(f"<{node.tag}> is empty; expected an address", path, node.line)
        return
    if node.text.strip():
        raise ScriptError(
            f"text {node.text.strip()[:40]!r} inside <{node.tag}>; expected elements only",
            path,
            node.line,
        )
    children = node.children
    i = 0
    for particle in decl.content:
        count = 0
        while i < len(children) and children[i].tag in particle.names:
            if particle.high is not None and count == particle.high:
                break
            count += 1
            i += 1
        if count < particle.low:
            line = children[i].line if i < len(children) else node.end_line
            found = f"<{children[i].tag}>" if i < len(children) else f"</{node.tag}>"
            raise ScriptError(
                f"{found} in <{node.tag}>; expected {_names(particle.names)}", path, line
            )
    if i < len(children):
        # What could have come here: the rest of the sequence from the last particle used.
        allowed: list[str] = []
        for particle in decl.content:
            allowed.extend(particle.names)
        child = children[i]
        expected = f"one of {_names(allowed)}" if allowed else "no child elements"
        if child.tag in allowed:
            expected = "the order " + " then ".join(_names(p.names) for p in decl.content)
        raise ScriptError(
            f"unexpected <{child.tag}> in <{node.tag}>; expected {expected}", path, child.line
        )


def validate(root: Node, path: str) -> None:
    """Raise ``ScriptError`` at the first place (by line) where ``root`` breaks the schema."""
    if root.tag != ROOT:
        raise ScriptError(
            f"root element is <{root.tag}>; expected <{ROOT}> (seed 002 Fig. 6)", path, root.line
        )
    errors: list[ScriptError] = []
    todo = [root]
    while todo:
        node = todo.pop()
        decl = SCHEMA.get(node.tag)
        if decl is None:
            continue  # reported by its parent's content check
        for check in (_check_attrs, _check_content):
            try:
                check(node, decl, path)
            except ScriptError as e:
                errors.append(e)
        todo.extend(reversed(node.children))
    if errors:
        raise min(errors, key=lambda e: e.line or 0)

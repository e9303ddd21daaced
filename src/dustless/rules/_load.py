"""Pattern script / rules file → ``RuleSet``: decode, escape bare '&', parse, validate, build."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dustless.errors import ScriptError
from dustless.url import split_authority, split_lenient

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
from ._patterns import AddrType, PageType, UrlPattern
from ._schema import validate
from ._site import RuleSet, SiteScript, check_identity
from ._xml import Node, ScriptWarning, decode, escape_bare_ampersands, parse

__all__ = ["LoadedScript", "load_script", "parse_script"]


@dataclass(frozen=True, slots=True)
class LoadedScript:
    """A file's rules and what was accepted with a warning (the caller decides to show it)."""

    rules: RuleSet
    warnings: tuple[ScriptWarning, ...]


def parse_script(source: str | bytes, path: str = "<script>") -> LoadedScript:
    """Read a pattern script or a learned-rules file (one format); ``ScriptError`` if invalid.

    ``path`` only names the source in messages. Bytes are decoded by BOM or XML declaration.
    """
    text = decode(source, path) if isinstance(source, bytes) else source
    text, warnings = escape_bare_ampersands(text, path)
    root = parse(text, path)
    validate(root, path)
    extra: list[ScriptWarning] = []
    sites = tuple(_site(node, path, extra) for node in root.children)
    return LoadedScript(RuleSet(sites), warnings + tuple(extra))


def load_script(path: str | os.PathLike[str]) -> LoadedScript:
    """Read the file at ``path`` (the package's only I/O) and parse it."""
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except OSError as e:
        raise ScriptError(f"cannot read the script: {e.strerror or e}", name) from None
    return parse_script(data, name)


def _relocate(e: ScriptError, path: str, line: int) -> ScriptError:
    # Model constructors raise without a place; the loader knows the line.
    if e.path or e.line is not None:
        return e
    return ScriptError(str(e), path, line)


def _site(node: Node, path: str, warnings: list[ScriptWarning]) -> SiteScript:
    identities = []
    for child in node.children:
        if child.tag == "identity":
            try:
                identities.append(check_identity(child.attrs["value"]))
            except ScriptError as e:
                raise _relocate(e, path, child.line) from None
    patterns = tuple(_pattern(c, path) for c in node.children if c.tag == "url")
    rules = tuple(_rule(c, path) for c in node.children if c.tag not in ("identity", "url"))
    try:
        site = SiteScript(
            node.attrs["title"],
            tuple(identities),
            patterns,
            rules,
            sitemaps=_boolean(node.attrs.get("sitemaps")),
            feeds=_boolean(node.attrs.get("feeds")),
            line=node.line,
        )
    except ScriptError as e:
        raise _relocate(e, path, node.line) from None
    hosts = {split_authority(i)[0] for i in site.identities}
    for p in site.patterns:
        host = split_lenient(p.original).host if p.original_type is AddrType.URL else ""
        if host and host not in hosts:
            message = f"pattern host {host!r} is not an identity of site {site.title!r}"
            warnings.append(ScriptWarning(path, p.line or node.line, message))
    return site


def _boolean(value: str | None) -> bool | None:
    return None if value is None else value.strip() == "true"


def _pattern(node: Node, path: str) -> UrlPattern:
    original, target = node.children  # the schema guarantees exactly these two, in order
    try:
        return UrlPattern(
            page_type=PageType(node.attrs["type"].strip()),
            original=original.text,
            target=target.text,
            original_type=AddrType(original.attrs["type"].strip()),
            category=node.attrs.get("class", ""),
            category_key=node.attrs.get("categoryKey"),
            line=node.line,
        )
    except ScriptError as e:
        # The element the message names first is the one at fault.
        message = str(e)
        at = {
            message.find(n): c.line for n, c in (("originalAddr", original), ("targetAddr", target))
        }
        line = at[min(k for k in at if k != -1)] if any(k != -1 for k in at) else node.line
        raise _relocate(e, path, line) from None


def _rule(node: Node, path: str) -> LearnedRule:
    a = node.attrs
    support = int(a["support"]) if "support" in a else None
    fp = float(a["fp_rate"]) if "fp_rate" in a else None
    line = node.line
    try:
        if node.tag == "substitute":
            return Substitute(a["from"], a["to"], support=support, fp_rate=fp, line=line)
        if node.tag == "dropParam":
            return DropParam(a["name"], a.get("path"), support=support, fp_rate=fp, line=line)
        if node.tag == "fixParam":
            return FixParam(
                a["name"], a["value"], a.get("path"), support=support, fp_rate=fp, line=line
            )
        if node.tag == "addSlash":
            return AddSlash(a.get("path"), support=support, fp_rate=fp, line=line)
        if node.tag == "normalize":
            return NormalizeStep(
                a["step"], a.get("documents"), support=support, fp_rate=fp, line=line
            )
        if node.tag == "stripPrefix":
            return StripPrefix(a["prefix"], support=support, fp_rate=fp, line=line)
        if node.tag == "queryToPath":
            return QueryToPath(
                a["path"], a["param"], a["to"], support=support, fp_rate=fp, line=line
            )
        assert node.tag == "hostRedirect"
        return HostRedirect(a["to"], support=support, fp_rate=fp, line=line)
    except ScriptError as e:
        raise _relocate(e, path, node.line) from None

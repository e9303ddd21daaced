"""Safe XML reading with line numbers, for pattern scripts (seed 002 Fig. 6).

``pyexpat`` directly rather than ``xml.etree``: expat reports ``CurrentLineNumber`` for
every element (the C ElementTree parser does not expose it), and lets us refuse a DOCTYPE
outright. No DTD means no entity declarations, so no entity expansion ("billion laughs",
external entities) can happen; only the five predefined entities and character
references are accepted (the same stance as ``defusedxml``, without the dependency).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from xml.parsers import expat

from dustless.errors import ScriptError

__all__ = ["Node", "ScriptWarning", "decode", "escape_bare_ampersands", "parse"]

# Outside markup an '&' must start a reference (XML 1.0 §2.4); anything else is a bare '&',
# which Fig. 6 prints twice (``cate_id={0}&page={1}``).
_BARE_AMP = re.compile(r"&(?![A-Za-z_:][\w.:\-]*;|#[0-9]+;|#x[0-9A-Fa-f]+;)")
# Where '&' means itself and must not be escaped.
_LITERAL_SECTIONS = re.compile(r"(<!\[CDATA\[.*?\]\]>|<!--.*?-->|<\?.*?\?>)", re.S)
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._\-]+)["']""")


@dataclass(frozen=True, slots=True)
class ScriptWarning:
    """Something accepted but not right, e.g. a bare ``&`` (returned, never printed)."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: warning: {self.message}"


@dataclass(slots=True)
class Node:
    """An element as read: built once by the parser below, then only read."""

    tag: str
    attrs: dict[str, str]
    line: int
    end_line: int = 0
    children: list[Node] = field(default_factory=list)
    text: str = ""


def decode(data: bytes, path: str) -> str:
    """Bytes → text by BOM, then the XML declaration's encoding, else UTF-8 (XML 1.0 §4.3.3).

    Scripts of Korean sites are often EUC-KR/CP949, which expat cannot read itself.
    """
    if data.startswith(codecs.BOM_UTF8):
        encoding, data = "utf-8", data[len(codecs.BOM_UTF8) :]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        m = _DECLARED_ENCODING.match(data)
        encoding = m.group(1).decode("ascii") if m else "utf-8"
    try:
        return data.decode(encoding)
    except LookupError:
        raise ScriptError(
            f"unknown encoding {encoding!r}; expected e.g. UTF-8 or EUC-KR", path, 1
        ) from None
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ScriptError(
            f"bytes not valid in {encoding} at offset {e.start}; expected {encoding} text",
            path,
            line,
        ) from None


def escape_bare_ampersands(text: str, path: str) -> tuple[str, tuple[ScriptWarning, ...]]:
    """Replace each bare ``&`` by ``&amp;`` outside CDATA, comments and PIs; warn per ``&``."""
    warnings: list[ScriptWarning] = []
    out: list[str] = []
    offset = 0
    for i, chunk in enumerate(_LITERAL_SECTIONS.split(text)):
        if i % 2 == 0:
            for m in _BARE_AMP.finditer(chunk):
                line = text.count("\n", 0, offset + m.start()) + 1
                warnings.append(
                    ScriptWarning(path, line, "bare '&' read as '&amp;' (not XML; write &amp;)")
                )
            out.append(_BARE_AMP.sub("&amp;", chunk))
        else:
            out.append(chunk)
        offset += len(chunk)
    return "".join(out), tuple(warnings)


def parse(text: str, path: str) -> Node:
    """Parse ``text`` (already decoded and escaped) into a ``Node`` tree; ``ScriptError``."""
    stack: list[Node] = []
    root: list[Node] = []
    parser = expat.ParserCreate(encoding="utf-8")  # overrides the (already applied) declaration
    parser.buffer_text = True
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def forbid(what: str) -> ScriptError:
        return ScriptError(
            f"{what} is not allowed in a pattern script; expected plain elements "
            "(no DTD, no entities)",
            path,
            parser.CurrentLineNumber,
        )

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = Node(tag, attrs, parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop().end_line = parser.CurrentLineNumber

    def chars(data: str) -> None:
        if stack:
            stack[-1].text += data

    def doctype(*_: object) -> None:
        raise forbid("a DOCTYPE declaration")

    def entity(*_: object) -> None:
        raise forbid("an entity declaration")

    def external(*_: object) -> int:
        raise forbid("an external entity")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity
    parser.UnparsedEntityDeclHandler = entity
    parser.ExternalEntityRefHandler = external
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        line = text.count("\n", 0, e.start) + 1
        raise ScriptError("text that is not Unicode; expected UTF-8", path, line) from None
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        message = expat.errors.messages[e.code]
        if message == expat.errors.XML_ERROR_TAG_MISMATCH and stack:
            message += f"; expected </{stack[-1].tag}>"
        elif message == expat.errors.XML_ERROR_UNDEFINED_ENTITY:
            message += "; expected &amp; &lt; &gt; &quot; &apos; or &#N;"
        elif message == expat.errors.XML_ERROR_NO_ELEMENTS:
            message += "; expected <crawlscript>"
        elif message == expat.errors.XML_ERROR_UNCLOSED_TOKEN and stack:
            message += f"; expected </{stack[-1].tag}>"
        raise ScriptError(f"not well-formed XML: {message}", path, e.lineno) from None
    assert root
    return root[0]

"""Pages whose formatting elements an HTML parser clones without end (pure).

HTML's tree builder keeps a list of active formatting elements (§13.2.4.3) and, at text
and most start tags, clones every entry whose element was closed by something else
("reconstruct the active formatting elements"). Entries with distinct attributes escape
Noah's Ark (at most three identical ones), so a few hundred formatting elements left open,
then a container that closes them repeated, clone them all into every container: a 0.36 MB
page built 7 million elements (2.7 GB) while nested only 252 deep. Each variant reaches it
another way; every page holds links before, among and after the repeated part, so a crawler
that reads it flat still finds them all.
"""

from __future__ import annotations

__all__ = ["CLONE_VARIANTS", "clone_links", "clone_page"]

OPEN = 250  # formatting elements left open: under a nesting limit of 256
_NAMES = ("b", "i", "em", "strong", "u", "s", "code", "font", "big", "small", "tt", "strike")


def _opens(name: str, attrs: bool, count: int = OPEN) -> str:
    return "".join(f"<{name} id=f{i}>" if attrs else f"<{name}>" for i in range(count))


def _parts(variant: str) -> tuple[str, str]:
    """(what opens the formatting elements, the unit that is repeated)."""
    unit = "<div>x</div>"
    if variant in ("b", "i", "font"):
        return "<div>" + _opens(variant, True) + "</div>", unit
    if variant == "mixed":  # every name, class attributes, a paragraph with a link
        opens = "".join(f'<{_NAMES[i % len(_NAMES)]} class="c{i}">' for i in range(OPEN))
        return "<div>" + opens + "</div>", '<p>x<a href="/in">in</a></p>'
    if variant == "ark":  # no attributes: Noah's Ark keeps three of each name
        return "<div>" + "".join(f"<{n}><{n}><{n}>" for n in _NAMES) + "</div>", unit
    if variant == "paragraphs":  # closed by the next block start tag, not an end tag
        return "<p>" + _opens("b", True), "<p>x"
    if variant == "table":  # opened in a cell, left behind by a stray object's marker
        opens = _opens("i", True, OPEN - 10)
        return "<table><tr><td>" + opens + "<object></td></tr></table>", unit
    if variant == "foster":  # misnested in a table: foster-parented, then left open
        return "<table>" + _opens("b", True) + "</table>", "<p>x</p>"
    raise ValueError(f"unknown clone variant {variant!r}")


CLONE_VARIANTS = (
    "b",
    "i",
    "font",
    "mixed",
    "ark",
    "paragraphs",
    "table",
    "foster",
)


def clone_links(variant: str) -> tuple[str, ...]:
    """The paths a page of ``variant`` links to, in document order (no repeats)."""
    inside = ("/in",) if variant == "mixed" else ()
    return ("/before", *inside, "/after")


def clone_page(variant: str, size: int) -> bytes:
    """A page of ``variant`` of about ``size`` bytes."""
    opens, unit = _parts(variant)
    head = (
        '<!DOCTYPE html>\n<html><head><title>clones</title></head><body>\n<a href="/before">b</a>'
    )
    tail = '<a href="/after">a</a></body></html>\n'
    reps = max(1, (size - len(head) - len(opens) - len(tail)) // len(unit))
    return (head + opens + unit * reps + tail).encode()

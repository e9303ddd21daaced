"""``{0}``…``{n}`` templates: the placeholder syntax of seed 002 Fig. 6 and Fig. 7."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dustless.errors import ScriptError

__all__ = ["PLACEHOLDER", "Template", "parse_template", "placeholders_in"]

# Fig. 6/7 number their placeholders {0}, {1}, {2}; any other brace is literal text.
PLACEHOLDER = re.compile(r"\{(\d{1,4})\}")


@dataclass(frozen=True, slots=True)
class Template:
    """A text split into literal strings and placeholder numbers, in order."""

    parts: tuple[str | int, ...]

    @property
    def placeholders(self) -> frozenset[int]:
        return frozenset(p for p in self.parts if isinstance(p, int))

    def render(self, values: Mapping[int, str]) -> str:
        return "".join(p if isinstance(p, str) else values[p] for p in self.parts)


def parse_template(text: str, what: str) -> Template:
    """Split ``text``; two placeholders with nothing between them are an error.

    ``{0}{1}`` cannot be matched: no delimiter says where the first value ends (a
    placeholder matches a value up to the delimiter that follows it).
    """
    parts: list[str | int] = []
    pos = 0
    for m in PLACEHOLDER.finditer(text):
        if m.start() > pos:
            parts.append(text[pos : m.start()])
        elif parts and isinstance(parts[-1], int):
            raise ScriptError(
                f"placeholders {{{parts[-1]}}} and {m.group(0)} in {what} touch; "
                "expected literal text between two placeholders"
            )
        parts.append(int(m.group(1)))
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
    return Template(tuple(parts))


def placeholders_in(text: str) -> frozenset[int]:
    return frozenset(int(m.group(1)) for m in PLACEHOLDER.finditer(text))

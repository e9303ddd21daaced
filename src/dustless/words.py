"""How counts are written for people: thousands separators and the right plural.

A top-level module because every layer that writes for people uses it (the CLI's lines, the
statistics text, the report's sections). Machine output (``--json``) keeps plain numbers;
only the human-readable lines go through here, so "1 page" and "12,345 pages" read the same
everywhere.
"""

from __future__ import annotations

__all__ = ["plural"]


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``"1 page"``, ``"12,345 pages"``; ``plural_form`` when adding "s" is wrong
    (``plural(n, "seed directory", "seed directories")``)."""
    word = singular if n == 1 else (plural_form or singular + "s")
    return f"{n:,} {word}"

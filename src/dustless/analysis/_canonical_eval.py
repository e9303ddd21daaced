"""``evaluate``'s ``canonical`` row: how often each method agrees with the pages' own
declarations (RFC 6596 ``rel=canonical``).

A page that declares a canonical URL says two things a normalization method can agree with
or contradict. For a factor (path case, trailing slash, ``www`` …) whose candidate sets hold
two spellings that differ only in that factor:

* a page declaring the other spelling its canonical says *these two are one*
  (``declared_same``) — the method agrees when it gives both one form (``merged``);
* two fetched pages of one candidate set that declare *different* canonical URLs say *these
  two are different documents* (``declared_apart``) — the method agrees when it keeps them
  apart (``kept_apart``).

``agreement`` is the share of both kinds of declaration the method agrees with. A site's
declarations can be wrong (docs/learning.md: every page canonical to the home page, to a
404 …): this row measures methods against them, it does not make them right; the truth, when
given, is what ``evaluate``'s other rows read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from dustless.analysis._metrics import Factor
from dustless.errors import InvalidURL
from dustless.store import CrawlReader, canonical_declarations

__all__ = ["CanonicalRow", "canonical_rows"]


@dataclass(frozen=True, slots=True)
class CanonicalRow:
    """One method against the pages' canonical declarations (the ``canonical`` row)."""

    factor: str
    method: str
    declared_same: int
    merged: int
    declared_apart: int
    kept_apart: int

    @property
    def declarations(self) -> int:
        return self.declared_same + self.declared_apart

    @property
    def agreement(self) -> float | None:
        """The share of the declarations the method agrees with (``None``: none made)."""
        n = self.declarations
        return (self.merged + self.kept_apart) / n if n else None


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _apart(pages: Sequence[tuple[str, str]]) -> int:
    """Pairs of ``(url, canonical)`` whose canonicals differ."""
    counts = Counter(c for _, c in pages)
    return _pairs(len(pages)) - sum(_pairs(n) for n in counts.values())


def canonical_rows(
    db: CrawlReader, factors: Sequence[Factor], batches: tuple[int, ...]
) -> tuple[CanonicalRow, ...]:
    """Every factor's methods against the declarations of the crawl's documents (each URL's
    last document with a declaration, both URLs in their standard form)."""
    from dustless.url import Normalizer

    std = Normalizer("standard").normalize
    declared: dict[str, str] = {}
    for url, canonical in canonical_declarations(db, batches):
        try:
            declared[std(url)] = std(canonical)
        except InvalidURL:
            continue
    if not declared:
        return ()
    pages = list(declared.items())
    out = []
    for factor in factors:
        key = factor.candidate_key()
        same = [(u, c) for u, c in pages if u != c and key(u) == key(c)]
        sets: dict[str, list[tuple[str, str]]] = {}
        for u, c in pages:
            sets.setdefault(key(u), []).append((u, c))
        groups = [g for g in sets.values() if len(g) > 1]
        apart = sum(_apart(g) for g in groups)
        for method in factor.methods:
            apply = method.apply
            if apply is None:
                merged = 0
                merged_apart = 0
            else:
                merged = sum(1 for u, c in same if apply(u) == apply(c))
                merged_apart = 0
                for g in groups:
                    forms: dict[str, list[tuple[str, str]]] = {}
                    for u, c in g:
                        forms.setdefault(apply(u), []).append((u, c))
                    merged_apart += sum(_apart(f) for f in forms.values() if len(f) > 1)
            out.append(
                CanonicalRow(
                    factor.name, method.name, len(same), merged, apart, apart - merged_apart
                )
            )
    return tuple(out)

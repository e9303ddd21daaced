"""What the learner reads from a crawl, and how it measures a rule against fetched content.

A crawl gives, per fetch, ``(url, status, payload sha1, redirect location)``: an
``Observation``. A *document* is a 2xx answer with a payload hash. DustBuster
(Bar-Yossef, Keidar & Schonfeld, WWW 2007, §5 "validation") accepts a rule only when the URL
pairs it merges — among those whose content was actually fetched — rarely differ in content:

    fp(rule) = pairs it merges whose payloads differ / pairs it merges where both were fetched

``measure`` counts exactly that, in time linear in the documents: it groups them by the URL
the rule gives, and counts pairs per group from the payload counts (no pair enumeration).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from dustless.url import split_lenient

__all__ = ["Doc", "Evidence", "Observation", "documents_by_host", "head_of", "measure"]


class Observation(NamedTuple):
    """One fetch as the learner sees it (the crawl DB's ``fetches`` joined with ``urls``)."""

    url: str
    status: int | None
    sha1: str | None  # hex SHA-1 of the payload (the WARC payload digest), None if no payload
    location: str | None  # absolute target of a 3xx


class Doc(NamedTuple):
    """A fetched document: its URL and its payload hash."""

    url: str
    sha1: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a rule does to the fetched documents: merged pairs, and how many were equal."""

    pairs: int
    equal: int

    @property
    def differ(self) -> int:
        return self.pairs - self.equal

    @property
    def fp_rate(self) -> float | None:
        """Measured false-positive rate; ``None`` when the rule merges no fetched pair."""
        return None if self.pairs == 0 else self.differ / self.pairs


def head_of(url: str) -> str:
    """``scheme://authority`` of an absolute URL ("" otherwise)."""
    parts = split_lenient(url)
    if not parts.is_absolute:
        return ""
    return f"{parts.scheme}://{parts.authority}"


def is_document(o: Observation) -> bool:
    return o.sha1 is not None and o.status is not None and 200 <= o.status < 300


def documents_by_host(observations: Iterable[Observation]) -> dict[str, list[Doc]]:
    """Documents per host name (lowercased, without port), one per URL (the last fetch).

    Rules are per host and, like an ``<identity>`` without a port, hold on every port.
    """
    last: dict[str, str] = {}
    for o in observations:
        if is_document(o) and split_lenient(o.url).is_absolute:
            assert o.sha1 is not None
            last[o.url] = o.sha1
    out: dict[str, list[Doc]] = {}
    for url in sorted(last):
        out.setdefault(split_lenient(url).host, []).append(Doc(url, last[url]))
    return out


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def measure(apply: Callable[[str], str], docs: Sequence[Doc]) -> Evidence:
    """The pairs of ``docs`` that ``apply`` maps to one URL, and how many have equal payloads."""
    groups: dict[str, Counter[str]] = {}
    for d in docs:
        groups.setdefault(apply(d.url), Counter())[d.sha1] += 1
    pairs = equal = 0
    for counts in groups.values():
        n = sum(counts.values())
        if n > 1:
            pairs += _pairs(n)
            equal += sum(_pairs(c) for c in counts.values())
    return Evidence(pairs, equal)


def rewrite_docs(apply: Callable[[str], str], docs: Sequence[Doc]) -> list[Doc]:
    """``docs`` under the rules accepted so far (later rules are mined on these URLs).

    One document per resulting URL, the first: pairs an accepted rule merged are that
    rule's evidence, not the next one's.
    """
    out: dict[str, Doc] = {}
    for d in docs:
        url = apply(d.url)
        out.setdefault(url, Doc(url, d.sha1))
    return list(out.values())

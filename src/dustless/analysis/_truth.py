"""The test web's truth file and the true false-positive / false-negative rates.

Seed 000 §1 names the two errors of a normalization method: a *false positive* ("잘못된
긍정") makes two different URLs equal, a *false negative* ("잘못된 부정") leaves two equal
URLs different. The paper can only estimate them from content hashes (coverage loss and
redundancy); the test web knows which URLs are the same resource, so we can count them.

The truth file has one line per URL: ``url<TAB>status<TAB>resource-id`` (further columns,
such as a page's change rate, are kept but not interpreted here). A URL that is no resource
has an empty or ``-`` resource id — and whatever its id, a URL whose status is not 2xx (a
404, a 5xx, a redirect, a reset) is no resource: files written before the test web wrote
``-`` named every 404 ``404``, which would make two broken links "the same page".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dustless.errors import InvalidOption

__all__ = ["PairCounter", "TruthEntry", "TruthRates", "parse_truth", "parse_truth_line"]

_NO_RESOURCE = frozenset({"", "-"})


@dataclass(frozen=True, slots=True)
class TruthEntry:
    """One line of the truth file."""

    url: str
    status: int | None
    resource: str | None
    extra: tuple[str, ...] = ()


def parse_truth_line(line: str, lineno: int = 0) -> TruthEntry | None:
    """Parse one line; ``None`` for a blank line, a ``#`` comment or the header line.

    Raises :class:`InvalidOption` naming the line for anything else that does not parse,
    because a truth file that is silently half-read would give wrong rates.
    """
    text = line.rstrip("\r\n")
    if not text.strip() or text.startswith("#"):
        return None
    fields = text.split("\t")
    where = f"truth line {lineno}: " if lineno else "truth line: "
    if len(fields) < 3:
        raise InvalidOption(f"{where}expected url<TAB>status<TAB>resource-id, got {text[:80]!r}")
    url, status_text, resource = fields[0].strip(), fields[1].strip(), fields[2].strip()
    if status_text == "status" and url == "url":
        return None  # a header line
    if not url:
        raise InvalidOption(f"{where}empty url")
    status: int | None
    # Status 0 is the test web's mark for a connection that never produced an HTTP answer
    # (a reset, docs/testweb.md): no status, not a malformed line.
    if status_text in _NO_RESOURCE or status_text == "0":
        status = None
    else:
        try:
            status = int(status_text)
        except ValueError:
            raise InvalidOption(f"{where}status {status_text!r} is not a number") from None
        if not 100 <= status <= 999:
            raise InvalidOption(f"{where}status {status} is not an HTTP status")
    document = status is not None and 200 <= status < 300
    # A soft 404 (a 200 saying "not found") is no resource: the test web's 4th column says
    # ``soft404``, and files written before it named the id ``soft404:SITE``.
    if "soft404" in (resource.split(":", 1)[0], *(f.strip() for f in fields[3:4])):
        document = False
    return TruthEntry(
        url=url,
        status=status,
        resource=None if resource in _NO_RESOURCE or not document else resource,
        extra=tuple(fields[3:]),
    )


def parse_truth(lines: Iterable[str]) -> dict[str, str | None]:
    """The truth file as ``url -> resource id`` (``None``: the URL is no resource).

    A URL listed twice must name the same resource both times.
    """
    truth: dict[str, str | None] = {}
    for lineno, line in enumerate(lines, start=1):
        entry = parse_truth_line(line, lineno)
        if entry is None:
            continue
        if entry.url in truth and truth[entry.url] != entry.resource:
            raise InvalidOption(
                f"truth line {lineno}: {entry.url!r} listed with resources "
                f"{truth[entry.url]!r} and {entry.resource!r}"
            )
        truth[entry.url] = entry.resource
    return truth


@dataclass(frozen=True, slots=True)
class TruthRates:
    """Pair counts and rates of one method against the truth.

    A pair is two URLs of the same candidate set that the truth knows, except a pair of two
    non-resources (merging two 404s loses nothing and saves nothing). It is *same* when both
    URLs are the same resource, *different* otherwise; the method *merges* it when both get
    the same normalized form. ``fp_rate`` = wrongly merged / different pairs and
    ``fn_rate`` = wrongly kept apart / same pairs; a rate with no pairs to err on is 0.

    A method that merges whole candidate sets merges every different pair of a set, so its
    ``fp_rate`` is 1 as soon as one set holds two resources. ``wrong_merge_share`` = wrongly
    merged / merged pairs says how many of the merges it *does* make are wrong — the figure a
    user choosing between such methods needs (0 when it merges nothing).
    """

    pairs: int
    same_pairs: int
    merged_pairs: int
    false_positives: int
    false_negatives: int
    unknown_urls: int

    @property
    def different_pairs(self) -> int:
        return self.pairs - self.same_pairs

    @property
    def fp_rate(self) -> float:
        d = self.different_pairs
        return self.false_positives / d if d else 0.0

    @property
    def wrong_merge_share(self) -> float:
        m = self.merged_pairs
        return self.false_positives / m if m else 0.0

    @property
    def fn_rate(self) -> float:
        return self.false_negatives / self.same_pairs if self.same_pairs else 0.0


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


class PairCounter:
    """Accumulates :class:`TruthRates` set by set in O(set size), without listing pairs."""

    __slots__ = ("_merged", "_pairs", "_same", "_tp", "_unknown")

    def __init__(self) -> None:
        self._pairs = self._same = self._merged = self._tp = self._unknown = 0

    def add_set(
        self, urls: Sequence[str], forms: Sequence[str], truth: Mapping[str, str | None]
    ) -> None:
        """Add one candidate set: its URLs and their normalized forms, position by position."""
        by_resource: dict[str, int] = {}
        by_form: dict[str, int] = {}
        by_form_none: dict[str, int] = {}
        by_cell: dict[tuple[str, str], int] = {}
        known = none = 0
        for url, form in zip(urls, forms, strict=True):
            if url not in truth:
                self._unknown += 1
                continue
            known += 1
            resource = truth[url]
            by_form[form] = by_form.get(form, 0) + 1
            if resource is None:
                none += 1
                by_form_none[form] = by_form_none.get(form, 0) + 1
            else:
                by_resource[resource] = by_resource.get(resource, 0) + 1
                cell = (form, resource)
                by_cell[cell] = by_cell.get(cell, 0) + 1
        self._pairs += _pairs(known) - _pairs(none)
        self._same += sum(_pairs(c) for c in by_resource.values())
        self._merged += sum(_pairs(c) for c in by_form.values()) - sum(
            _pairs(c) for c in by_form_none.values()
        )
        self._tp += sum(_pairs(c) for c in by_cell.values())

    def rates(self) -> TruthRates:
        return TruthRates(
            pairs=self._pairs,
            same_pairs=self._same,
            merged_pairs=self._merged,
            false_positives=self._merged - self._tp,
            false_negatives=self._same - self._tp,
            unknown_urls=self._unknown,
        )

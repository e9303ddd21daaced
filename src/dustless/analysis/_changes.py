"""Change monitoring over batch crawls (seed 004 §4, Tables 7–13, formulas 1 and 2).

Seed 004 §4 re-crawled 1,424 sites in 9 *batches* ("일괄 수집") two days apart and asked
how pages change. Its units, and ours:

* a page is seen once per batch: success or not, and the content hash when downloaded;
* a *change* is detected when two consecutive successful downloads differ in content;
* the *change interval* ("변경 주기") is the observed period divided by the number of
  changes ("10일/5=2일"), in days, and undefined (``None``) for a page that never changed;
* seeds are grouped by how many batches downloaded them, ``|S(n)|`` (Table 8), which gives
  SS, the probability that a downloaded seed is downloaded again in the next batch
  (formula 1), and FF, the probability that a failed seed fails again (formula 2).

Times are plain seconds passed in by the caller (batch times), never read from a clock.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Generic, Literal, TypeVar

from dustless.errors import InvalidOption

__all__ = [
    "LINK_KIND_CLASSES",
    "BatchSummary",
    "ChangeGroup",
    "ChangeSummary",
    "Visit",
    "domain_suffix",
    "download_histogram",
    "ff",
    "group_changes",
    "link_kind_class",
    "ss",
    "summarize_batches",
    "summarize_changes",
]

DAY = 86_400.0

#: The link-kind classes of seed 004 Table 13, in the paper's order. A class spells which
#: kinds of URL a document contains: ``h`` (found anywhere else, e.g. in scripts), ``a``
#: (``<a href>``), ``f`` (``<frame>``), ``0`` where it has none of that kind. ``0af`` is a
#: possible class too; the paper found no such document.
LINK_KIND_CLASSES: tuple[str, ...] = ("000", "00f", "0a0", "h00", "h0f", "ha0", "haf")

K = TypeVar("K", str, int)


@dataclass(frozen=True, slots=True)
class Visit:
    """One page in one batch: did the batch download it, and what was its content.

    An HTTP ``304 Not Modified`` answer to a validator is a successful visit whose hash is
    the previous one (it proves the content did not change).
    """

    batch: int
    time: float
    success: bool
    content_hash: str | None = None
    #: the page's lastmod as a sitemap or feed gave it in this batch (seconds, UTC), if read
    lastmod: float | None = None

    def __post_init__(self) -> None:
        if self.success and not self.content_hash:
            raise InvalidOption(f"batch {self.batch}: successful visit without a content hash")


@dataclass(frozen=True, slots=True)
class ChangeSummary:
    """How one page (seed or document) behaved over the batches that requested it.

    ``intervals`` is the number of consecutive pairs of successful downloads and
    ``changed_intervals`` how many of them differ: the ``n`` and ``X`` of Cho &
    Garcia-Molina's estimator. ``observed_days`` runs from the first to the last successful
    download.
    """

    batches: int
    downloads: int
    intervals: int
    changed_intervals: int
    observed_days: float
    always_successful: bool

    @property
    def changes(self) -> int:
        return self.changed_intervals

    @property
    def changed(self) -> bool:
        return self.changed_intervals > 0

    @property
    def change_interval_days(self) -> float | None:
        """Observed period / number of changes (seed 004 §4, Table 9); ``None``: no change."""
        return self.observed_days / self.changed_intervals if self.changed_intervals else None

    @property
    def mean_interval_days(self) -> float | None:
        """The mean time between consecutive successful downloads (the estimator's ``I``)."""
        return self.observed_days / self.intervals if self.intervals else None


def summarize_changes(visits: Iterable[Visit], total_batches: int | None = None) -> ChangeSummary:
    """Summarize one page's visits (in any order; one visit per batch).

    ``always_successful`` is Table 9's "success seed": downloaded in every one of
    ``total_batches`` batches (by default, every batch that requested the page).
    """
    ordered = sorted(visits, key=lambda v: v.batch)
    for a, b in pairwise(ordered):
        if a.batch == b.batch:
            raise InvalidOption(f"batch {a.batch} visited the same page twice")
        if b.time < a.time:
            raise InvalidOption(f"batch {b.batch} is dated before batch {a.batch}")
    ok = [v for v in ordered if v.success]
    changed = sum(1 for a, b in pairwise(ok) if a.content_hash != b.content_hash)
    batches = len(ordered) if total_batches is None else total_batches
    if batches < len(ordered):
        raise InvalidOption(f"{len(ordered)} visits but only {batches} batches")
    return ChangeSummary(
        batches=batches,
        downloads=len(ok),
        intervals=max(len(ok) - 1, 0),
        changed_intervals=changed,
        observed_days=(ok[-1].time - ok[0].time) / DAY if ok else 0.0,
        always_successful=len(ok) == batches and batches > 0,
    )


def download_histogram(summaries: Iterable[ChangeSummary]) -> dict[int, int]:
    """Pages by number of successful downloads: ``{n: |S(n)|}`` (seed 004 Tables 8 and 11)."""
    counts: dict[int, int] = {}
    for s in summaries:
        counts[s.downloads] = counts.get(s.downloads, 0) + 1
    return dict(sorted(counts.items()))


def _check_counts(counts: Mapping[int, int], batches: int) -> None:
    if batches < 2:
        raise InvalidOption(f"SS and FF need at least 2 batches, got {batches}")
    for n, c in counts.items():
        if not 0 <= n <= batches:
            raise InvalidOption(f"|S({n})|: download count not within 0..{batches}")
        if c < 0:
            raise InvalidOption(f"|S({n})| = {c} is negative")


def ss(counts: Mapping[int, int], batches: int) -> float | None:
    """Seed 004 §4 formula (1): P(downloaded in the next batch | downloaded now).

    SS = 1/(S − |S(0)|) · 1/(N − 1) · Σ_{i=1..N} |S(i)|·(i − 1): a seed of S(i) is
    downloaded in i batches, and i − 1 of its N − 1 next-batch chances succeed. ``None``
    when no seed was ever downloaded. Table 8 gives 8451 / (1,096 · 8) = 0.9638.
    """
    _check_counts(counts, batches)
    total = sum(counts.values())
    base = total - counts.get(0, 0)
    if base == 0:
        return None
    return sum(c * (i - 1) for i, c in counts.items() if i >= 1) / (base * (batches - 1))


def ff(counts: Mapping[int, int], batches: int) -> float | None:
    """Seed 004 §4 formula (2): P(fails in the next batch | failed now).

    FF = 1/(S − |S(N)|) · 1/(N − 1) · Σ_{i=0..N−1} |S(i)|·(N − 1 − i). ``None`` when every
    seed was downloaded every time. Table 8 gives 2798 / (471 · 8) = 0.7426.
    """
    _check_counts(counts, batches)
    total = sum(counts.values())
    base = total - counts.get(batches, 0)
    if base == 0:
        return None
    n1 = batches - 1
    return sum(c * (n1 - i) for i, c in counts.items() if i <= n1) / (base * n1)


@dataclass(frozen=True, slots=True)
class BatchSummary:
    """One row of seed 004 Table 7."""

    batch: int
    seeds_requested: int
    seeds_downloaded: int
    documents_requested: int
    documents_downloaded: int


def summarize_batches(rows: Iterable[tuple[int, bool, bool]]) -> tuple[BatchSummary, ...]:
    """Table 7 from ``(batch, is_seed, success)`` rows, one per request, by batch number.

    As in the paper, the document columns count every page requested, seeds included.
    """
    acc: dict[int, list[int]] = {}
    for batch, is_seed, success in rows:
        a = acc.setdefault(batch, [0, 0, 0, 0])
        if is_seed:
            a[0] += 1
            a[1] += success
        a[2] += 1
        a[3] += success
    return tuple(BatchSummary(b, *acc[b]) for b in sorted(acc))


@dataclass(frozen=True, slots=True)
class ChangeGroup(Generic[K]):
    """One row of seed 004 Tables 9, 10, 12 or 13.

    ``observed`` is the pages whose changes can be judged: downloaded in every batch for
    seeds (Tables 9–10, "성공 시드") or downloaded at least twice for documents (Tables
    12–13, "두 번 이상 다운로드된 문서"). ``unchanged`` + ``changed`` = ``observed``, and
    ``change_interval_days`` is the mean change interval of the changed pages.
    """

    key: K
    pages: int
    observed: int
    unchanged: int
    changed: int
    change_interval_days: float | None

    @property
    def observed_ratio(self) -> float:
        return self.observed / self.pages if self.pages else 0.0

    @property
    def unchanged_ratio(self) -> float:
        return self.unchanged / self.observed if self.observed else 0.0

    @property
    def changed_ratio(self) -> float:
        return self.changed / self.observed if self.observed else 0.0


def group_changes(
    items: Iterable[tuple[K, ChangeSummary]],
    *,
    observed: Literal["all-batches", "twice"],
) -> tuple[ChangeGroup[K], ...]:
    """Group page summaries by a key (domain suffix, depth, link-kind class), sorted by key."""
    if observed not in ("all-batches", "twice"):
        raise InvalidOption(f"observed must be 'all-batches' or 'twice', not {observed!r}")
    acc: dict[K, list[float]] = {}
    for key, s in items:
        a = acc.setdefault(key, [0, 0, 0, 0, 0.0])
        a[0] += 1
        seen = s.always_successful if observed == "all-batches" else s.downloads >= 2
        if seen:
            a[1] += 1
            if s.changed:
                a[3] += 1
                a[4] += s.observed_days / s.changed_intervals
            else:
                a[2] += 1
    return tuple(
        ChangeGroup(
            key=k,
            pages=int(a[0]),
            observed=int(a[1]),
            unchanged=int(a[2]),
            changed=int(a[3]),
            change_interval_days=a[4] / a[3] if a[3] else None,
        )
        for k, a in sorted(acc.items())
    )


def domain_suffix(host: str, labels: int = 1) -> str:
    """The last ``labels`` labels of a host name: ``kr`` (Table 9) or ``co.kr`` (Table 10).

    IP literals have no domain and group as ``ip``.
    """
    if labels < 1:
        raise InvalidOption(f"labels must be ≥ 1, got {labels}")
    name = host.strip().rstrip(".").lower()
    if name.startswith("[") and name.endswith("]"):
        return "ip"
    try:
        ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        return "ip"
    parts = [p for p in name.split(".") if p]
    return ".".join(parts[-labels:]) if parts else ""


def link_kind_class(h: int, a: int, f: int) -> str:
    """A document's link kind (seed 004 Table 13) from its counts of h-, a- and f-URLs."""
    if min(h, a, f) < 0:
        raise InvalidOption("link counts must not be negative")
    return ("h" if h else "0") + ("a" if a else "0") + ("f" if f else "0")

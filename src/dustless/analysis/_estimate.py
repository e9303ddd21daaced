"""Change-rate estimators and a predictor for pages with little history.

A page that changes as a Poisson process of rate λ and is visited every ``I`` days shows a
change in an interval with probability 1 − e^{−λI}; a visit cannot see two changes in one
interval, so the naive estimate (changes seen / time, seed 004 §4's "관찰 기간/변경횟수"
inverted) is biased low, badly so for pages that change more often than they are visited.
Cho & Garcia-Molina ("Estimating frequency of change", ACM TOIT 3(3), 2003, §4) give the
estimator for ``n`` regular intervals of which ``X`` showed a change:

    r̂ = −log((n − X + 0.5) / (n + 0.5))      (r = λ·I, the changes per interval)

which is defined even when every interval changed (X = n) and is nearly unbiased for the
small ``n`` a crawler has. Seed 004 §5 leaves "which features predict change" as future work
and its Tables 9–13 show domain suffix, depth and link kind matter; :func:`fit_rate_predictor`
uses those for pages seen too few times to estimate on their own.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, TypeVar

from dustless.analysis._changes import ChangeSummary
from dustless.errors import InvalidOption

__all__ = [
    "PageFeatures",
    "PredictionError",
    "RatePredictor",
    "estimate_rate",
    "evaluate_rate_predictor",
    "fit_rate_predictor",
    "holdout_split",
    "naive_rate",
    "poisson_rate",
]

T = TypeVar("T")
H = TypeVar("H", str, int)


def naive_rate(changes: int, period_days: float) -> float:
    """Changes per day seen over a period: the inverse of seed 004's change interval."""
    if changes < 0:
        raise InvalidOption(f"changes must not be negative, got {changes}")
    if period_days <= 0:
        if changes:
            raise InvalidOption(f"{changes} changes in a period of {period_days} days")
        return 0.0
    return changes / period_days


def poisson_rate(intervals: int, changed: int, interval_days: float) -> float:
    """Cho & Garcia-Molina's bias-corrected estimate of λ, in changes per day.

    ``intervals`` (n) regular visit intervals of ``interval_days`` (I) each, ``changed``
    (X) of which showed a change: λ̂ = −log((n − X + 0.5)/(n + 0.5)) / I.
    """
    if intervals < 0 or not 0 <= changed <= intervals:
        raise InvalidOption(f"changed intervals {changed} not within 0..{intervals}")
    if intervals == 0:
        return 0.0
    if interval_days <= 0:
        raise InvalidOption(f"interval must be positive, got {interval_days} days")
    # + 0.0: no change gives -log(1) = -0.0, which would print as "-0.000".
    return -math.log((intervals - changed + 0.5) / (intervals + 0.5)) / interval_days + 0.0


def estimate_rate(
    summary: ChangeSummary, method: Literal["naive", "poisson"] = "poisson"
) -> float | None:
    """A page's change rate per day from its batch history; ``None`` with < 2 downloads.

    The batches are taken as regular (seed 004 crawled every two days): the interval is
    the mean time between consecutive successful downloads, so a failed batch in between
    stretches one interval; the estimator then treats the stretch as average.
    """
    interval = summary.mean_interval_days
    if interval is None:
        return None
    if method == "naive":
        return naive_rate(summary.changed_intervals, summary.observed_days)
    if method == "poisson":
        return poisson_rate(summary.intervals, summary.changed_intervals, interval)
    raise InvalidOption(f"method must be 'naive' or 'poisson', not {method!r}")


@dataclass(frozen=True, slots=True)
class PageFeatures:
    """What is known about a page at its first fetch (seed 004 Tables 9–13)."""

    domain: str
    depth: int
    link_kind: str


@dataclass(frozen=True, slots=True)
class RatePredictor:
    """Predicts a change rate from :class:`PageFeatures`.

    Each feature value's mean rate is shrunk toward the global mean by ``shrinkage``
    pseudo-pages, ``(Σ r + k·ḡ)/(c + k)``, so a value seen on three pages barely moves the
    prediction; the prior of a page is the average of its three shrunk means, and the mean
    of pages with exactly the same features is shrunk toward that prior the same way. An
    unseen value falls back to the global mean.
    """

    global_rate: float
    shrinkage: float
    by_domain: Mapping[str, float]
    by_depth: Mapping[int, float]
    by_link_kind: Mapping[str, float]
    by_features: Mapping[PageFeatures, tuple[float, int]]

    def predict(self, features: PageFeatures) -> float:
        g = self.global_rate
        prior = (
            self.by_domain.get(features.domain, g)
            + self.by_depth.get(features.depth, g)
            + self.by_link_kind.get(features.link_kind, g)
        ) / 3.0
        total, count = self.by_features.get(features, (0.0, 0))
        return (total + self.shrinkage * prior) / (count + self.shrinkage)


def fit_rate_predictor(
    training: Iterable[tuple[PageFeatures, float]], *, shrinkage: float = 5.0
) -> RatePredictor:
    """Fit a :class:`RatePredictor` on pages with estimated rates (e.g. :func:`estimate_rate`)."""
    if shrinkage <= 0:
        raise InvalidOption(f"shrinkage must be positive, got {shrinkage}")
    pages = list(training)
    if not pages:
        raise InvalidOption("cannot fit a rate predictor on no pages")
    for _, rate in pages:
        if not rate >= 0 or math.isinf(rate):
            raise InvalidOption(f"rate {rate} is not a finite non-negative number")
    g = math.fsum(r for _, r in pages) / len(pages)

    def shrunk(key: Callable[[PageFeatures], H]) -> Mapping[H, float]:
        acc: dict[H, list[float]] = {}
        for f, r in pages:
            a = acc.setdefault(key(f), [0.0, 0.0])
            a[0] += r
            a[1] += 1
        return MappingProxyType(
            {k: (s + shrinkage * g) / (c + shrinkage) for k, (s, c) in acc.items()}
        )

    cells: dict[PageFeatures, tuple[float, int]] = {}
    for f, r in pages:
        s, c = cells.get(f, (0.0, 0))
        cells[f] = (s + r, c + 1)
    return RatePredictor(
        global_rate=g,
        shrinkage=shrinkage,
        by_domain=shrunk(lambda f: f.domain),
        by_depth=shrunk(lambda f: f.depth),
        by_link_kind=shrunk(lambda f: f.link_kind),
        by_features=MappingProxyType(cells),
    )


@dataclass(frozen=True, slots=True)
class PredictionError:
    """Errors on held-out pages, next to the baseline of predicting the global mean."""

    pages: int
    mean_absolute_error: float
    baseline_mean_absolute_error: float
    root_mean_squared_error: float
    baseline_root_mean_squared_error: float


def evaluate_rate_predictor(
    predictor: RatePredictor, held_out: Iterable[tuple[PageFeatures, float]]
) -> PredictionError:
    """Compare predictions with the held-out pages' rates (true or estimated)."""
    errs: list[float] = []
    base: list[float] = []
    for f, rate in held_out:
        errs.append(predictor.predict(f) - rate)
        base.append(predictor.global_rate - rate)
    if not errs:
        raise InvalidOption("no held-out pages to evaluate on")
    n = len(errs)
    return PredictionError(
        pages=n,
        mean_absolute_error=math.fsum(map(abs, errs)) / n,
        baseline_mean_absolute_error=math.fsum(map(abs, base)) / n,
        root_mean_squared_error=math.sqrt(math.fsum(e * e for e in errs) / n),
        baseline_root_mean_squared_error=math.sqrt(math.fsum(e * e for e in base) / n),
    )


def holdout_split(
    items: Iterable[T], key: Callable[[T], str], fraction: float = 0.2
) -> tuple[tuple[T, ...], tuple[T, ...]]:
    """Split into (training, held out) by a CRC-32 of each item's key (e.g. its URL).

    Deterministic without a random generator: the same page is always on the same side,
    across runs and batches.
    """
    if not 0.0 < fraction < 1.0:
        raise InvalidOption(f"held-out fraction must be within (0, 1), got {fraction}")
    cut = int(fraction * 10_000)
    train: list[T] = []
    test: list[T] = []
    for item in items:
        (test if zlib.crc32(key(item).encode()) % 10_000 < cut else train).append(item)
    return tuple(train), tuple(test)

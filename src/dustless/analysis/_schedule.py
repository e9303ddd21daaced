"""Revisit schedules under a budget (Cho & Garcia-Molina, SIGMOD 2000).

A page that changes as a Poisson process of rate λ and is re-fetched at regular intervals,
``f`` times per unit of time, is fresh (our copy equals the page) a fraction

    F(λ, f) = (1 − e^{−λ/f}) · f / λ

of the time. With a budget of ``B`` fetches per unit of time over all pages, the *uniform*
schedule gives every page B/n, the *proportional* one gives page i B·λ_i/Σλ, and the
*optimal* one maximises Σ F(λ_i, f_i) under Σ f_i = B. The paper proves uniform is never
worse than proportional (its Theorem 3) and solves the optimum with a Lagrange multiplier:
∂F/∂f = μ for every page that gets visits. Writing x = λ/f,

    ∂F/∂f = (1 − (1 + x)·e^{−x}) / λ,

which rises from 0 to 1/λ as f falls from ∞ to 0: a page whose λ ≥ 1/μ cannot earn μ per
visit at any frequency and gets none — the optimum gives up on pages that change too often.
Rates and frequencies use the same time unit (per day, say).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

from dustless.errors import InvalidOption

__all__ = [
    "expected_freshness",
    "freshness",
    "optimal_schedule",
    "pick_due",
    "proportional_schedule",
    "schedule",
    "uniform_schedule",
]


def freshness(rate: float, frequency: float) -> float:
    """F(λ, f): the time-averaged freshness of one page (1 for a page that never changes)."""
    if rate < 0 or frequency < 0:
        raise InvalidOption(f"rate {rate} and frequency {frequency} must not be negative")
    if rate == 0:
        return 1.0
    if frequency == 0:
        return 0.0
    x = rate / frequency
    if x < 1e-8:
        return 1.0 - x / 2.0  # the series of (1 − e^{−x})/x; also when x underflows to 0
    return -math.expm1(-x) / x


def expected_freshness(rates: Sequence[float], frequencies: Sequence[float]) -> float:
    """The mean of F(λ_i, f_i) over the pages: the collection's expected freshness."""
    if len(rates) != len(frequencies):
        raise InvalidOption(f"{len(rates)} rates but {len(frequencies)} frequencies")
    if not rates:
        return 1.0
    return math.fsum(map(freshness, rates, frequencies)) / len(rates)


def _check(rates: Sequence[float], budget: float) -> None:
    if not budget >= 0 or math.isinf(budget):
        raise InvalidOption(f"budget must be a finite non-negative number, got {budget}")
    for r in rates:
        if not r >= 0 or math.isinf(r):
            raise InvalidOption(f"rate {r} is not a finite non-negative number")


def uniform_schedule(rates: Sequence[float], budget: float) -> tuple[float, ...]:
    """Every page gets budget/n visits."""
    _check(rates, budget)
    return tuple(budget / len(rates) for _ in rates) if rates else ()


def proportional_schedule(rates: Sequence[float], budget: float) -> tuple[float, ...]:
    """Page i gets budget·λ_i/Σλ visits (uniform if no page changes at all)."""
    _check(rates, budget)
    total = math.fsum(rates)
    if total == 0:
        return uniform_schedule(rates, budget)
    return tuple(budget * r / total for r in rates)


def _gain(x: float) -> float:
    # g(x) = 1 − (1 + x)e^{−x} = λ·∂F/∂f at x = λ/f. For small x the two terms cancel
    # (g ≈ x²/2), so use the series Σ_{k≥2} (−1)^k (k − 1) x^k / k! there.
    if x < 1e-2:
        return x * x * (0.5 + x * (-1 / 3 + x * (1 / 8 + x * (-1 / 30 + x * (1 / 144)))))
    return -math.expm1(-x) - x * math.exp(-x)


def _inverse_gain(y: float, guess: float | None = None) -> float:
    # Solve g(x) = y for x > 0, 0 < y < 1. g rises from 0 to 1 with g'(x) = x·e^{−x}; Newton
    # inside a shrinking bracket, falling back to bisection (or doubling while there is no
    # upper bound yet), so it converges from any start; from the previous solution (the
    # caller's warm start) it takes two or three steps.
    lo, hi = 0.0, math.inf
    if guess is not None and guess > 0:
        x = guess
    else:
        x = math.sqrt(2.0 * y) if y < 0.5 else -math.log1p(-y) + math.log1p(-math.log1p(-y))
    for _ in range(400):
        gx = _gain(x) - y
        if gx > 0:
            hi = x
        elif gx < 0:
            lo = x
        else:
            return x
        slope = x * math.exp(-x)
        nxt = x - gx / slope if slope > 0 else math.nan
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2.0 if hi < math.inf else 2.0 * x + 1.0
        if abs(nxt - x) <= 1e-13 * x:
            return nxt
        x = nxt
    return x


# ln μ is searched within the range where exp() neither overflows nor underflows.
_LN_MU_MIN, _LN_MU_MAX = -740.0, 709.0


def optimal_schedule(rates: Sequence[float], budget: float) -> tuple[float, ...]:
    """The allocation maximising Σ F(λ_i, f_i) under Σ f_i = budget (Lagrange multipliers).

    For a multiplier μ, a page with 0 < μλ < 1 gets f = λ / g⁻¹(μλ) and every other page
    none; Σ f falls as μ grows, so ln μ is found by a safeguarded regula falsi (Illinois)
    until the budget is spent. Pages with equal rates get equal frequencies, so the work is
    per distinct rate. Pages that never change need no visits; if no page changes, the
    budget is spread evenly.
    """
    _check(rates, budget)
    distinct = sorted({r for r in rates if r > 0})
    if budget == 0 or not distinct:
        return uniform_schedule(rates, budget)
    count = dict.fromkeys(distinct, 0)
    for r in rates:
        if r > 0:
            count[r] += 1
    if len(distinct) == 1:
        # One rate: by symmetry every changing page gets the same share.
        share = budget / count[distinct[0]]
        return tuple(share if r > 0 else 0.0 for r in rates)

    warm: dict[float, float] = {}

    def spend(ln_mu: float) -> tuple[float, dict[float, float]]:
        mu = math.exp(ln_mu)
        freqs: dict[float, float] = {}
        for r in distinct:
            y = mu * r
            if y >= 1.0:
                freqs[r] = 0.0
            elif y < 1e-300:
                # g(x) ≈ x²/2 here, so f = λ/x ≈ √(λ/2μ), without y underflowing to 0.
                freqs[r] = math.sqrt(r) / math.sqrt(2.0 * mu)
            else:
                x = warm[r] = _inverse_gain(y, warm.get(r))
                freqs[r] = r / x
        return math.fsum(count[r] * f for r, f in freqs.items()), freqs

    lo, s_lo, f_lo, hi, s_hi, f_hi = _bracket(spend, distinct[-1], budget)
    h_lo, h_hi = s_lo - budget, s_hi - budget
    side = 0
    for step in range(300):
        if hi - lo <= 1e-13 * max(1.0, abs(lo)) or h_lo <= 1e-13 * budget:
            break
        t = (lo * h_hi - hi * h_lo) / (h_hi - h_lo)
        if step % 4 == 3 or not lo < t < hi:
            t = (lo + hi) / 2.0  # guarantees progress if Σf jumps (see below)
        s, f = spend(t)
        if s >= budget:
            lo, s_lo, f_lo, h_lo = t, s, f, s - budget
            if side == 1:
                h_hi /= 2.0
            side = 1
        else:
            hi, s_hi, f_hi, h_hi = t, s, f, s - budget
            if side == -1:
                h_lo /= 2.0
            side = -1
    # Interpolate between the two ends so Σf = budget exactly. Where Σf is smooth the ends
    # agree to ~1e-13. Where a page has λ far above its share of the budget its F ≈ f/λ is
    # linear, its frequency jumps from 0 to ~λ/37 (where g⁻¹ leaves double precision) as μ
    # crosses 1/λ, and this puts the rest of the budget on it, as the optimum does.
    w = min(1.0, max(0.0, (budget - s_hi) / (s_lo - s_hi))) if s_lo > s_hi else 1.0
    # Rounding at subnormal scales can leave a hair below 0: a frequency never is.
    best = {r: max(0.0, f_hi[r] + w * (f_lo[r] - f_hi[r])) for r in distinct}
    return tuple(best[r] if r > 0 else 0.0 for r in rates)


_Spent = tuple[float, dict[float, float]]  # Σ f for a ln μ, and each rate's frequency


def _bracket(
    spend: Callable[[float], _Spent], fastest: float, budget: float
) -> tuple[float, float, dict[float, float], float, float, dict[float, float]]:
    """``(lo, Σf(lo), f(lo), hi, Σf(hi), f(hi))`` around the ln μ that spends ``budget``.

    At μ = 1/λ_max the fastest page just gets nothing; walk ln μ by 1 until
    spent(lo) ≥ budget > spent(hi)."""
    lo = hi = min(max(-math.log(fastest), _LN_MU_MIN), _LN_MU_MAX)
    s_lo, f_lo = spend(lo)
    s_hi, f_hi = s_lo, f_lo
    while s_lo < budget:
        if lo <= _LN_MU_MIN:
            raise InvalidOption(f"budget {budget} is too large for rates this small")
        hi, s_hi, f_hi = lo, s_lo, f_lo
        lo = max(lo - 1.0, _LN_MU_MIN)
        s_lo, f_lo = spend(lo)
    while hi == lo or s_hi >= budget:
        if hi >= _LN_MU_MAX:
            break
        lo, s_lo, f_lo = hi, s_hi, f_hi
        hi = min(hi + 1.0, _LN_MU_MAX)
        s_hi, f_hi = spend(hi)
    return lo, s_lo, f_lo, hi, s_hi, f_hi


def pick_due(frequencies: Sequence[float], elapsed: Sequence[float], n: int) -> tuple[int, ...]:
    """The indices of the ``n`` pages most overdue under a schedule, most overdue first.

    A batch of ``recrawl --budget N`` fetches N pages; page i is due once per 1/f_i, so its
    overdue ratio is elapsed_i · f_i (time since its last fetch, in the frequencies' time
    unit, over its revisit period). Pages with f_i = 0 are never picked; ties go to the
    lower index, so the choice is deterministic.
    """
    if len(frequencies) != len(elapsed):
        raise InvalidOption(f"{len(frequencies)} frequencies but {len(elapsed)} elapsed times")
    if n < 0:
        raise InvalidOption(f"cannot pick {n} pages")
    ratios = [
        (-(e * f), i) for i, (f, e) in enumerate(zip(frequencies, elapsed, strict=True)) if f > 0
    ]
    return tuple(i for _, i in sorted(ratios)[:n])


def schedule(
    kind: Literal["uniform", "proportional", "optimal"], rates: Sequence[float], budget: float
) -> tuple[float, ...]:
    """One of the three schedules by name (``recrawl --schedule``)."""
    if kind == "uniform":
        return uniform_schedule(rates, budget)
    if kind == "proportional":
        return proportional_schedule(rates, budget)
    if kind == "optimal":
        return optimal_schedule(rates, budget)
    raise InvalidOption(f"schedule must be uniform, proportional or optimal, not {kind!r}")

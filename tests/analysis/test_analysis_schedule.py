"""Revisit schedules under a budget (Cho & Garcia-Molina, SIGMOD 2000)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.analysis import (
    expected_freshness,
    freshness,
    optimal_schedule,
    pick_due,
    proportional_schedule,
    schedule,
    uniform_schedule,
)
from dustless.errors import InvalidOption


def test_freshness_of_one_page() -> None:
    assert freshness(0.0, 0.0) == 1.0  # never changes: always fresh
    assert freshness(1.0, 0.0) == 0.0  # changes, never visited
    assert freshness(1.0, 1.0) == pytest.approx(1 - math.exp(-1))
    assert freshness(1e-12, 1.0) == pytest.approx(1.0)
    with pytest.raises(InvalidOption):
        freshness(-1.0, 1.0)


def test_five_pages_example() -> None:
    # Cho & Garcia-Molina's example: pages changing 1, 2, 3, 4, 5 times a day, 5 visits a
    # day. Proportional gives (1, 2, 3, 4, 5)/3, uniform 1 each, and the optimum about
    # (1.15, 1.36, 1.35, 1.14, 0): the page that changes most gets no visit at all.
    rates = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert proportional_schedule(rates, 5.0) == pytest.approx((1 / 3, 2 / 3, 1.0, 4 / 3, 5 / 3))
    assert uniform_schedule(rates, 5.0) == (1.0,) * 5
    best = optimal_schedule(rates, 5.0)
    assert [round(f, 2) for f in best] == [1.15, 1.36, 1.35, 1.14, 0.0]
    assert math.fsum(best) == pytest.approx(5.0)
    fresh = {
        k: expected_freshness(rates, schedule(k, rates, 5.0))
        for k in ("uniform", "proportional", "optimal")
    }
    assert fresh["optimal"] > fresh["uniform"] > fresh["proportional"]


def _mixed_population(seed: int, n: int = 2000) -> list[float]:
    rnd = random.Random(seed)
    # Most pages change rarely, some daily, a few many times a day; some never.
    rates = [rnd.lognormvariate(math.log(0.2), 1.5) for _ in range(n)]
    rates[: n // 20] = [0.0] * (n // 20)
    return rates


def test_optimal_beats_uniform_beats_proportional_on_a_mixed_population() -> None:
    rates = _mixed_population(2000)
    budget = 0.3 * len(rates)  # 0.3 visits per page per day
    fresh = {}
    for kind in ("uniform", "proportional", "optimal"):
        freqs = schedule(kind, rates, budget)  # type: ignore[arg-type]
        assert math.fsum(freqs) == pytest.approx(budget)
        assert min(freqs) >= 0.0
        fresh[kind] = expected_freshness(rates, freqs)
    assert fresh["optimal"] > fresh["uniform"] > fresh["proportional"]


def test_optimal_schedule_meets_the_lagrange_conditions() -> None:
    rates = _mixed_population(7, 300)
    freqs = optimal_schedule(rates, 60.0)

    def marginal(rate: float, f: float) -> float:  # ∂F/∂f
        x = rate / f
        return (1 - (1 + x) * math.exp(-x)) / rate

    visited = [marginal(r, f) for r, f in zip(rates, freqs, strict=True) if f > 0]
    mu = visited[0]
    assert all(m == pytest.approx(mu, rel=1e-6) for m in visited)
    for r, f in zip(rates, freqs, strict=True):
        if r == 0:
            assert f == 0.0  # always fresh without visits
        elif f == 0:
            assert 1 / r <= mu * (1 + 1e-9)  # changes too often to be worth a visit
    assert any(f == 0 and r > 0 for r, f in zip(rates, freqs, strict=True))


def test_degenerate_budgets_and_populations() -> None:
    assert optimal_schedule([], 5.0) == ()
    assert uniform_schedule([], 5.0) == ()
    assert expected_freshness([], []) == 1.0
    assert optimal_schedule([0.0, 0.0], 4.0) == (2.0, 2.0)
    assert proportional_schedule([0.0, 0.0], 4.0) == (2.0, 2.0)
    assert optimal_schedule([1.0, 2.0], 0.0) == (0.0, 0.0)
    with pytest.raises(InvalidOption):
        optimal_schedule([1.0], -1.0)
    with pytest.raises(InvalidOption):
        uniform_schedule([math.inf], 1.0)
    with pytest.raises(InvalidOption):
        schedule("random", [1.0], 1.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidOption):
        expected_freshness([1.0], [])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.floats(1e-9, 50.0), min_size=1, max_size=30),
    st.floats(0.01, 100.0),
)
def test_schedule_ordering_holds_for_any_population(rates: list[float], budget: float) -> None:
    # The paper's theorem is for pages that change (λ > 0): a page that never changes makes
    # uniform waste visits on it, and proportional can then win (e.g. rates 0 and 0.5).
    u = expected_freshness(rates, uniform_schedule(rates, budget))
    p = expected_freshness(rates, proportional_schedule(rates, budget))
    freqs = optimal_schedule(rates, budget)
    o = expected_freshness(rates, freqs)
    assert math.fsum(freqs) == pytest.approx(budget)
    # Uniform is never worse than proportional (the paper's theorem); the optimum is never
    # worse than either.
    assert u >= p - 1e-9
    assert o >= u - 1e-9
    assert p >= 0.0
    assert o <= 1.0


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.just(0.0), st.floats(0.0, 50.0)), min_size=1, max_size=30),
    st.floats(0.0, 100.0),
)
def test_optimal_is_never_worse_even_with_static_pages(rates: list[float], budget: float) -> None:
    freqs = optimal_schedule(rates, budget)
    o = expected_freshness(rates, freqs)
    assert math.fsum(freqs) == pytest.approx(budget)
    assert o >= expected_freshness(rates, uniform_schedule(rates, budget)) - 1e-9
    assert o >= expected_freshness(rates, proportional_schedule(rates, budget)) - 1e-9


def test_pick_due_fetches_the_most_overdue_pages() -> None:
    freqs = optimal_schedule([1.0, 2.0, 3.0, 4.0, 5.0], 5.0)
    # One day since every page's last fetch: the page visited most often is most overdue;
    # the page the optimum gave up on is never picked.
    assert pick_due(freqs, [1.0] * 5, 3) == (1, 2, 0)
    assert pick_due(freqs, [1.0] * 5, 10) == (1, 2, 0, 3)
    assert pick_due(freqs, [0.1, 5.0, 0.1, 0.1, 9.0], 1) == (1,)
    assert pick_due([1.0, 1.0], [2.0, 2.0], 1) == (0,)
    with pytest.raises(InvalidOption):
        pick_due([1.0], [1.0, 2.0], 1)

"""The budget planner: N pages per batch under uniform / proportional / optimal schedules."""

from __future__ import annotations

import math
import random

import pytest

from dustless.analysis import Visit
from dustless.analysis._changes_db import PageHistory
from dustless.errors import InvalidOption
from dustless.recrawl import SCHEDULES, PageState, is_document_answer, page_states, plan_recrawl

DAY = 86_400.0
NOW = 100 * DAY


def _pages(rates: list[float | None], ages_days: list[float | None]) -> list[PageState]:
    return [
        PageState(i + 1, r, None if a is None else NOW - a * DAY)
        for i, (r, a) in enumerate(zip(rates, ages_days, strict=True))
    ]


def test_uniform_takes_the_oldest_copies() -> None:
    pages = _pages([0.1, 2.0, 0.5, 0.2], [1, 3, 2, 4])
    plan = plan_recrawl(pages, 2, "uniform", now=NOW, period_days=1)
    assert plan.chosen == (4, 2)
    assert plan.frequencies == (0.5, 0.5, 0.5, 0.5)


def test_proportional_prefers_fast_pages() -> None:
    pages = _pages([0.1, 2.0, 0.5, 0.2], [1, 1, 1, 1])
    plan = plan_recrawl(pages, 2, "proportional", now=NOW, period_days=1)
    assert plan.chosen == (2, 3)
    assert sum(plan.frequencies) == pytest.approx(2.0)


def test_optimal_gives_up_on_pages_changing_too_fast() -> None:
    # Cho & Garcia-Molina's example: rates 1..5 a day, 5 visits a day: the fastest gets none.
    pages = _pages([1.0, 2.0, 3.0, 4.0, 5.0], [10, 10, 10, 10, 10])
    plan = plan_recrawl(pages, 5, "optimal", now=NOW, period_days=1)
    assert plan.frequencies[4] == 0.0
    assert 5 not in plan.chosen
    assert len(plan.chosen) == 4  # a page with f = 0 is never picked, even with budget left
    assert plan.expected_freshness == pytest.approx(0.374, abs=1e-3)
    uni = plan_recrawl(pages, 5, "uniform", now=NOW, period_days=1)
    prop = plan_recrawl(pages, 5, "proportional", now=NOW, period_days=1)
    assert plan.expected_freshness > uni.expected_freshness > prop.expected_freshness


def test_new_pages_first_and_unknown_rates_get_the_mean() -> None:
    pages = _pages([0.5, None, 1.5, None], [5, None, 5, 2])
    plan = plan_recrawl(pages, 2, "uniform", now=NOW, period_days=2)
    assert plan.chosen[0] == 2  # never downloaded: no copy to be fresh
    assert plan.default_rate == 1.0
    assert plan.rates == (0.5, 1.0, 1.5, 1.0)
    assert sum(plan.frequencies) == pytest.approx(1.0)  # 2 fetches per 2-day batch


def test_budget_larger_than_the_collection() -> None:
    pages = _pages([0.1, 0.2, 0.0], [1, 1, 1])
    for kind in SCHEDULES:
        plan = plan_recrawl(pages, 10, kind, now=NOW, period_days=1)
        assert len(plan.chosen) <= 3
        assert len(set(plan.chosen)) == len(plan.chosen)
    assert plan_recrawl([], 3, "optimal", now=NOW, period_days=1).chosen == ()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": -1}, "--budget"),
        ({"kind": "random"}, "schedule must be"),
        ({"period_days": 0.0}, "period"),
        ({"default_rate": -1.0}, "default rate"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"budget": 1, "kind": "uniform", "period_days": 1.0, "default_rate": None} | kwargs
    with pytest.raises(InvalidOption, match=message):
        plan_recrawl(
            _pages([0.1], [1]),
            args["budget"],
            args["kind"],
            now=NOW,
            period_days=args["period_days"],
            default_rate=args["default_rate"],
        )


def test_page_states_from_histories() -> None:
    h = PageHistory(
        7,
        "http://a.kr/",
        "a.kr",
        0,
        "0a0",
        tuple(Visit(b, b * 2 * DAY, True, f"h{b}") for b in range(1, 5)),
    )
    once = PageHistory(8, "http://a.kr/x", "a.kr", 1, "0a0", (Visit(4, 8 * DAY, True, "x"),))
    never = PageHistory(9, "http://a.kr/y", "a.kr", 1, "0a0", (Visit(4, 8 * DAY, False),))
    a, b, c = page_states([h, once, never])
    assert a.rate == pytest.approx(math.log(7) / 2)  # 3 of 3 two-day intervals changed
    assert a.last_download == 8 * DAY
    assert (b.rate, b.last_download) == (None, 8 * DAY)
    assert (c.rate, c.last_download) == (None, None)
    naive = page_states([h], method="naive")[0]
    assert naive.rate == pytest.approx(0.5)


def _simulate(kind: str, rates: list[float], budget: int, days: int, seed: int) -> float:
    """Poisson pages, one batch a day of ``budget`` fetches planned from the true rates;
    the time-averaged share of fresh copies (sampled 24 times a day)."""
    rng = random.Random(seed)
    n = len(rates)
    changes = []
    for r in rates:
        t, times = 0.0, []
        while r > 0 and t < days:
            t += rng.expovariate(r)
            times.append(t)
        changes.append(times)
    last = [0.0] * n  # everything fetched at day 0
    fresh_samples = []
    for day in range(days):
        pages = [PageState(i, rates[i], last[i] * DAY) for i in range(n)]
        plan = plan_recrawl(pages, budget, kind, now=day * DAY, period_days=1)  # type: ignore[arg-type]
        for i in plan.chosen:
            last[i] = float(day)
        for k in range(24):
            t = day + k / 24
            fresh = sum(1 for i in range(n) if not any(last[i] < c <= t for c in changes[i]))
            fresh_samples.append(fresh / n)
    return sum(fresh_samples) / len(fresh_samples)


def test_simulated_freshness_orders_the_schedules() -> None:
    # Cho & Garcia-Molina 2000: optimal > uniform > proportional on changing pages.
    rng = random.Random(8)
    rates = [math.exp(rng.gauss(math.log(0.3), 1.2)) for _ in range(60)]
    got = {k: _simulate(k, rates, 12, 40, 3) for k in SCHEDULES}
    assert got["optimal"] > got["uniform"] > got["proportional"], got


def test_only_documents_are_scheduled_and_counted() -> None:
    # Two pages that redirect or are gone, never downloaded: before, they came first in
    # every batch ("no copy yet") and the freshness counted them.
    pages = [
        PageState(1, 0.5, NOW - 3 * DAY),
        PageState(2, None, None, document=False),  # a 301
        PageState(3, 1.5, NOW - 1 * DAY),
        PageState(4, None, None, document=False),  # a 404
    ]
    plan = plan_recrawl(pages, 2, "uniform", now=NOW, period_days=1)
    assert plan.chosen == (1, 3)
    assert (plan.documents, plan.left_out, plan.rates_known) == (2, 2, 2)
    assert plan.rates == (0.5, 1.5)
    alone = plan_recrawl([pages[0], pages[2]], 2, "uniform", now=NOW, period_days=1)
    assert plan.expected_freshness == alone.expected_freshness


@pytest.mark.parametrize(
    ("state", "status", "document"),
    [
        ("OK", 200, True),
        ("code", 304, True),
        ("code", 301, False),
        ("code", 302, False),
        ("code", 404, False),
        ("code", 410, False),
        ("code", 200, False),  # not HTML: no download in seed 004's sense
        ("filtered", 200, False),
        ("robots", None, False),
        ("tooBig", 200, False),
        ("code", 503, True),  # server trouble: retried
        ("code", 429, True),
        ("code", 408, True),
        ("cTim", None, True),
        ("dTim", 200, True),
    ],
)
def test_which_answers_are_documents(state: str, status: int | None, document: bool) -> None:
    assert is_document_answer(state, status) is document


def test_page_states_know_redirects_and_errors() -> None:
    visits = (Visit(1, DAY, False),)
    moved = PageHistory(1, "http://a.kr/d", "a.kr", 1, "000", visits, "code", 301)
    ok = PageHistory(2, "http://a.kr/", "a.kr", 0, "0a0", (Visit(1, DAY, True, "h"),), "OK", 200)
    assert [s.document for s in page_states([moved, ok])] == [False, True]

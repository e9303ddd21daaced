"""Which N pages a budgeted recrawl batch fetches (``recrawl --budget N --schedule …``).

Pure: page states in, a :class:`RecrawlPlan` out; no clock (``now`` is passed in), no DB.

Cho & Garcia-Molina ("Synchronizing a database to improve freshness", SIGMOD 2000) model a
page as a Poisson process of rate λ (changes per day) and a crawler that revisits it ``f``
times a day; with a budget of B fetches a day over all pages they compare three allocations
(``dustless.analysis.schedule``): *uniform* (every page B/n), *proportional* (f ∝ λ) and the
*optimal* one (Lagrange: equal marginal freshness, pages changing too fast get nothing).
Their Theorem 3: uniform is never worse than proportional for changing pages.

A batch is one step of such a schedule. ``--budget N`` with batches ``period_days`` apart
is B = N / period_days fetches a day; each page's revisit frequency comes from its
estimated rate, and the batch takes the N pages most overdue against their revisit period
(:func:`dustless.analysis.pick_due`: time since the last download × f). Pages we hold no
copy of (never downloaded) come first: they cannot be fresh until fetched once (seed 004 §4
found new pages in every batch).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from dustless.analysis._changes import summarize_changes
from dustless.analysis._changes_db import PageHistory
from dustless.analysis._estimate import RatePredictor, estimate_rate
from dustless.analysis._schedule import expected_freshness, pick_due, schedule
from dustless.errors import InvalidOption

__all__ = [
    "SCHEDULES",
    "PageState",
    "RecrawlPlan",
    "ScheduleKind",
    "page_states",
    "plan_recrawl",
]

DAY = 86_400.0

ScheduleKind = Literal["uniform", "proportional", "optimal"]
SCHEDULES: tuple[ScheduleKind, ...] = get_args(ScheduleKind)


@dataclass(frozen=True, slots=True)
class PageState:
    """What the planner knows of one page.

    ``rate`` is its estimated change rate per day (``None``: unknown, too little history)
    and ``last_download`` the batch time, in seconds, of its last successful download
    (``None``: never downloaded).
    """

    url_id: int
    rate: float | None
    last_download: float | None


@dataclass(frozen=True, slots=True)
class RecrawlPlan:
    """One budgeted batch: the pages to fetch, and the schedule it follows."""

    schedule: ScheduleKind
    budget: int  # fetches in this batch
    period_days: float  # days between batches
    default_rate: float  # the rate assumed for pages with none
    rates: tuple[float, ...]  # per page (input order), the rate the schedule used
    frequencies: tuple[float, ...]  # per page, visits per day
    chosen: tuple[int, ...]  # url ids to fetch, new pages first, then most overdue
    expected_freshness: float  # Σ F(λ_i, f_i)/n of the schedule in the steady state


def plan_recrawl(
    pages: Sequence[PageState],
    budget: int,
    kind: ScheduleKind,
    *,
    now: float,
    period_days: float,
    default_rate: float | None = None,
) -> RecrawlPlan:
    """Choose ``budget`` pages for a batch at ``now`` under the named schedule.

    ``default_rate`` (changes per day) stands for pages without an estimate; by default it
    is the mean of the known rates (0 when none is known, which makes every schedule
    uniform). Ties are broken by input order, so the plan is deterministic.
    """
    if kind not in SCHEDULES:
        raise InvalidOption(f"schedule must be one of {', '.join(SCHEDULES)}, not {kind!r}")
    if budget < 0:
        raise InvalidOption(f"--budget must be >= 0, not {budget}")
    if not period_days > 0 or math.isinf(period_days):
        raise InvalidOption(f"the period between batches must be positive, not {period_days}")
    known = [p.rate for p in pages if p.rate is not None]
    for r in known:
        if not r >= 0 or math.isinf(r):
            raise InvalidOption(f"rate {r} is not a finite non-negative number")
    if default_rate is None:
        default_rate = math.fsum(known) / len(known) if known else 0.0
    elif not default_rate >= 0 or math.isinf(default_rate):
        raise InvalidOption(f"default rate {default_rate} is not a finite non-negative number")
    rates = tuple(default_rate if p.rate is None else p.rate for p in pages)
    freqs = schedule(kind, rates, budget / period_days) if pages else ()

    new = [i for i, p in enumerate(pages) if p.last_download is None][:budget]
    old = [i for i, p in enumerate(pages) if p.last_download is not None]
    elapsed = [max(now - (pages[i].last_download or 0.0), 0.0) / DAY for i in old]
    due = pick_due([freqs[i] for i in old], elapsed, budget - len(new))
    chosen = tuple(pages[i].url_id for i in new) + tuple(pages[old[j]].url_id for j in due)
    return RecrawlPlan(
        schedule=kind,
        budget=budget,
        period_days=period_days,
        default_rate=default_rate,
        rates=rates,
        frequencies=tuple(freqs),
        chosen=chosen,
        expected_freshness=expected_freshness(rates, freqs),
    )


def page_states(
    histories: Iterable[PageHistory],
    *,
    method: Literal["naive", "poisson"] = "poisson",
    predictor: RatePredictor | None = None,
) -> list[PageState]:
    """Planner inputs from batch histories (``dustless.analysis``'s crawl-DB reader).

    The rate is the page's own estimate when it was downloaded at least twice (Cho &
    Garcia-Molina's bias-corrected one by default), else the predictor's guess from its
    domain, depth and link kind (seed 004 §5), else unknown.
    """
    out: list[PageState] = []
    for h in histories:
        summary = summarize_changes(h.visits)
        rate = estimate_rate(summary, method)
        if rate is None and predictor is not None:
            rate = predictor.predict(h.features)
        last = max((v.time for v in h.visits if v.success), default=None)
        out.append(PageState(h.url_id, rate, last))
    return out

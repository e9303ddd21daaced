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
found new pages in every batch). Then the pages whose sitemap ``lastmod`` moved since their
last download (``dustless.analysis.lastmod_moved``): the site says our copy is stale, which
is better evidence than any rate (a recrawl reads every sitemap again, outside the budget,
so the next batch knows). Then the most overdue.

Only *documents* are refreshed and counted: a URL whose latest answer was a redirect, a
client error, a type the crawl does not keep or a robots.txt refusal holds no copy that
could go stale (seed 004 §4 counts a download as the state ``OK``), and fetching it again
would spend the budget on the same answer batch after batch. Server trouble (5xx, 408,
429, network states) is no such answer: the page is retried.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from dustless.analysis import (
    PageHistory,
    RatePredictor,
    estimate_rate,
    expected_freshness,
    lastmod_moved,
    pick_due,
    schedule,
    summarize_changes,
)
from dustless.errors import InvalidOption

__all__ = [
    "SCHEDULES",
    "PageState",
    "RecrawlPlan",
    "ScheduleKind",
    "is_document_answer",
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
    (``None``: never downloaded). ``document`` is false when the URL's latest answer says
    it is no page to refresh (see :func:`is_document_answer`): the planner leaves it out.
    """

    url_id: int
    rate: float | None
    last_download: float | None
    document: bool = True
    moved: bool = False  # its sitemap lastmod moved since its last download: due first


@dataclass(frozen=True, slots=True)
class RecrawlPlan:
    """One budgeted batch: the pages to fetch, and the schedule it follows."""

    schedule: ScheduleKind
    budget: int  # fetches in this batch
    period_days: float  # days between batches
    default_rate: float  # the rate assumed for pages with none
    rates: tuple[float, ...]  # per document (input order), the rate the schedule used
    frequencies: tuple[float, ...]  # per document, visits per day
    chosen: tuple[int, ...]  # url ids to fetch: new pages, lastmod moved, most overdue
    expected_freshness: float  # Σ F(λ_i, f_i)/n over the documents, in the steady state
    documents: int  # pages the schedule spread the budget over
    left_out: int  # pages whose latest answer is no document (redirects, 4xx, …)
    rates_known: int  # documents with an estimated rate; 0: the freshness is a guess
    moved: int = 0  # documents whose lastmod moved since their last download


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
    uniform). Ties are broken by input order, so the plan is deterministic. Pages that
    are not documents (``PageState.document``) are left out of the schedule, the choice
    and the expected freshness.
    """
    if kind not in SCHEDULES:
        raise InvalidOption(f"schedule must be one of {', '.join(SCHEDULES)}, not {kind!r}")
    if budget < 0:
        raise InvalidOption(f"--budget must be >= 0, not {budget}")
    if not period_days > 0 or math.isinf(period_days):
        raise InvalidOption(f"the period between batches must be positive, not {period_days}")
    left_out = sum(1 for p in pages if not p.document)
    if left_out:
        pages = [p for p in pages if p.document]
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
    # The site says these changed since our copy: before any estimate (the most overdue of
    # them first, when the budget cannot take them all).
    moved_all = [i for i, p in enumerate(pages) if p.last_download is not None and p.moved]
    moved_all.sort(key=lambda i: pages[i].last_download or 0.0)
    moved = moved_all[: max(budget - len(new), 0)]
    old = [i for i, p in enumerate(pages) if p.last_download is not None and not p.moved]
    elapsed = [max(now - (pages[i].last_download or 0.0), 0.0) / DAY for i in old]
    due = pick_due([freqs[i] for i in old], elapsed, budget - len(new) - len(moved))
    chosen = (
        tuple(pages[i].url_id for i in new)
        + tuple(pages[i].url_id for i in moved)
        + tuple(pages[old[j]].url_id for j in due)
    )
    return RecrawlPlan(
        schedule=kind,
        budget=budget,
        period_days=period_days,
        default_rate=default_rate,
        rates=rates,
        frequencies=tuple(freqs),
        chosen=chosen,
        expected_freshness=expected_freshness(rates, freqs),
        documents=len(pages),
        left_out=left_out,
        rates_known=len(known),
        moved=len(moved_all),
    )


# Client errors that are the server's trouble, not an answer about the page: it timed the
# request out (RFC 9110 §15.5.9, 408) or asked for fewer requests (RFC 6585 §4, 429).
_RETRY_STATUSES = frozenset({408, 429})
_NOT_DOCUMENT_STATES = frozenset({"robots", "filtered", "tooBig"})


def is_document_answer(state: str, status: int | None) -> bool:
    """Is a URL whose latest fetch ended in ``state`` with ``status`` a page to refresh?

    Yes for a download (``OK``: 200 and HTML), a ``304`` (the copy is current) and for
    server or network trouble (the page may well be there next time). No for a redirect
    (its target is a URL of its own), a client error, any other answer that is not HTML
    (``code`` with 2xx), a type or size the crawl does not keep, and robots.txt's refusal.
    """
    if state == "OK" or status == 304:
        return True
    if state in _NOT_DOCUMENT_STATES:
        return False
    if status is None or state != "code":
        return True  # network states, or a body that broke off: trouble, not an answer
    return status >= 500 or status in _RETRY_STATUSES


def page_states(
    histories: Iterable[PageHistory],
    *,
    method: Literal["naive", "poisson"] = "poisson",
    predictor: RatePredictor | None = None,
) -> list[PageState]:
    """Planner inputs from batch histories (``dustless.analysis``'s crawl-DB reader).

    The rate is the page's own estimate when it was downloaded at least twice (Cho &
    Garcia-Molina's bias-corrected one by default), else the predictor's guess from its
    domain, depth and link kind (seed 004 §5), else unknown. Its latest answer says whether
    it is a document (:func:`is_document_answer`; a history without one counts as one).
    """
    out: list[PageState] = []
    for h in histories:
        summary = summarize_changes(h.visits)
        rate = estimate_rate(summary, method)
        if rate is None and predictor is not None:
            rate = predictor.predict(h.features)
        last = max((v.time for v in h.visits if v.success), default=None)
        document = not h.last_state or is_document_answer(h.last_state, h.last_status)
        out.append(PageState(h.url_id, rate, last, document, lastmod_moved(h.visits, h.lastmod)))
    return out

"""Opening a recrawl batch in a crawl directory (I/O: reads and writes the crawl DB).

A recrawl is one more *batch* ("일괄 수집", seed 004 §4) of the same collection:

1. the settings are the previous crawl batch's (seeds, ``--resolve``, policy, limits, stored
   as JSON in its ``crawls`` row), with the flags given to ``recrawl`` laid over them;
2. the new batch row is written with its batch time (``--batch-time``, or the wall clock),
   and the URLs to fetch go back to ``queued`` — every URL the crawl holds for a full batch,
   the planner's N for ``--budget N`` and, outside the budget, every sitemap and feed (link
   kinds ``m``, ``n``: read again, their lastmod is the next plan's evidence of change) —
   in the same transaction, so a ``kill -9`` leaves
   either no new batch or a batch with all its URLs queued;
3. the crawl engine then *resumes* that open batch: robots.txt again, links of changed pages
   followed (new pages are found), every fetch recorded with the new batch number; a second
   ``kill -9`` is resumed the same way (``dustless recrawl DIR --resume``).

The batch's config JSON carries a ``"recrawl"`` object (schedule, budget, conditional) next
to the crawl settings; the engine reads only the settings it knows.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dustless.analysis import read_histories
from dustless.crawl.conditional import RECRAWL_KEY, batch_settings, recrawl_info
from dustless.errors import InvalidOption
from dustless.kinds import LinkKind
from dustless.recrawl._plan import RecrawlPlan, ScheduleKind, page_states, plan_recrawl
from dustless.store import (
    DB_NAME,
    PROBE_KIND,
    BatchInfo,
    CrawlReader,
    CrawlStore,
    SQLiteStore,
    URLState,
    open_crawl,
)

__all__ = ["DAY", "RecrawlStart", "open_recrawl", "recrawl_info"]

DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class RecrawlStart:
    """The batch opened for a recrawl: its number and time, the URLs queued, the plan."""

    batch: int
    batch_time: float
    queued: int
    config: str  # the batch's JSON (crawl settings + "recrawl")
    plan: RecrawlPlan | None  # None for a full batch


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="seconds")


def _last_batch(
    reader: CrawlReader, when: float, budget: int | None, schedule: ScheduleKind
) -> tuple[BatchInfo, RecrawlPlan | None]:
    """The crawl batch a recrawl at ``when`` follows, and with a ``budget`` the plan of what
    to fetch again; InvalidOption when there is none or it is unfinished or not earlier."""
    where = reader.source
    crawl = [b for b in reader.batches if not b.probe]
    if not crawl:
        raise InvalidOption(f"{where} holds no finished crawl batch to recrawl")
    last = reader.batches[-1]
    if last.ended_at is None:
        raise InvalidOption(
            f"batch {last.number} in {where} is not finished: continue it with "
            "dustless recrawl --resume (or dustless crawl --resume) first"
        )
    prev = crawl[-1]
    if when <= prev.batch_time:
        raise InvalidOption(
            f"batch time {_iso(when)} is not after batch {prev.number}'s ({_iso(prev.batch_time)})"
        )
    if budget is None:
        return prev, None
    states = page_states(read_histories(reader))
    period = (when - prev.batch_time) / DAY
    return prev, plan_recrawl(states, budget, schedule, now=when, period_days=period)


def _start_batch(
    out: Path, db: str | None, plan: RecrawlPlan | None, config: str, *, now: float, when: float
) -> tuple[int, int]:
    """Write the batch row and queue its URLs; its number and how many were queued."""
    # One transaction: the batch row and its queued URLs, or nothing (SQLite: the store's
    # context manager rolls back on an exception, docs/storage.md "Crash safety" 4;
    # PostgreSQL: the URL states wait, unsent, for the exchange that writes the batch row).
    store: CrawlStore
    if db is None:
        store = SQLiteStore(out)
    else:
        from dustless.store import PostgresCrawlStore

        store = PostgresCrawlStore(db, worker="recrawl")
    with store:
        if plan is not None:
            # The budget is spent on documents; the URL sources come along, every batch.
            sources = store.collection_ids([LinkKind.SITEMAP, LinkKind.FEED])
            ids = list(plan.chosen) + sources
        else:
            # Every URL the collection holds, except those recorded never to be fetched and
            # the normalized forms `evaluate --fetch` requested (probes measure the crawl;
            # they are not part of the collection).
            ids = store.collection_ids()
        store.set_url_state(ids, URLState.QUEUED)
        batch = store.start_batch(config, now, batch_time=when)
    return batch.number, len(ids)


def open_recrawl(
    out: Path,
    *,
    now: float,
    batch_time: float | None = None,
    overrides: Mapping[str, Any] | None = None,
    budget: int | None = None,
    schedule: ScheduleKind = "optimal",
    conditional: bool = True,
    validate: Callable[[str], object] | None = None,
    db: str | None = None,
) -> RecrawlStart:
    """Write the new batch row and queue its URLs (committed); the engine does the rest.

    ``overrides`` are crawl settings (``CrawlConfig`` field names) laid over the stored
    ones; ``validate`` (the engine's ``CrawlConfig.from_json``) checks the merged JSON
    before anything is written. The batch time must come after every earlier crawl
    batch's: changes are measured along batch times (seed 004 §4's observed period).
    ``db`` (``postgresql://…``): the crawl workers share there (``out`` is not read).
    """
    if db is None and not (out / DB_NAME).is_file():
        raise InvalidOption(f"{out} holds no crawl to recrawl (no {DB_NAME}): run dustless crawl")
    if budget is not None and budget < 1:
        raise InvalidOption(f"--budget must be >= 1, not {budget}")
    when = now if batch_time is None else batch_time
    if not math.isfinite(when):
        raise InvalidOption("the batch time must be a finite time")

    with open_crawl(out, db=db) as reader:
        where = reader.source
        prev, plan = _last_batch(reader, when, budget, schedule)
        settings = {k: v for k, v in batch_settings(prev.config).items() if k != RECRAWL_KEY}

    if settings.get("kind") == PROBE_KIND:  # pragma: no cover - probes are filtered above
        raise InvalidOption("the last batch is an evaluate --fetch probe")
    stored_bodies = settings.get("warc_bodies", "decoded")  # before the option: decoded
    if (overrides or {}).get("warc_bodies", stored_bodies) != stored_bodies:
        # Revisits compare payload digests, and changes compare payload hashes, across
        # the batches: one crawl stores its bodies one way.
        raise InvalidOption(
            f"{where} stores WARC bodies {stored_bodies}: a recrawl cannot change --warc-bodies"
        )
    settings.update(overrides or {})
    settings[RECRAWL_KEY] = {
        "of_batch": prev.number,
        "budget": budget,
        "schedule": schedule if budget is not None else None,
        "conditional": conditional,
    }
    config = json.dumps(settings, sort_keys=True)
    if validate is not None:
        validate(config)

    number, queued = _start_batch(out, db, plan, config, now=now, when=when)
    return RecrawlStart(number, when, queued, config, plan)

"""dustless.recrawl — keep a collection fresh (seed 004 §4, Cho & Garcia-Molina 2000).

The planner is pure: page states (estimated change rates, last download times) in, the N
pages a budgeted batch fetches out, under the ``uniform``, ``proportional`` or ``optimal``
schedule. ``dustless recrawl`` reads the crawl DB, plans, and runs the batch through the
crawl engine. See ``docs/recrawl.md``.
"""

from __future__ import annotations

from dustless.crawl.conditional import (
    Validator,
    conditional_batch,
    entity_tags,
    recrawl_info,
    validators_for,
)
from dustless.recrawl._plan import (
    SCHEDULES,
    PageState,
    RecrawlPlan,
    ScheduleKind,
    is_document_answer,
    page_states,
    plan_recrawl,
)
from dustless.recrawl._start import RecrawlStart, open_recrawl

__all__ = [
    "SCHEDULES",
    "PageState",
    "RecrawlPlan",
    "RecrawlStart",
    "ScheduleKind",
    "Validator",
    "conditional_batch",
    "entity_tags",
    "is_document_answer",
    "open_recrawl",
    "page_states",
    "plan_recrawl",
    "recrawl_info",
    "validators_for",
]

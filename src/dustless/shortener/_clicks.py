"""Click analytics kept off the redirect path (seed 003 ch. 8 마무리: 데이터 분석 솔루션).

A redirect only bumps a counter in a dict (a few hundred nanoseconds); a background task
writes the aggregated counts every ``interval`` seconds in one batch. What a crash can
lose is bounded by that: the counts of the last batch, never a link (links are written by
the create path, which commits before it answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time

from dustless.errors import DustlessError, InvalidURL
from dustless.url import host_of

from ._bots import os_family, ua_family
from ._model import ClickKey
from ._store import GroupedClickStore, Store

__all__ = ["ClickRecorder", "referrer_host", "ua_family"]

log = logging.getLogger(__name__)

_MAX_FIELD = 512  # long headers are truncated before they become dict keys
_MAX_CACHED = 10_000  # distinct Referer / User-Agent values remembered


@functools.lru_cache(maxsize=4096)
def referrer_host(referer: str) -> str:
    """The host of a ``Referer`` header; ``""`` when absent, ``(invalid)`` when unparsable."""
    if not referer:
        return ""
    try:
        return host_of(referer) or "(invalid)"
    except InvalidURL:
        return "(invalid)"


class ClickRecorder:
    """Counts clicks in memory and writes them to the store in batches.

    Counts are kept per *group* — ``(day, referrer host, UA family)``, a handful of values a
    second — as ``{link id: clicks}`` dicts. A click on a link nobody clicked this second adds
    one dict entry whose key is the link's own ``id`` int and whose value is a small cached
    int: no new Python object per distinct link, and a dict of ints is not tracked by the
    garbage collector. (The previous ``Counter`` of ``(id, day, host, family)`` tuples made a
    tuple per cold click and, at flush, a named tuple and a row tuple per link — ~15,000 a
    second per worker under the cold benchmark — which fed the collector's full collections.)
    """

    def __init__(self, store: Store, interval: float = 1.0, max_keys: int = 200_000) -> None:
        self._store = store
        self._interval = interval
        self._max_keys = max_keys
        # (day number, referrer host, UA family, OS family) -> {link id: clicks}. Hosts and
        # families are resolved when the click is counted (a dict hit almost always), so that a
        # flush of cold traffic — thousands of distinct links a second — is a plain hand-over,
        # not tens of milliseconds of parsing that every waiting redirect would pay for.
        self._pending: dict[tuple[int, str, str, str], dict[int, int]] = {}
        self._size = 0  # (group, link) entries in _pending
        self._hosts: dict[str, str] = {}
        self._families: dict[str, tuple[str, str]] = {}  # User-Agent -> (browser, OS)
        # The group of the previous click: consecutive clicks nearly always share it.
        self._last: tuple[int, str, str, dict[int, int]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._days: dict[int, str] = {}
        self.dropped = 0  # clicks not counted because the backlog was full

    def record(self, link_id: int, now: float, referer: str, user_agent: str) -> None:
        """Count one click; never blocks, never raises."""
        day = int(now // 86400)
        last = self._last
        if last is not None and last[0] == day and last[1] == referer and last[2] == user_agent:
            counts = last[3]
        else:
            counts = self._group(day, referer, user_agent)
        n = counts.get(link_id)
        if n is not None:
            counts[link_id] = n + 1
        elif self._size < self._max_keys:
            counts[link_id] = 1
            self._size += 1
        else:  # the store is down for long: count what we must drop instead of growing forever
            self.dropped += 1

    def _group(self, day: int, referer: str, user_agent: str) -> dict[int, int]:
        host = self._hosts.get(referer)
        if host is None:
            host = referrer_host(referer[:_MAX_FIELD])
            if len(self._hosts) >= _MAX_CACHED:
                self._hosts.clear()
            self._hosts[referer] = host
        families = self._families.get(user_agent)
        if families is None:
            agent = user_agent[:_MAX_FIELD]
            families = (ua_family(agent), os_family(agent))
            if len(self._families) >= _MAX_CACHED:
                self._families.clear()
            self._families[user_agent] = families
        key = (day, host, families[0], families[1])
        counts = self._pending.get(key)
        if counts is None:
            counts = self._pending[key] = {}
        self._last = (day, referer, user_agent, counts)
        return counts

    def _day(self, day_number: int) -> str:
        day = self._days.get(day_number)
        if day is None:
            day = time.strftime("%Y-%m-%d", time.gmtime(day_number * 86400))
            self._days[day_number] = day
        return day

    @property
    def pending(self) -> int:
        """How many (link, day, referrer host, UA and OS family) counts wait for the next
        batch."""
        return self._size

    async def flush(self) -> None:
        """Write what was counted so far (one batch)."""
        if not self._size:
            return
        batch, self._pending, self._size, self._last = self._pending, {}, 0, None
        groups = {(self._day(d), h, f, o): c for (d, h, f, o), c in batch.items() if c}
        try:
            store = self._store
            if isinstance(store, GroupedClickStore):
                # The store takes the per-group dicts as they are (SQLite: serialized and
                # upserted by its writer thread, in chunks, without a tuple per link).
                await store.add_click_groups(groups)
            else:
                await store.add_clicks(
                    {ClickKey(i, *group): n for group, c in groups.items() for i, n in c.items()}
                )
        except DustlessError as exc:
            # Keep the counts for the next attempt: the store may be busy for a moment.
            log.warning("click batch not written, will retry: %s", exc)
            for group, counts in batch.items():
                target = self._pending.setdefault(group, {})
                for link_id, n in counts.items():
                    before = target.get(link_id)
                    if before is None:
                        self._size += 1
                        target[link_id] = n
                    else:
                        target[link_id] = before + n

    async def _run(self) -> None:
        # Workers started together would flush together, every second, their writer threads
        # then competing for the cores and the write lock at the same moment; a random phase
        # spreads them over the interval.
        await asyncio.sleep(self._interval * random.random())
        while True:
            # The batching period itself (not a wait for an event): seed 003's analytics
            # can be a second late; the redirect path must not pay for them.
            await asyncio.sleep(self._interval)
            await self.flush()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop the background task and write the last batch."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()

"""How a robots.txt fetch turns into decisions, and how long they are kept (RFC 9309 §2.3–§2.5).

Pure: the caller passes the HTTP status, the body and ``now``; nothing here reads the clock.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from dataclasses import dataclass

from dustless.robots._robots import Robots
from dustless.url import RobotsKey, robots_key, robots_url

__all__ = [
    "ROBOTS_CACHE_SECONDS",
    "ROBOTS_MAX_BYTES",
    "ROBOTS_MAX_REDIRECTS",
    "ROBOTS_RETRY_SECONDS",
    "CachedRobots",
    "RobotsCache",
    "RobotsKey",
    "RobotsOutcome",
    "classify_response",
    "robots_for_response",
    "robots_key",
    "robots_url",
]

# §2.5: "Crawlers SHOULD impose a parsing limit … MUST be at least 500 kibibytes (KiB)."
ROBOTS_MAX_BYTES = 500 * 1024
# §2.3.1.2: "crawlers SHOULD follow at least five consecutive redirects".
ROBOTS_MAX_REDIRECTS = 5
# §2.4: "Crawlers SHOULD NOT use the cached version for more than 24 hours, unless the
# robots.txt file is unreachable."
ROBOTS_CACHE_SECONDS = 24 * 3600
# An unreachable robots.txt disallows everything (§2.3.1.4) until it is fetched again; retry
# much sooner than the day a good copy is kept, so a short outage does not stop a host long.
ROBOTS_RETRY_SECONDS = 15 * 60


class RobotsOutcome(enum.Enum):
    """What a robots.txt response means (RFC 9309 §2.3.1)."""

    PARSED = "parsed"  # 2xx: the body's rules (§2.3.1.1)
    UNAVAILABLE = "unavailable"  # 4xx, or redirects exhausted: allow all (§2.3.1.3)
    UNREACHABLE = "unreachable"  # 5xx, 429, network failure: disallow all (§2.3.1.4)


def classify_response(status: int | None) -> RobotsOutcome:
    if status is None:
        return RobotsOutcome.UNREACHABLE
    if 200 <= status < 300:
        return RobotsOutcome.PARSED
    if status == 429:
        # Too Many Requests is the server asking us to slow down, not "no robots.txt here":
        # treat it as unreachable, as Google does, rather than as a licence to crawl.
        return RobotsOutcome.UNREACHABLE
    if 300 <= status < 500:
        # A 3xx that reaches us means the redirects were exhausted (more than
        # ROBOTS_MAX_REDIRECTS, or no usable Location): §2.3.1.2 lets us treat it as unavailable.
        return RobotsOutcome.UNAVAILABLE
    # 5xx, and codes outside any class (1xx, ≥ 600): the server is not answering sanely.
    return RobotsOutcome.UNREACHABLE


def robots_for_response(status: int | None, body: bytes) -> Robots:
    """Decisions for a robots.txt response (RFC 9309 §2.3.1).

    ``status`` is the final status after following redirects (``None``: unreachable, no
    response). 2xx → the body's rules, parsed up to ROBOTS_MAX_BYTES (§2.5: content after the
    limit is ignored); 4xx → allow all; 5xx or unreachable → disallow all.
    """
    outcome = classify_response(status)
    if outcome is RobotsOutcome.PARSED:
        return Robots.parse(body[:ROBOTS_MAX_BYTES])
    if outcome is RobotsOutcome.UNAVAILABLE:
        return Robots.allow_all()
    return Robots.disallow_all()


@dataclass(frozen=True, slots=True)
class CachedRobots:
    robots: Robots
    outcome: RobotsOutcome
    fetched: float  # when the response arrived (the caller's clock)
    expires: float  # fetch again at or after this time


class RobotsCache:
    """Decisions per origin with expiry; time is passed in, never read.

    Good answers (parsed or unavailable) live ROBOTS_CACHE_SECONDS (§2.4). An unreachable
    answer is retried after ``retry_seconds``; meanwhile the last good copy, if one is at
    most ``ttl + stale_seconds`` old, keeps being used (§2.4: "If the robots.txt is unreachable
    … crawlers MAY use a cached copy"), otherwise everything is disallowed (§2.3.1.4).
    Bounded: the least recently stored origins are dropped past ``max_entries``.
    """

    def __init__(
        self,
        ttl: float = ROBOTS_CACHE_SECONDS,
        retry_seconds: float = ROBOTS_RETRY_SECONDS,
        stale_seconds: float = 30 * 24 * 3600,
        max_entries: int = 100_000,
    ) -> None:
        self.ttl = ttl
        self.retry_seconds = retry_seconds
        self.stale_seconds = stale_seconds
        self.max_entries = max_entries
        self._entries: OrderedDict[RobotsKey, CachedRobots] = OrderedDict()
        self._good: dict[RobotsKey, CachedRobots] = {}  # last parsed/unavailable answer

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: RobotsKey, now: float) -> Robots | None:
        """The decisions for ``key``, or ``None`` when robots.txt must be fetched (again)."""
        entry = self._entries.get(key)
        if entry is None or now >= entry.expires:
            return None
        return entry.robots

    def entry(self, key: RobotsKey) -> CachedRobots | None:
        return self._entries.get(key)

    def put(self, key: RobotsKey, status: int | None, body: bytes, now: float) -> Robots:
        """Record a robots.txt response for ``key`` at ``now``; return the decisions to use."""
        outcome = classify_response(status)
        if outcome is RobotsOutcome.UNREACHABLE:
            robots = Robots.disallow_all()
            good = self._good.get(key)
            if good is not None and now - good.fetched <= self.ttl + self.stale_seconds:
                robots = good.robots
            entry = CachedRobots(robots, outcome, now, now + self.retry_seconds)
        else:
            entry = CachedRobots(robots_for_response(status, body), outcome, now, now + self.ttl)
            self._good[key] = entry
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            old, _ = self._entries.popitem(last=False)
            self._good.pop(old, None)
        return entry.robots

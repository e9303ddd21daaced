"""Fetching robots.txt by RFC 9309's rules (§2.3.1, §2.5), on top of the fetcher.

Up to ROBOTS_MAX_REDIRECTS redirects are followed (§2.3.1.2), only the first ROBOTS_MAX_BYTES
are read (§2.5), and the final answer goes through ``robots_for_response``: a network state
without a status (DNS, connect, header, or a body cut short) is "unreachable" and disallows
everything until the cache retries (§2.3.1.4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from dustless.fetch._result import FetchLimits, FetchResult
from dustless.robots import (
    ROBOTS_MAX_BYTES,
    ROBOTS_MAX_REDIRECTS,
    Robots,
    RobotsOutcome,
    classify_response,
    robots_for_response,
    robots_url,
)
from dustless.states import NetState

__all__ = ["FetchesWith", "RobotsFetch", "fetch_robots"]


class FetchesWith(Protocol):
    """What robots.txt fetching needs of a fetcher (``Fetcher``, or a test's fake)."""

    @property
    def limits(self) -> FetchLimits: ...

    async def fetch_with(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        limits: FetchLimits,
        *,
        keep_prefix: bool = False,
    ) -> FetchResult: ...


# A response whose head arrived and whose body is complete, or cut at the size limit (§2.5
# lets us parse the first 500 KiB). A stalled or broken body is not a robots.txt we can trust.
_USABLE = frozenset({NetState.OK, NetState.code, NetState.tooBig})


@dataclass(frozen=True, slots=True)
class RobotsFetch:
    """The outcome of fetching one origin's robots.txt."""

    url: str  # the robots.txt URL first asked
    robots: Robots
    status: int | None  # the final status, None when unreachable (for RobotsCache.put)
    body: bytes  # the final body, at most ROBOTS_MAX_BYTES
    results: tuple[FetchResult, ...]  # every request made, redirects included (for WARC)

    @property
    def outcome(self) -> RobotsOutcome:
        return classify_response(self.status)


async def fetch_robots(
    fetcher: FetchesWith,
    url: str,
    *,
    pause: Callable[[FetchResult], Awaitable[None]] | None = None,
) -> RobotsFetch:
    """Fetch the robots.txt of ``url``'s origin; never raises for remote faults.

    ``pause`` is awaited between two hops of a redirect chain with the response that
    redirected: each hop is another request to a host, and a crawler owes it its politeness
    delay (seed 004 §2) there too.
    """
    first = target = robots_url(url)  # InvalidURL: the caller passed a non-http(s) URL
    limits = dataclasses.replace(fetcher.limits, max_bytes=ROBOTS_MAX_BYTES)
    results: list[FetchResult] = []
    for hop in range(ROBOTS_MAX_REDIRECTS + 1):
        result = await fetcher.fetch_with(target, None, limits, keep_prefix=True)
        results.append(result)
        status = result.status
        redirect = status is not None and 300 <= status < 400 and result.location
        if redirect and hop < ROBOTS_MAX_REDIRECTS and result.location is not None:
            if pause is not None:
                await pause(result)
            target = result.location
            continue
        break
    final = results[-1]
    if len(results) > 1 and final.state is NetState.filtered:
        # The host answered, with a redirect to an address the policy refuses (say
        # 169.254.169.254): we do not follow it, as when redirects run out (§2.3.1.2), so
        # the file is "unavailable" — the redirect's status says so — not "unreachable",
        # which would retry a verdict that never changes.
        hop_status = results[-2].status
        return RobotsFetch(
            first, robots_for_response(hop_status, b""), hop_status, b"", tuple(results)
        )
    status = final.status if final.state in _USABLE else None
    body = final.body if status is not None else b""
    return RobotsFetch(first, robots_for_response(status, body), status, body, tuple(results))

"""Did a crawl fetch anything? Read after the engine has finished, from the crawl DB.

A crawl whose seeds all failed (no network, a name that does not resolve, robots.txt
refusing everything, an address the policy refuses) has done nothing a user wanted; it
must not exit 0 with a summary that looks like success. A seed counts as fetched when the
server answered it with any HTTP status: a redirect or a 404 is an answer, and what it led
to is the crawl's business, not a failure to start.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CrawlOutcome", "crawl_outcome"]


@dataclass(frozen=True, slots=True)
class CrawlOutcome:
    seeds: int  # seed URLs (depth 0) the batch recorded
    answered: int  # of them, those a server answered with an HTTP status
    reason: str  # one line: why none was fetched ("" when some was)

    @property
    def failed(self) -> bool:
        return self.seeds > 0 and self.answered == 0


def _describe(state: str) -> str:
    from dustless.fetch import NetState

    try:
        return NetState(state).description
    except ValueError:  # a state a newer engine records
        return state


def crawl_outcome(out: Path, batch: int) -> CrawlOutcome:
    """The seeds of ``batch`` in the crawl in ``out``: how many a server answered, and if
    none, one line saying why (the state and the recorded error of each kind of failure)."""
    from dustless.store import open_crawl, seed_outcomes

    with open_crawl(out) as db:
        rows = seed_outcomes(db, batch)
    answered = sum(1 for row in rows if row[2] is not None)
    if not rows or answered:
        return CrawlOutcome(len(rows), answered, "")
    why = [_why(state, robots) for _url, state, _status, _error, robots in rows]
    url, _state, _status, error, _robots = rows[0]
    if len(rows) == 1:
        reason = f"the seed could not be fetched: {url} ({why[0]}{f'; {error}' if error else ''})"
    else:
        kinds = ", ".join(f"{w} ×{n}" for w, n in Counter(why).most_common())
        reason = f"none of the {len(rows)} seeds could be fetched: {kinds}"
        if error:
            reason += f"; {url}: {error}"
    if any(state == "noIP" for _url, state, *_rest in rows):
        reason += "; no network, or a name to map with --resolve NAME:IP?"
    return CrawlOutcome(len(rows), answered, reason)


def _why(state: str, robots_state: str | None) -> str:
    if state == "robots" and robots_state == "unreachable":
        # RFC 9309 §2.3.1.4: an unreachable robots.txt means "disallow all" — the server
        # was never reached, which is what the user needs to hear.
        return "robots: its robots.txt could not be fetched, so nothing may be"
    return f"{state}: {_describe(state)}"

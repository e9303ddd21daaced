"""Crawl statistics (one dataclass, CONVENTIONS §5) and the live progress display (rich)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

__all__ = ["CrawlStats", "Progress"]


@dataclass(slots=True)
class CrawlStats:
    """Counters of one run (a resume starts a new run of the same batch)."""

    started: float = 0.0  # monotonic
    fetched: int = 0  # page requests answered or failed (robots.txt excluded)
    robots_fetched: int = 0
    states: dict[str, int] = field(default_factory=dict)  # network state -> fetches
    bytes: int = 0
    revisits: int = 0  # payload seen before: WARC revisit, links not extracted (003)
    discovered: int = 0  # new URLs admitted to the queue
    seeds_added: int = 0
    commits: int = 0
    queued: int = 0  # in the DB and the frontier, not fetched yet
    in_flight: int = 0
    hosts_ready: int = 0
    hosts_waiting: int = 0
    hosts_blocked: int = 0
    interrupted: bool = False
    late_signals: int = 0  # Ctrl-C / SIGTERM during the final flush: noted, not obeyed
    # Hosts the address policy refused (loopback, private, …), with the reason: the summary
    # says how to allow them.
    refused_hosts: dict[str, str] = field(default_factory=dict)

    def count_state(self, state: str) -> None:
        self.states[state] = self.states.get(state, 0) + 1

    @property
    def errors(self) -> dict[str, int]:
        return {s: n for s, n in sorted(self.states.items()) if s != "OK"}

    def rate(self, now: float) -> float:
        elapsed = now - self.started
        return self.fetched / elapsed if elapsed > 0 else 0.0


class Progress:
    """A live table on a terminal; nothing at all when the stream is not one.

    The engine calls :meth:`update` from its loop (4 times a second at most), so the display
    needs no thread of its own.
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True) -> None:
        stream = stream or sys.stderr
        self.enabled = enabled and stream.isatty()
        self._live: Live | None = None
        if self.enabled:
            self._live = Live(console=Console(file=stream), auto_refresh=False, transient=False)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

    def update(self, stats: CrawlStats, now: float) -> None:
        if self._live is not None:
            self._live.update(render(stats, now), refresh=True)


def render(stats: CrawlStats, now: float) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_row(
        Text(f"{stats.fetched:,} pages", style="bold"),
        f"{stats.rate(now):,.0f} pages/s",
        f"{stats.queued:,} queued",
        f"{stats.in_flight} in flight",
        f"hosts {stats.hosts_ready} ready / {stats.hosts_waiting} waiting"
        + (f" / {stats.hosts_blocked} blocked" if stats.hosts_blocked else ""),
    )
    errors = stats.errors
    table.add_row(
        f"{stats.revisits:,} revisits",
        f"{stats.discovered:,} new URLs",
        "errors: " + (", ".join(f"{s} {n:,}" for s, n in errors.items()) if errors else "none"),
    )
    return table

"""The counters of a crawl run (one dataclass, CONVENTIONS §5) and the progress a user watches.

On a terminal a live display (rich) is redrawn in place; anywhere else (a log file, a pipe,
a CI job) one progress report is written every ``interval`` seconds, so that a long crawl
is never silent until its end. Both show the same phrases (:func:`progress_lines`):

* the *recent* rate, over the last :data:`RATE_WINDOW` seconds, next to the average: the
  average of a crawl whose tail trickles hides that it has slowed down;
* the elapsed time;
* what the crawl waits for: hosts resting for politeness, hosts backing off after server
  trouble, hosts whose robots.txt has not been read yet;
* answers by HTTP status: the ``code`` state of seed 004 Fig. 3 lumps every response that
  is not 200 text/html, and redirects (3xx) are not errors.

Lines are packed phrase by phrase to the width (80 columns off a terminal), so a phrase is
never broken in the middle.
"""

from __future__ import annotations

import logging
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from dustless.kinds import LinkKind

if TYPE_CHECKING:  # rich is imported for a live display on a terminal only: its import
    # is a noticeable part of a crawl's start (python -X importtime)
    from rich.live import Live
    from rich.text import Text

__all__ = [
    "RATE_WINDOW",
    "Progress",
    "RunCounters",
    "code_groups",
    "format_duration",
    "pack_phrases",
    "progress_lines",
]

RATE_WINDOW = 10.0  # seconds the recent rate is measured over
_WIDTH = 80  # off a terminal: what a log viewer shows without wrapping

# The network states that stop a URL before any request (seed 004 Fig. 3 plus our gates):
# skipped on purpose, not failed.
_GATES = ("robots", "filtered")


@dataclass(slots=True)
class RunCounters:
    """Counters of one run (a resume starts a new run of the same batch)."""

    started: float = 0.0  # monotonic
    fetched: int = 0  # page requests answered or failed (robots.txt excluded)
    robots_fetched: int = 0
    # Soft 404s (crawl/soft404.py): random missing paths requested (redirect hops included),
    # and those that answered 200 with a page, the host's soft-404 signature.
    soft404_probes: int = 0
    soft404_signatures: int = 0
    states: dict[str, int] = field(default_factory=dict)  # network state -> fetches
    codes: dict[int, int] = field(default_factory=dict)  # HTTP status of state "code"
    bytes: int = 0
    revisits: int = 0  # payload seen before: WARC revisit, links not extracted (003)
    discovered: int = 0  # new URLs admitted to the queue
    seeds_added: int = 0
    commits: int = 0
    queued: int = 0  # in the DB and the frontier, not fetched yet
    in_flight: int = 0
    hosts_ready: int = 0  # hosts with work whose clock has run out (waiting for a slot)
    hosts_waiting: int = 0  # hosts with work whose clock still runs: the next two
    hosts_polite: int = 0  # ... resting between two requests (politeness)
    hosts_backoff: int = 0  # ... backing off after server trouble
    hosts_robots: int = 0  # hosts whose pages wait for their robots.txt
    hosts_blocked: int = 0
    interrupted: bool = False
    late_signals: int = 0  # Ctrl-C / SIGTERM during the final flush: noted, not obeyed
    # Many machines: seconds the crawl DB has been away while the store waits for it (a
    # restart, a failover), None while it answers; fetches dropped because their host's
    # lease was lost (another worker has it now and fetches them again).
    db_away: float | None = None
    # Meanwhile the worker fetches the URLs it holds: the pages waiting for the DB, and
    # whether fetching stopped because their bound was reached (memory stays bounded).
    db_waiting: int = 0
    db_full: bool = False
    lease_lost_drops: int = 0
    # Hosts the address policy refused (loopback, private, …), with the reason: the summary
    # says how to allow them.
    refused_hosts: dict[str, str] = field(default_factory=dict)
    db_round_trips: int | None = None  # a shared (PostgreSQL) store: its network round trips
    # Sitemaps and feeds (crawl/sources.py): how reading each ended, by kind letter and
    # source state ("m ok", "n not-source"); entries the parsers handed out; entries or
    # child sitemaps refused, by reason (other-origin, outside-path, too-deep, too-many).
    sources: dict[str, int] = field(default_factory=dict)
    sources_fetched: int = 0
    source_entries: int = 0
    sources_refused: dict[str, int] = field(default_factory=dict)
    # Failed fetches by what was fetched ("" a page, "robots.txt", "sitemap", "feed") and
    # what went wrong ("certificate", "DNS", "refused", "timeout", …: crawl/net.py's
    # ``failure_kind``), for the progress line's errors. A host whose robots.txt fails never
    # reaches a page, so no page state says why: the progress line showed "errors: none"
    # while a private CA's hosts failed (the fix then is the crawler's --ca-file).
    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    # The page states counted in ``failures`` (not again under their own names in errors).
    failed_states: dict[str, int] = field(default_factory=dict)
    # Fetches that failed for dustless's own reasons (a bug: the traceback is logged), each
    # time, apart from the server's errors: the first of a URL is retried (issue 24), so the
    # ``iErr`` state counts only the URLs a second one ended.
    internal_errors: int = 0
    # Many machines: requests not sent because their host's lease may have run out while
    # the task waited (the fence checked right before sending); sent after a renewal.
    fenced: int = 0

    def count_failure(self, what: str, kind: str) -> None:
        """A failed fetch of ``what`` ("" a page, "robots.txt", "sitemap", "feed")."""
        key = (what, kind)
        self.failures[key] = self.failures.get(key, 0) + 1

    def count_source(self, kind: LinkKind, state: str) -> None:
        key = f"{kind.value} {state}"
        self.sources[key] = self.sources.get(key, 0) + 1

    def reject_source(self, reason: str, n: int = 1) -> None:
        self.sources_refused[reason] = self.sources_refused.get(reason, 0) + n

    def sources_summary(self) -> str:
        """``sitemaps 3 (ok 3), feeds 2 (ok 1, not-source 1); 120 entries; refused …``."""
        parts = []
        for letter, name in (("m", "sitemaps"), ("n", "feeds")):
            states = {k[2:]: n for k, n in self.sources.items() if k[0] == letter}
            if states:
                inner = ", ".join(f"{s} {n:,}" for s, n in sorted(states.items()))
                parts.append(f"{name} {sum(states.values()):,} ({inner})")
        if not parts:
            return ""
        text = ", ".join(parts) + f"; {self.source_entries:,} entries"
        if self.sources_refused:
            refused = ", ".join(f"{r} {n:,}" for r, n in sorted(self.sources_refused.items()))
            text += f"; refused: {refused}"
        return text

    # Learning while crawling (crawl/learn.py): rules in force, rules retracted, the URLs
    # the rules kept from being fetched (net of retractions), and those admitted again.
    learning: bool = False
    rules_learned: int = 0
    rules_retracted: int = 0
    duplicates_avoided: int = 0
    rules_checked: int = 0  # merges fetched anyway, to check the rules
    readmitted: int = 0

    def count_state(
        self, state: str, status: int | None = None, *, kind: str | None = None, what: str = ""
    ) -> None:
        """A URL's state; ``kind`` (``failure_kind``) names what went wrong if it failed."""
        self.states[state] = self.states.get(state, 0) + 1
        if state == "code" and status is not None:
            self.codes[status] = self.codes.get(status, 0) + 1
        if kind is not None and _failed(state):
            self.count_failure(what, kind)
            self.failed_states[state] = self.failed_states.get(state, 0) + 1

    @property
    def errors(self) -> dict[str, int]:
        """Fetches that failed: the 4xx and 5xx of ``code`` by status, then the other states
        (a redirect or a 200 that is not HTML is an answer, not an error)."""
        out = {str(s): n for s, n in sorted(self.codes.items()) if s >= 400}
        unknown = self.states.get("code", 0) - sum(self.codes.values())
        if unknown > 0:
            out["code"] = unknown  # a status the engine did not report
        for state, n in sorted(self.states.items()):
            rest = n - self.failed_states.get(state, 0)
            if _failed(state) and rest > 0:
                out[state] = rest  # counted without a kind
        for (what, kind), n in sorted(self.failures.items()):
            key = f"{what} {kind}" if what else kind
            out[key] = out.get(key, 0) + n
        return out

    def rate(self, now: float) -> float:
        elapsed = now - self.started
        return self.fetched / elapsed if elapsed > 0 else 0.0

    def summary(self) -> str:
        """States with ``code`` broken down: ``OK 90, code 12 (301 10, 404 2), cTim 1``."""
        parts = []
        for state, n in sorted(self.states.items()):
            if state == "code" and self.codes:
                inner = ", ".join(f"{s} {c:,}" for s, c in sorted(self.codes.items()))
                parts.append(f"code {n:,} ({inner})")
            else:
                parts.append(f"{state} {n:,}")
        return ", ".join(parts) or "none"


def _failed(state: str) -> bool:
    """A state that is an error of the fetch: not an answer, not a gate, and not ours (the
    internal errors are counted apart)."""
    return state not in ("OK", "code", "iErr") and state not in _GATES


def code_groups(codes: dict[int, int]) -> dict[str, dict[int, int]]:
    """HTTP statuses by what they mean to a crawl: answers (2xx other than a download, 3xx
    redirects — RFC 9110 §15.4 — and 304) and errors (4xx, 5xx), each in status order."""
    groups: dict[str, dict[int, int]] = {"redirects": {}, "other answers": {}, "errors": {}}
    for status, n in sorted(codes.items()):
        if status >= 400:
            groups["errors"][status] = n
        elif 300 <= status < 400 and status != 304:
            groups["redirects"][status] = n
        else:
            groups["other answers"][status] = n
    return groups


def format_duration(seconds: float) -> str:
    """``45s``, ``3m07s``, ``2h05m``: short, and of constant shape as it grows."""
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def pack_phrases(groups: Iterable[list[str]], width: int, indent: str = "  ") -> list[str]:
    """Lines of at most ``width`` columns, every line after the first indented (one report,
    one block). The phrases of a group are joined by ", ", groups by three spaces; a group
    that does not fit on the current line starts a new one, and a group wider than a line
    is broken between two of its phrases, never inside one. (A single phrase wider than the
    line gets a line of its own.)"""
    lines: list[str] = []
    line = ""

    def fits(text: str) -> bool:
        return len(text) <= width

    for group in groups:
        whole = ", ".join(group)
        if line and fits(line + "   " + whole):
            line += "   " + whole
            continue
        if line:
            lines.append(line)
            line = indent
        if fits(line + whole):
            line += whole
            continue
        for phrase in group:
            if not line.strip():
                line += phrase
            elif fits(line + ", " + phrase):
                line += ", " + phrase
            else:
                lines.append(line)
                line = indent + phrase
    if line.strip():
        lines.append(line)
    return [ln if fits(ln) else ln.strip() for ln in lines]


def _status_phrases(label: str, counts: dict[int, int]) -> list[str]:
    items = [f"{s} {n:,}" for s, n in counts.items()]
    return [f"{label}: {items[0]}", *items[1:]] if items else []


def progress_lines(stats: RunCounters, now: float, recent: float, width: int) -> list[str]:
    """What the crawl is doing, as lines of at most ``width`` columns (see the module)."""
    s = stats
    head = [
        f"{s.fetched:,} pages",
        f"{recent:,.1f} pages/s now" if recent < 10 else f"{recent:,.0f} pages/s now",
        f"{s.rate(now):,.0f} average",
        f"{format_duration(now - s.started)} elapsed",
    ]
    work = [f"{s.queued:,} queued", f"{s.in_flight} in flight"]
    waits = [
        f"{n} {what}"
        for n, what in (
            (
                s.hosts_polite,
                "hosts resting (politeness)" if s.hosts_polite > 1 else "host resting (politeness)",
            ),
            (s.hosts_backoff, "backing off (server trouble)"),
            (s.hosts_robots, "waiting for robots.txt"),
            (s.hosts_ready, "ready"),
        )
        if n
    ]
    if not waits and s.in_flight:
        # Nothing else to do: the crawl waits for answers (a slow server, a stall).
        waits = [f"{s.in_flight} response{'s' if s.in_flight > 1 else ''}"]
    if waits:
        waits[0] = "waiting: " + waits[0]
    groups = [head, work, waits]
    if s.db_away is not None:
        away = [f"database unavailable, retrying ({format_duration(s.db_away)})"]
        if s.db_waiting:
            away.append(f"{s.db_waiting:,} page{'s' if s.db_waiting != 1 else ''} fetched for it")
        if s.db_full:
            away.append("fetching paused (buffer full)")
        groups.insert(0, away)
    ok = s.states.get("OK", 0)
    codes = code_groups(s.codes)
    answers = [f"OK {ok:,}"] if ok else []
    answers += _status_phrases("redirects", codes["redirects"])
    answers += _status_phrases("other", codes["other answers"])
    groups.append(answers)
    errors = [f"{k} {v:,}" for k, v in s.errors.items()] or ["none"]
    groups.append([f"errors: {errors[0]}", *errors[1:]])
    if s.internal_errors:
        groups.append([f"internal errors {s.internal_errors:,}, see the log"])
    skipped = [f"{g} {s.states[g]:,}" for g in _GATES if s.states.get(g)]
    if skipped:
        groups.append(["skipped: " + skipped[0], *skipped[1:]])
    if s.hosts_blocked:
        groups.append([f"{s.hosts_blocked} host{'s' if s.hosts_blocked > 1 else ''} given up"])
    if s.learning:
        learned = [
            f"learned {s.rules_learned:,} rule{'s' if s.rules_learned != 1 else ''}",
            f"{s.duplicates_avoided:,} duplicates avoided",
        ]
        if s.rules_retracted:
            learned.insert(1, f"{s.rules_retracted:,} retracted")
        if s.rules_checked:
            learned.append(f"{s.rules_checked:,} checked")
        groups.append(learned)
    return pack_phrases((g for g in groups if g), width)


class _Rate:
    """Pages per second over the last ``window`` seconds (the cumulative average until one
    second of samples exists)."""

    def __init__(self, window: float = RATE_WINDOW) -> None:
        self.window = window
        self._samples: deque[tuple[float, int]] = deque()

    def update(self, stats: RunCounters, now: float) -> float:
        samples = self._samples
        samples.append((now, stats.fetched))
        while len(samples) > 2 and now - samples[1][0] >= self.window:
            samples.popleft()
        t0, n0 = samples[0]
        if now - t0 < 1.0:
            return stats.rate(now)
        return (stats.fetched - n0) / (now - t0)


@dataclass(frozen=True, slots=True)
class _Lines:
    """Rich renderable for the live display: plain lines, never wrapped by rich."""

    lines: tuple[str, ...]

    def __rich__(self) -> Text:
        from rich.text import Text

        return Text("\n".join(self.lines), no_wrap=True, overflow="ellipsis")


class Progress:
    """A live display on a terminal; off a terminal, a report every ``interval`` seconds
    (``0``: none). The engine calls :meth:`update` from its loop (4 times a second at most),
    so neither needs a thread of its own.

    With ``log`` (``crawl --log-file``) the periodic reports go to that logger, at INFO,
    instead of the stream, and they go there even when ``enabled`` is false (``--quiet``):
    a log file asked for is written; the terminal keeps its live display."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool = True,
        interval: float = 10.0,
        width: int | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        stream = stream or sys.stderr
        self.stream = stream
        tty = stream.isatty()
        self.live = enabled and tty
        self._log = log if log is not None and log.isEnabledFor(logging.INFO) else None
        self.periodic = interval > 0 and (
            self._log is not None if log is not None else enabled and not tty
        )
        self.enabled = self.live or self.periodic
        self.interval = interval
        self._width = width
        self._rate = _Rate()
        self._last_report: float | None = None
        self._live: Live | None = None
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(console=Console(file=stream), auto_refresh=False, transient=False)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()

    def width(self) -> int:
        if self._width is not None:
            return self._width
        if self._live is not None:
            return max(self._live.console.width, 40)
        return _WIDTH

    def update(self, stats: RunCounters, now: float) -> None:
        if not self.enabled:
            return
        recent = self._rate.update(stats, now)
        if self._live is not None:
            lines = progress_lines(stats, now, recent, self.width())
            self._live.update(_Lines(tuple(lines)), refresh=True)
        if not self.periodic:
            return
        if self._last_report is None:
            self._last_report = now  # the first report after one interval, not at once
            return
        if now - self._last_report >= self.interval:
            self._last_report = now
            # A log file is read off a terminal: 80 columns, whatever the terminal's width.
            lines = progress_lines(stats, now, recent, _WIDTH if self._log else self.width())
            if self._log is not None:
                self._log.info("\n".join(lines))
                return
            self.stream.write("\n".join(lines) + "\n")
            self.stream.flush()

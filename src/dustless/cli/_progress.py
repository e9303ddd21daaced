"""Progress of the long steps of the reading commands (``stats``, ``evaluate``, ``report``,
``export``): what a user on a million fetches watches instead of a silent minute.

As ``crawl``'s progress (``crawl/progress.py``) does: on a terminal one live line, redrawn
in place (at most 4 times a second) and erased when the step ends, so the command's own
output follows on a clean line; anywhere else (a log, a pipe, a CI job) one line every
``interval`` seconds (10; the hidden variable ``DUSTLESS_PROGRESS_INTERVAL`` changes it, for
the tests), and a last line when the step ends if it lasted longer than that, so a long step
is never silent until its end and a short one prints nothing. ``--quiet`` (and ``--json``
where the command's summary goes to stderr) prints none. Always on stderr: stdout is the
command's result (a table, JSON, a WACZ).

The counters are named by the loops themselves, a plural noun and a verb
(``StepProgress.add("rows read")``); a line reads ``stats: 12 queries run, 153,120 rows
read, 14s elapsed`` (``1 query run`` for one). The crawl reader of a
command is wrapped (:func:`counting_reader`) so that every query it runs and every row it
hands out is counted, without the analysis code knowing of a clock (CONVENTIONS "Pure core").
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from dustless.crawl.progress import format_duration
from dustless.store import BatchInfo, CrawlReader

__all__ = ["INTERVAL_ENV", "StepProgress", "counting_reader", "progress_interval"]

INTERVAL_ENV = "DUSTLESS_PROGRESS_INTERVAL"
_DEFAULT_INTERVAL = 10.0
_LIVE_EVERY = 0.25  # seconds between two redraws of the live line
_ROWS_EVERY = 512  # rows between two looks at the clock: a million rows, 2,000 looks


def progress_interval() -> float:
    """Seconds between two periodic lines: ``DUSTLESS_PROGRESS_INTERVAL`` or 10."""
    raw = os.environ.get(INTERVAL_ENV)
    if not raw:
        return _DEFAULT_INTERVAL
    try:
        value = float(raw)
    except ValueError:
        return _DEFAULT_INTERVAL
    return value if value > 0 else _DEFAULT_INTERVAL


class StepProgress:
    """The counters of one command's long step and how they are shown (see the module).

    ``clock`` is injectable (a fake clock in tests); ``stream`` defaults to stderr."""

    def __init__(
        self,
        command: str,
        *,
        quiet: bool = False,
        stream: TextIO | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = command
        self.stream = stream or sys.stderr
        self.clock = clock
        self.interval = progress_interval() if interval is None else interval
        self.live = not quiet and self.stream.isatty()
        self.periodic = not quiet and not self.live
        self.counts: dict[str, int] = {}
        self.started = clock()
        self._last = self.started  # last line written (periodic) or drawn (live)
        self._drawn = False
        self.lines_written = 0

    def add(self, what: str, n: int = 1) -> None:
        """``n`` more of ``what`` (``"rows read"``); a line when one is due."""
        self.counts[what] = self.counts.get(what, 0) + n
        self.check()

    def check(self) -> None:
        if not (self.live or self.periodic):
            return
        now = self.clock()
        if self.live and now - self._last >= _LIVE_EVERY:
            self._last = now
            self._drawn = True
            self.stream.write("\r" + self.line(now)[: _width() - 1] + "\x1b[K")
            self.stream.flush()
        elif self.periodic and now - self._last >= self.interval:
            self._write(now)

    def line(self, now: float) -> str:
        counts = ", ".join(_count(n, what) for what, n in self.counts.items())
        elapsed = f"{format_duration(now - self.started)} elapsed"
        return f"{self.command}: {counts}, {elapsed}" if counts else f"{self.command}: {elapsed}"

    def _write(self, now: float, done: bool = False) -> None:
        self._last = now
        line = self.line(now)
        if done:
            line = line.replace(": ", ": done, ", 1)
        self.stream.write(line + "\n")
        self.stream.flush()
        self.lines_written += 1

    def close(self) -> None:
        """The step is over: the live line is erased; off a terminal, a step that lasted
        longer than one interval ends with its totals."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False
        now = self.clock()
        if self.periodic and now - self.started >= self.interval:
            self._write(now, done=True)

    def __enter__(self) -> StepProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _count(n: int, what: str) -> str:
    """``1,234 rows read``, ``1 row read``: ``what`` is a plural noun and a verb, and the
    noun loses its plural for one (``queries run`` -> ``1 query run``)."""
    if n != 1:
        return f"{n:,} {what}"
    *head, noun, verb = what.split(" ")
    noun = noun[:-3] + "y" if noun.endswith("ies") else noun.removesuffix("s")
    return " ".join(["1", *head, noun, verb])


def _width() -> int:
    try:
        return max(os.get_terminal_size(sys.stderr.fileno()).columns, 40)
    except (OSError, ValueError):
        return 80


class _CountingReader:
    """A :class:`CrawlReader` that counts the queries it runs and the rows it hands out."""

    def __init__(self, inner: CrawlReader, progress: StepProgress) -> None:
        self._inner = inner
        self._progress = progress
        self.batches: tuple[BatchInfo, ...] = inner.batches
        self.tables: frozenset[str] = inner.tables

    @property
    def source(self) -> str:
        return self._inner.source

    @property
    def path(self) -> Path:
        return self._inner.path

    def crawl_batches(self, selected: int | None = None) -> tuple[int, ...]:
        return self._inner.crawl_batches(selected)

    def probe_batches(self) -> tuple[int, ...]:
        return self._inner.probe_batches()

    def columns(self, table: str) -> frozenset[str]:
        return self._inner.columns(table)

    def instr(self, haystack: str, needle: str) -> str:
        return self._inner.instr(haystack, needle)

    def greatest(self, a: str, b: str) -> str:
        return self._inner.greatest(a, b)

    def floor(self, value: str) -> str:
        return self._inner.floor(value)

    def crawl_dirs(self) -> list[Path]:
        return self._inner.crawl_dirs()

    def warc_dir(self, name: str) -> Path:
        return self._inner.warc_dir(name)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        rows = self._inner.query(sql, params)
        self._progress.add("queries run")
        return rows

    def iterate(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        progress = self._progress
        progress.add("queries run")
        counts = progress.counts
        counts.setdefault("rows read", 0)
        n = 0
        for row in self._inner.iterate(sql, params):
            n += 1
            if n == _ROWS_EVERY:
                counts["rows read"] += n
                n = 0
                progress.check()
            yield row
        counts["rows read"] += n

    def script(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._inner.script(sql, params)
        self._progress.add("queries run")

    def script_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._inner.script_many(sql, rows)
        self._progress.add("queries run")

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> CrawlReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def counting_reader(inner: CrawlReader, progress: StepProgress) -> CrawlReader:
    """``inner``, its queries and rows counted in ``progress``."""
    return _CountingReader(inner, progress)

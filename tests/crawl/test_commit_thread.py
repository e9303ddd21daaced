"""A commit off the event loop: while its WARC fsync (and the DB commit after it) is held,
the crawl goes on sending requests; once it is let go, everything is stored.

The fsync is held by a test double around ``WarcWriter.flush_durable`` that blocks in the
thread that calls it — the engine's commit thread, or, were the commit on the event loop,
the loop itself — until the test web has answered more requests than before it blocked
(the web is another process: its counter is read, with a generous deadline). Nothing here
depends on how long anything takes: the outcome is whether requests came while it was held.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dustless.store import SQLiteStore, WarcWriter

HELD_FOR = 3  # requests the web must see while the commit is held
DEADLINE = 60.0  # seconds to see them (a loaded machine); far beyond what it takes
LATENCY = ("--latency", "0.05")  # every answer of the test web waits this long
DELAY = 0.1  # seconds between two requests to one host


def _requests(web: Any) -> int:
    return sum(h["requests"] for h in web.stats()["hosts"].values())


def _states(out: Path) -> set[tuple[str, str, str | None]]:
    with SQLiteStore(out) as store:
        rows = store.query(
            "SELECT u.url, u.state, f.state FROM urls u LEFT JOIN fetches f ON f.url_id = u.id"
        )
    return {(url, state, fetched) for url, state, fetched in rows}


class HeldFsync:
    """The first fsync with records to sync, once ``after`` requests were answered, blocks
    until ``HELD_FOR`` more requests reach the web; ``seen``: how many came meanwhile."""

    def __init__(self, web: Any, after: int) -> None:
        self.web = web
        self.after = after
        self.armed = True
        self.seen: int | None = None
        self.released = threading.Event()
        self._real = WarcWriter.flush_durable

    def __call__(self, writer: WarcWriter) -> None:
        if self.armed and writer._dirty and _requests(self.web) >= self.after:
            self.armed = False
            try:
                before = _requests(self.web)
                deadline = time.monotonic() + DEADLINE
                while _requests(self.web) < before + HELD_FOR and time.monotonic() < deadline:
                    time.sleep(0.02)  # another process's counter: nothing to await
                self.seen = _requests(self.web) - before
            finally:
                self.released.set()
        self._real(writer)


def test_a_held_commit_does_not_stop_fetching(
    testweb_factory: Any, tmp_path: Path, ch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Answers that take a while and a politeness delay: the crawl lasts several commits.
    web = testweb_factory(profile="clean", sites=6, pages_per_site=25, extra_args=LATENCY)
    want_result = ch.crawl(web, tmp_path / "reference", concurrency=4, delay=DELAY)
    assert want_result.finished
    want = _states(tmp_path / "reference")
    web.reset()

    held = HeldFsync(web, after=20)
    monkeypatch.setattr(WarcWriter, "flush_durable", lambda writer: held(writer))
    result = ch.crawl(web, tmp_path / "held", concurrency=4, delay=DELAY)

    assert held.released.is_set(), "no commit was held"
    assert held.seen is not None
    assert held.seen >= HELD_FOR, f"{held.seen} requests while the commit was held"
    # Then the commit completed and the crawl went on to its end: everything is stored.
    assert result.finished
    assert _states(tmp_path / "held") == want

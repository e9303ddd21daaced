"""``run_crawl``: open a crawl directory, run the engine on it, close it.

The engine (``Crawler``) is given its parts; ``crawl/_build.py`` opens them and is the one
place that reads the settings: for a crawl directory on its own SQLite DB
(``crawl/resume.py``), or for one worker of a crawl shared on PostgreSQL (``db=``,
``crawl/worker.py``). When the engine returns it writes ``seeds.out.txt`` and marks the
batch finished — in that order, so that a ``kill -9`` in between leaves an open batch whose
``--resume`` writes the file again. A worker's engine returns "finished" only when no host
anywhere has work left, so whichever worker gets there first ends the batch (the others
find it ended, which changes nothing for them).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable
from pathlib import Path

from dustless.crawl._build import open_crawl
from dustless.crawl._heap import keep_heap
from dustless.crawl.config import CrawlConfig
from dustless.crawl.engine import Crawler, CrawlResult
from dustless.crawl.progress import Progress
from dustless.crawl.resume import write_seeds_out

__all__ = ["run_crawl"]


def run_crawl(
    config: CrawlConfig,
    out: Path,
    *,
    resume: bool = False,
    progress: Progress | None = None,
    strict: bool | None = None,
    db: str | None = None,
    worker: str | None = None,
) -> CrawlResult:
    """Run a crawl to its end (or to Ctrl-C) in a fresh event loop (uvloop when present).

    ``db``: a ``postgresql://`` URL — this process is one worker (named ``worker``) of the
    crawl shared there, and ``out`` holds its own WARC files."""
    parts = open_crawl(
        config,
        out,
        resume=resume,
        now=time.time(),
        db=db,
        worker=worker,
        progress=progress,
        strict=strict,
    )
    store, warc = parts.store, parts.warc
    crawler = Crawler(parts)
    # The crawl allocates millions of short-lived objects and few cycles: collect the young
    # generation less often (measured: ~10 % of the CPU per page at the default threshold).
    threshold = gc.get_threshold()
    gc.set_threshold(50_000, 20, 20)
    # Process-wide too, so here and not in the engine (which a program may embed): the same
    # few MiB of C heap are freed and taken again every page (crawl/_heap.py).
    keep_heap()
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(store.close)
            if warc is not None:  # --store none has none
                stack.callback(warc.close)
            if progress is not None:
                stack.enter_context(progress)
            runner = stack.enter_context(asyncio.Runner(loop_factory=_loop_factory()))
            result = runner.run(crawler.run())
            write_seeds_out(store, out)
            if result.finished:
                store.end_batch(parts.batch.number, time.time())
                store.commit()
        # Counted once the store is closed (its last writes are sent then).
        result.stats.db_round_trips = getattr(store, "round_trips", None)
        return result
    finally:
        gc.set_threshold(*threshold)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:  # an optional speed-up (pyproject installs it off Windows)
        return None
    return uvloop.new_event_loop

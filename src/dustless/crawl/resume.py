"""Opening a crawl directory: a fresh crawl, or ``--resume`` after a stop or a ``kill -9``.

On resume the settings come from the batch row (the very same crawl continues), URLs left
``in-flight`` by the crash go back to ``queued``, and the WARC writer cuts what the crash left
after the last commit (records no row points to, whose URLs are fetched again) and any torn
record. The counters behind ``--max-pages``, ``--max-pages-per-site`` and ``--max-sites``
live in the DB (``sites``), so nothing is recounted.
At the end the crawl writes ``OUTDIR/seeds.out.txt``: every seed, given and discovered, the
input URL list of the next crawl (seed 004 Fig. 1, "출력 URL 목록").
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from dustless.errors import InvalidOption
from dustless.store import WARC_DIR, Batch, CrawlStore, SQLiteStore, first_crawl

__all__ = [
    "SEEDS_OUT",
    "CrawlFinished",
    "Opened",
    "failed_first_crawl",
    "open_run",
    "ready_dir",
    "write_seeds_out",
]


class CrawlFinished(InvalidOption):
    """``--resume`` of a crawl that has finished, or a worker that came after its end;
    ``repaired``: nothing wrong to report (its missing ``seeds.out.txt`` was written from
    the DB, or a late worker of the crawl found no work left): the command succeeds."""

    def __init__(self, out: Path, repaired: bool, *, why: str | None = None) -> None:
        what = "wrote its missing seeds.out.txt" if repaired else "nothing to resume"
        super().__init__(why or f"the crawl in {out} has finished: {what}")
        self.repaired = repaired


SEEDS_OUT = "seeds.out.txt"


@dataclass(frozen=True, slots=True)
class Opened:
    """A crawl's store and batch, opened; its settings are the batch row's (JSON)."""

    store: CrawlStore  # SQLite in the directory, or PostgreSQL shared by workers
    batch: Batch
    # The batch was started with the settings given; otherwise (a resume, a worker that
    # joined) the stored ones are the crawl's.
    fresh: bool
    prefix: str = "dustless"  # its WARC files' names (a worker's carry its name)


def failed_first_crawl(out: Path) -> bool:
    """Does ``out`` hold a first crawl that ended with none of its seeds answered (no
    network, a dead seed, a refused address)? Nothing in it is worth keeping — and neither
    a rerun ("add --resume") nor ``--resume`` ("finished") could use the directory — so a
    rerun starts over. Read-only: a check, never a migration."""
    db = out / "crawl.db"
    if not db.is_file():
        return False
    got = first_crawl(db)  # None: not ours to judge; the usual refusal names the directory
    if got is None or not got.ended:
        return False  # a crawl under way (resumable), one with history, or not a crawl DB
    return got.seeds > 0 and got.answered == 0 and got.responses == 0


def _clear_failed(out: Path) -> None:
    """What a failed first crawl wrote in ``out`` (``failed_first_crawl``), removed."""
    from dustless.crawl.learn import LEARNED_RULES
    from dustless.store import INDEX_DIR

    for name in ("crawl.db", "crawl.db-wal", "crawl.db-shm", SEEDS_OUT, LEARNED_RULES):
        (out / name).unlink(missing_ok=True)
    for name in (WARC_DIR, INDEX_DIR):
        shutil.rmtree(out / name, ignore_errors=True)


def ready_dir(out: Path, *, resume: bool) -> None:
    """Refuse a directory that cannot hold this run (read-only, but for a failed first
    crawl's remains, which a rerun clears)."""
    db_path = out / "crawl.db"
    if not resume and db_path.exists() and failed_first_crawl(out):
        _clear_failed(out)
    if not resume and db_path.exists():
        raise InvalidOption(
            f"{out} already holds a crawl: add --resume to continue it, or choose another --out"
        )
    if resume and not db_path.exists():
        raise InvalidOption(f"{out} holds no crawl to resume (no crawl.db)")


def open_run(out: Path, settings: str, *, resume: bool, now: float, memory: bool = False) -> Opened:
    """The crawl DB in ``out`` (``ready_dir`` first), its batch started with ``settings``
    (JSON), or on resume the open one. ``memory`` (``--store none``): the frontier and
    URL-seen in an in-memory DB, gone with the process; the directory gets seeds.out.txt."""
    if memory:
        out.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(":memory:" if memory else out)
    try:
        if not resume:
            return Opened(store, store.start_batch(settings, now), fresh=True)
        batch = store.resume_batch()
        if batch is None:
            # A kill -9 right after the final commit of an older dustless could lose the
            # last file: the DB still knows every seed, so write it rather than refuse.
            repaired = not (out / SEEDS_OUT).exists()
            if repaired:
                write_seeds_out(store, out)
            raise CrawlFinished(out, repaired)
        return Opened(store, batch, fresh=False)
    except BaseException:
        store.close()
        raise


SEEDS_OUT_HEADER = "# dustless seeds.out.txt: this crawl's seeds, a URL a line (seed 004 Fig. 1)\n"
DISCOVERED_HEADER = (
    "# discovered: outside links of crawled pages. A crawl reading this file with --seeds\n"
    "# does not trust them: a private or loopback address among them needs --allow-private.\n"
)


def write_seeds_out(store: CrawlStore, out: Path) -> Path:
    """``OUTDIR/seeds.out.txt`` (atomically replaced): the given seeds, then, under a comment
    that says so, the discovered ones — every URL a line, so the file is the next crawl's
    ``--seeds`` as it stands."""
    path = out / SEEDS_OUT
    tmp = path.with_suffix(".tmp")
    rows = store.seeds()
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(SEEDS_OUT_HEADER)
        for row in rows:
            if row.discovered_from is None:
                f.write(row.url + "\n")
        discovered = [row.url for row in rows if row.discovered_from is not None]
        if discovered:
            f.write(DISCOVERED_HEADER)
            f.writelines(url + "\n" for url in discovered)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path

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

from dustless.crawl.config import CrawlConfig
from dustless.crawl.net import Fetcher, make_fetcher
from dustless.crawl.scope import site_of
from dustless.crawl.scripted import Rules, identity_policy, load_rules
from dustless.errors import InvalidOption
from dustless.store import WARC_DIR, Batch, CrawlStore, SQLiteStore, WarcWriter, first_crawl
from dustless.url import hostname_of

__all__ = [
    "SEEDS_OUT",
    "CrawlFinished",
    "Run",
    "checked_rules",
    "failed_first_crawl",
    "open_run",
    "warc_info",
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


@dataclass(slots=True)
class Run:
    """The parts of a crawl, opened: what ``Crawler`` is given."""

    config: CrawlConfig
    store: CrawlStore  # SQLite in the directory, or PostgreSQL shared by workers
    batch: Batch
    warc: WarcWriter | None  # None: --store none archives nothing
    fetcher: Fetcher
    rules: Rules
    resumed: bool


def checked_rules(config: CrawlConfig) -> tuple[Rules, Fetcher]:
    """The crawl's rule files, loaded, and its fetcher; bad settings (policy, --resolve,
    CIDRs, rule files) fail here, before anything is written. The fetcher is the run's, as
    long as ``config`` is (``start_worker``): made once, not once to check and once to use."""
    rules = load_rules(config.rules, config.scripts)
    identity_policy(config.policy, rules.all)
    return rules, make_fetcher(config)


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


def open_run(config: CrawlConfig, out: Path, *, resume: bool, now: float) -> Run:
    db_path = out / "crawl.db"
    if not resume and db_path.exists() and failed_first_crawl(out):
        _clear_failed(out)
    if not resume and db_path.exists():
        raise InvalidOption(
            f"{out} already holds a crawl: add --resume to continue it, or choose another --out"
        )
    if resume and not db_path.exists():
        raise InvalidOption(f"{out} holds no crawl to resume (no crawl.db)")
    fetcher = None
    if not resume:
        rules, fetcher = checked_rules(config)
    # --store none: the frontier and URL-seen in an in-memory DB, gone with the process;
    # the directory gets seeds.out.txt only.
    if config.store == "none":
        out.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(":memory:" if config.store == "none" else out)
    try:
        if resume:
            batch = store.resume_batch()
            if batch is None:
                # A kill -9 right after the final commit of an older dustless could lose the
                # last file: the DB still knows every seed, so write it rather than refuse.
                repaired = not (out / SEEDS_OUT).exists()
                if repaired:
                    write_seeds_out(store, out)
                raise CrawlFinished(out, repaired)
            config = CrawlConfig.from_json(batch.config).with_(progress=config.progress)
            rules = load_rules(config.rules, config.scripts)  # the files the crawl began with
            # A crawl stored before the parties' table existed: rebuild it from its rows.
            scope = config.scope
            store.rebuild_sites(lambda host: site_of(hostname_of(host), scope))
        else:
            batch = store.start_batch(config.to_json(), now)
        return start_worker(
            config, store, batch, out, rules, resume=resume, now=now, fetcher=fetcher
        )
    except BaseException:
        store.close()
        raise


def start_worker(
    config: CrawlConfig,
    store: CrawlStore,
    batch: Batch,
    out: Path,
    rules: Rules,
    *,
    resume: bool,
    now: float,
    prefix: str = "dustless",
    fetcher: Fetcher | None = None,
) -> Run:
    """The part of opening a run every worker shares, its batch chosen: register the worker,
    give back what it had claimed, open its WARC writer cut to what the DB committed."""
    store.register_worker(str(out.resolve()), now)
    # What this worker had claimed when it stopped (or crashed) goes back to the queue.
    store.requeue_in_flight()
    warc = None
    if config.store != "none":
        warc = WarcWriter(
            out / WARC_DIR,
            prefix=prefix,
            committed_ends=store.warc_ends(),
            exact_ends=store.warc_committed_ends(),
            info=warc_info(config),
            bodies=config.warc_bodies,
        )
    store.commit()
    # The fetcher of the settings checked before the DB was opened, if they are still the
    # crawl's (a resume or a joining worker takes the stored ones).
    fetcher = make_fetcher(config) if fetcher is None else fetcher
    return Run(config, store, batch, warc, fetcher, rules, resume)


def warc_info(config: CrawlConfig) -> dict[str, str]:
    """The ``warcinfo`` record's fields (WARC 1.1 §6.2) of a crawl's WARC files."""
    return {
        "software": "dustless/0.1",
        "format": "WARC File Format 1.1",
        "robots": "classic",
        "http-header-user-agent": config.user_agent,
    }


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

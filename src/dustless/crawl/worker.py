"""Opening a crawl directory as one worker of a crawl on PostgreSQL (``--db postgresql://…``).

The crawl's state — URLs, leases, fetch rows, parties, robots.txt — is in the shared DB; the
directory holds what is this worker's own: its WARC files (``warc/dustless-NAME-NNNNN.warc.gz``,
named with the worker so that every worker's files can sit side by side), their CDXJ index,
``seeds.out.txt`` at the end, and ``worker.json``, which remembers the worker's name so that
``--resume`` continues as the same worker (its committed WARC ends, its claims).

The same command starts a crawl or joins it: the first worker opens batch 1 with its seeds and
settings; a worker started while that batch is open joins it and takes its settings (the seeds
are admitted once: the DB already holds them). A DB whose crawl has finished is refused.
"""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

from dustless.crawl.config import CrawlConfig
from dustless.crawl.net import Fetcher
from dustless.crawl.resume import CrawlFinished, Run, checked_rules, start_worker
from dustless.crawl.scripted import load_rules
from dustless.errors import InvalidOption
from dustless.store import Batch, PostgresCrawlStore

__all__ = ["WORKER_FILE", "default_worker_name", "open_worker", "warc_prefix"]

WORKER_FILE = "worker.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def default_worker_name() -> str:
    """``MACHINE-PID``: unique among the workers of a crawl, readable in ``--status``."""
    machine = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname().split(".")[0]) or "worker"
    return f"{machine}-{os.getpid()}"


def warc_prefix(worker: str) -> str:
    """The WARC file names of a worker: ``dustless-NAME-NNNNN.warc.gz``."""
    return f"dustless-{worker}"


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise InvalidOption(
            f"--worker {name!r}: use letters, digits, '.', '_' and '-' (up to 63), "
            "it names the worker's WARC files"
        )
    return name


def _remembered(out: Path) -> str | None:
    path = out / WORKER_FILE
    if not path.is_file():
        return None
    try:
        name = json.loads(path.read_text(encoding="utf-8"))["worker"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidOption(f"{path} is not a worker file ({exc})") from None
    return str(name)


def _remember(out: Path, name: str, where: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (WORKER_FILE + ".tmp")
    tmp.write_text(json.dumps({"worker": name, "db": where}) + "\n", encoding="utf-8")
    os.replace(tmp, out / WORKER_FILE)


def _not_joined(batches: list[Batch], config: CrawlConfig, out: Path) -> InvalidOption:
    """Why there was no batch to join: no crawl yet and no seeds to start one; or the crawl
    has ended — before this worker came (it gave no seeds, or the crawl's own: workers
    started together, this one last), or it is another crawl's DB."""
    if not batches:
        return InvalidOption(
            "no seeds: the DB holds no crawl to join; give seed URLs after the directory, "
            "or --seeds FILE"
        )
    last = batches[-1]
    if not config.seeds or config.seeds == CrawlConfig.from_json(last.config).seeds:
        return CrawlFinished(
            out, True,
            why=f"the crawl in the DB finished (batch {last.number}) before this worker "
            "joined: nothing left to do",
        )  # fmt: skip
    return InvalidOption(
        f"the crawl in the DB has finished (batch {last.number}): start a new crawl in a "
        "new database"
    )


def open_worker(
    config: CrawlConfig, out: Path, *, db: str, worker: str | None, resume: bool, now: float
) -> Run:
    """Open ``out`` as a worker of the crawl in ``db`` (see the module docstring)."""
    fetcher: Fetcher | None = None  # checked with the settings given, if they are the crawl's
    remembered = _remembered(out)
    if resume:
        if remembered is None:
            raise InvalidOption(f"{out} holds no worker to resume (no {WORKER_FILE})")
        if worker is not None and worker != remembered:
            raise InvalidOption(
                f"{out} is worker {remembered!r}: resume it as itself (drop --worker {worker})"
            )
        name = remembered
    else:
        if remembered is not None:
            raise InvalidOption(
                f"{out} already holds worker {remembered!r} of a crawl: add --resume to "
                "continue it, or choose another directory"
            )
        if (out / "crawl.db").exists():
            raise InvalidOption(f"{out} holds a crawl on SQLite: choose another directory")
        name = _check_name(worker) if worker is not None else default_worker_name()
        rules, fetcher = checked_rules(config)
    store = PostgresCrawlStore(db, worker=name)
    try:
        if resume:
            batch = store.resume_batch()
            if batch is None:
                raise CrawlFinished(out, repaired=False)
        else:
            # Whether to join, to start, or that the crawl has ended: decided in the DB,
            # under its lock (a batch may end between a read here and the start).
            got = store.start_or_join(config.to_json(), now, may_start=bool(config.seeds))
            if got is None:
                raise _not_joined(store.batches(), config, out)
            batch, joined = got
        if resume or joined:
            # The crawl's own settings (the seeds are in the DB already); this worker's
            # display is its own.
            config = CrawlConfig.from_json(batch.config).with_(progress=config.progress)
            rules = load_rules(config.rules, config.scripts)  # the files the crawl began with
            fetcher = None  # made from the crawl's settings
        _remember(out, name, store.where)
        return start_worker(
            config,
            store,
            batch,
            out,
            rules,
            resume=resume,
            now=now,
            prefix=warc_prefix(name),
            fetcher=fetcher,
        )
    except BaseException:
        store.close()
        raise

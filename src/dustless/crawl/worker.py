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
from dustless.crawl.resume import CrawlFinished, Opened
from dustless.errors import InvalidOption
from dustless.store import Batch, PostgresCrawlStore

__all__ = ["WORKER_FILE", "default_worker_name", "open_worker", "warc_prefix", "worker_name"]

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


def _not_joined(batches: list[Batch], seeds: tuple[str, ...], out: Path) -> InvalidOption:
    """Why there was no batch to join: no crawl yet and no seeds to start one; or the crawl
    has ended — before this worker came (it gave no seeds, or the crawl's own: workers
    started together, this one last), or it is another crawl's DB."""
    if not batches:
        return InvalidOption(
            "no seeds: the DB holds no crawl to join; give seed URLs after the directory, "
            "or --seeds FILE"
        )
    last = batches[-1]
    if not seeds or seeds == CrawlConfig.from_json(last.config).seeds:
        return CrawlFinished(
            out, True,
            why=f"the crawl in the DB finished (batch {last.number}) before this worker "
            "joined: nothing left to do",
        )  # fmt: skip
    return InvalidOption(
        f"the crawl in the DB has finished (batch {last.number}): start a new crawl in a "
        "new database"
    )


def worker_name(out: Path, worker: str | None, *, resume: bool) -> str:
    """The name ``out`` runs as (``--worker``, the one it remembers, or a new one); a
    directory that cannot be this worker is refused (read-only)."""
    remembered = _remembered(out)
    if resume:
        if remembered is None:
            raise InvalidOption(f"{out} holds no worker to resume (no {WORKER_FILE})")
        if worker is not None and worker != remembered:
            raise InvalidOption(
                f"{out} is worker {remembered!r}: resume it as itself (drop --worker {worker})"
            )
        return remembered
    if remembered is not None:
        raise InvalidOption(
            f"{out} already holds worker {remembered!r} of a crawl: add --resume to "
            "continue it, or choose another directory"
        )
    if (out / "crawl.db").exists():
        raise InvalidOption(f"{out} holds a crawl on SQLite: choose another directory")
    return _check_name(worker) if worker is not None else default_worker_name()


def open_worker(
    out: Path,
    settings: str,
    seeds: tuple[str, ...],
    *,
    db: str,
    name: str,
    resume: bool,
    now: float,
) -> Opened:
    """Open ``out`` as worker ``name`` (``worker_name``) of the crawl in ``db``: it starts
    the crawl with ``settings`` (JSON) and ``seeds``, or joins it, or resumes (see the module
    docstring)."""
    store = PostgresCrawlStore(db, worker=name)
    try:
        if resume:
            batch = store.resume_batch()
            if batch is None:
                raise CrawlFinished(out, repaired=False)
            fresh = False
        else:
            # Whether to join, to start, or that the crawl has ended: decided in the DB,
            # under its lock (a batch may end between a read here and the start).
            got = store.start_or_join(settings, now, may_start=bool(seeds))
            if got is None:
                raise _not_joined(store.batches(), seeds, out)
            batch, joined = got
            fresh = not joined
        _remember(out, name, store.where)
        return Opened(store, batch, fresh, prefix=warc_prefix(name))
    except BaseException:
        store.close()
        raise

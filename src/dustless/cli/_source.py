"""Which crawl a reading command reads: a crawl directory, or ``--db postgresql://…``.

``stats``, ``evaluate``, ``report``, ``export``, ``changes``, ``recrawl`` and ``rules learn``
read the crawl in DIR (its ``crawl.db``) or, with ``--db``, the crawl that workers share on
PostgreSQL. Such a crawl's WARC files are in each worker's directory (the path each worker
was started with, kept in the DB); ``--worker-dir NAME=DIR`` says where one is on this
machine when it is elsewhere (copied, or mounted under another path).

Only the standard library is imported here: the command line is checked first.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dustless.errors import InvalidOption, UsageError

if TYPE_CHECKING:
    from dustless.store import CrawlReader

__all__ = [
    "CrawlSource",
    "add_source",
    "check_db_reachable",
    "check_db_url",
    "crawl_source",
    "open_source",
]


def check_db_url(db: str, without: str) -> str:
    """``--db``'s URL, refused with one line unless it names PostgreSQL (``without``: what
    the command reads when no ``--db`` is given)."""
    if not db.startswith(("postgresql://", "postgres://")):
        raise InvalidOption(
            f"--db wants a PostgreSQL URL (postgresql://USER@HOST/DBNAME), not {db!r}; "
            f"without --db {without}"
        )
    return db


def check_db_reachable(db: str) -> None:
    """One connection to ``--db``, opened and closed before a worker starts: a database that
    cannot be reached at the start is the command line's mistake (exit 2, ``error:``), as
    every reading command says through its reader; the engine's own connection errors are
    store errors (exit 1), for they may also strike in the middle of a crawl."""
    import psycopg

    from dustless.store import display_dsn, one_line

    try:
        psycopg.connect(db, connect_timeout=10, application_name="dustless check").close()
    except psycopg.Error as exc:
        # display_dsn: host, port and database only; a password in the URL is never shown.
        raise InvalidOption(
            f"cannot open the crawl DB on {display_dsn(db)}: {one_line(exc)}"
        ) from None


@dataclass(frozen=True, slots=True)
class CrawlSource:
    """A crawl directory (``db`` None) or a shared crawl DB (``directory`` optional)."""

    directory: Path | None
    db: str | None = None
    worker_dirs: dict[str, Path] = field(default_factory=dict)


def add_source(
    parser: argparse.ArgumentParser,
    *,
    dest: str = "directory",
    dir_help: str = "a crawl directory (dustless crawl DIR)",
    db_help: str = "read the crawl its workers share in this PostgreSQL database instead",
    worker_dirs: bool = False,
) -> None:
    """DIR (optional with ``--db``) and ``--db URL`` (and ``--worker-dir``, for commands
    that read WARC records)."""
    parser.add_argument(dest, metavar="DIR", nargs="?", help=dir_help)
    parser.add_argument("--db", metavar="URL", help=f"postgresql://… : {db_help}")
    if worker_dirs:
        parser.add_argument(
            "--worker-dir",
            action="append",
            default=[],
            metavar="NAME=DIR",
            help="with --db: worker NAME's directory is DIR on this machine (default: the "
            "path it crawled in); repeatable",
        )


def crawl_source(
    args: argparse.Namespace, *, dest: str = "directory", dir_with_db: bool = False
) -> CrawlSource:
    """The crawl the command line names; one clear line when it names none, or two.

    ``dir_with_db``: DIR may go with ``--db`` (where a command writes, e.g. a recrawl's
    worker directory); otherwise it is one or the other."""
    directory = getattr(args, dest)
    db: str | None = args.db
    if db is None:
        if directory is None:
            raise UsageError("give the crawl directory DIR, or --db postgresql://…")
        if getattr(args, "worker_dir", None):
            raise InvalidOption("--worker-dir needs --db postgresql://… (a shared crawl)")
        from dustless.store import worker_dir_message

        worker = worker_dir_message(directory, how="add" if dir_with_db else "instead, give")
        if worker is not None:
            raise UsageError(worker)
        return CrawlSource(Path(directory))
    check_db_url(db, "the crawl is DIR/crawl.db")
    if directory is not None and not dir_with_db:
        raise UsageError(
            f"give the crawl directory {directory} or --db, not both (with --db, each "
            "worker's directory is known to the DB)"
        )
    dirs: dict[str, Path] = {}
    for item in getattr(args, "worker_dir", None) or ():
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InvalidOption(f"--worker-dir wants NAME=DIR, not {item!r}")
        dirs[name] = Path(path)
    return CrawlSource(None if directory is None else Path(directory), db, dirs)


def open_source(source: CrawlSource) -> CrawlReader:
    """The reader of ``source`` (read-only)."""
    from dustless.store import open_crawl

    return open_crawl(source.directory, db=source.db, dirs=source.worker_dirs)

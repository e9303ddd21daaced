"""``PostgresCrawlStore``: one crawl DB shared by many workers, on PostgreSQL (psycopg 3).

The same ``CrawlStore`` contract as ``SQLiteStore`` and the same schema (``_pg_schema.py``
twins each SQLite migration), for crawls that outgrow one machine (ARCHITECTURE "Many
machines"): every worker opens the DB under its own name (``worker``), leases hosts, claims
URLs of its hosts only, and writes fetch rows that name it. ``shared`` is True: content seen
by another worker is asked of the DB, not of a local filter.

Each method is one short transaction and, where it can be, one round trip: many rows go as
arrays (``= ANY(%s)``, ``unnest``), ids come back with ``RETURNING``, and writes that need no
answer ride with the next exchange (``_pg_conn.py``). Fetch ids are taken from the fetches'
sequence a thousand at a time, so ``record_fetches`` knows its ids without asking.

This file keeps the connection, the migrations and the lifecycle (``StoreSession``); each
other concern of ``CrawlStore`` is a base class in a file named as its SQLite twin:
``_pg_work.py`` (``_sqlite_work.py``), ``_pg_urls.py``, ``_pg_fetches.py``, ``_pg_sites.py``,
``_pg_spellings.py`` and ``_pg_learn.py``; ``--status`` is in ``_pg_read.py``.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from dustless.store._pg_conn import (
    PgConnection,
    display_dsn,
    sqlite_params,
)
from dustless.store._pg_fetches import PgFetches
from dustless.store._pg_learn import PgLearn
from dustless.store._pg_read import PgStatus
from dustless.store._pg_schema import (
    PG_MIGRATIONS,
    PgMigration,
    applied_version,
    migrate,
)
from dustless.store._pg_sites import PgSites
from dustless.store._pg_spellings import PgSpellings
from dustless.store._pg_urls import PgURLs
from dustless.store._pg_work import PgWork
from dustless.store._protocol import CrawlStore
from dustless.store._types import (
    WorkLeft,
)

__all__ = ["PostgresCrawlStore"]


class PostgresCrawlStore(PgWork, PgURLs, PgFetches, PgSites, PgSpellings, PgLearn, PgStatus):
    """The ``CrawlStore`` on PostgreSQL. ``PostgresCrawlStore("postgresql://…", worker="w1")``.

    Opening migrates the schema (under an advisory lock: workers may start together).
    """

    def __init__(
        self,
        dsn: str,
        *,
        worker: str = "local",
        migrations: Sequence[PgMigration] = PG_MIGRATIONS,
        connect_timeout: float = 10.0,
        read_only: bool = False,
    ) -> None:
        self._db = PgConnection(dsn, connect_timeout=connect_timeout, name=worker)
        self._worker = worker
        self._batch: int | None = None
        self._fetch_ids: deque[int] = deque()
        # Fencing: the epoch of each lease held, and the host and lease epoch of each URL
        # claimed and not recorded yet (what its fetch row is written under).
        self._epochs: dict[str, int] = {}
        self._claims: dict[int, tuple[str, int | None]] = {}
        self._left: WorkLeft | None = None
        # Hosts a claim was sent for whose answer was lost (``claim_queued``); whether a lease
        # round's was (``PgWork.lease_hosts``).
        self._lost_claims: set[str] = set()
        self._lost_lease = False
        try:
            # ``read_only`` (``--status``): the schema as it is, never migrated (0: none).
            self.schema_version = (
                applied_version(self._db.conn) if read_only else migrate(self._db.conn, migrations)
            )
        except psycopg.Error as exc:
            self._db.close()
            raise self._db.translate(exc) from None
        except BaseException:
            self._db.close()
            raise

    # -- plumbing ----------------------------------------------------------------------------
    @property
    def worker(self) -> str:
        return self._worker

    @property
    def shared(self) -> bool:
        return True  # other workers write the same crawl at the same time

    @property
    def round_trips(self) -> int:
        """Network round trips to the server so far (the benchmark's cost per page)."""
        return self._db.round_trips

    @property
    def where(self) -> str:
        """``host:port/dbname``: the DB as messages name it (never with a password)."""
        return display_dsn(self._db.dsn)

    def watch_outages(self, hook: Callable[[float | None], None]) -> None:
        self._db.on_outage = hook

    def maybe_away(self) -> bool:
        return self._db.maybe_away()

    def reach(self) -> None:
        self._db.reach()

    def impatient(self) -> contextlib.AbstractContextManager[None]:
        return self._db.impatient()

    def commit(self) -> None:
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PostgresCrawlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inspection ---------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """SQL on this crawl DB, for tests and debugging (not part of ``CrawlStore``: the
        readers of ``analysis`` go through ``CrawlReader``); ``?`` marks parameters as in
        SQLite's (outside quoted literals)."""
        if not params:
            return self._db.rows(sql)
        return self._db.rows(sqlite_params(sql), list(params))


def _is_a_crawl_store(store: PostgresCrawlStore) -> CrawlStore:
    return store  # mypy proves PostgresCrawlStore implements the protocol

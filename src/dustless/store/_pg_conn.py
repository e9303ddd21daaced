"""The connection of ``PostgresCrawlStore``: exchanges, writes that ride along, errors.

Every method of the store is one *exchange* with the server: its statements are sent at once
in psycopg's pipeline mode and end with one Sync, so they run as one transaction (the
extended protocol's implicit transaction lasts until the Sync) and cost one network round
trip. A method that must read before it writes (admission) flushes once in the middle: two
round trips, still one transaction. ``round_trips`` counts them, so the benchmark can say
how many a fetched page costs.

Writes that need no answer (fetch rows, host rows, robots.txt, WARC commit marks, released
leases, URL states) are not sent on their own: they wait in ``_pending`` and ride at the
head of the next exchange, in its transaction, and ``commit()`` sends what is left. So they
are durable at the latest at ``commit()`` (the protocol's promise), the next read sees them
(reads of this store see its own writes), and a second of crawling costs a handful of round
trips, not one per table. Each of them is idempotent (an upsert, a state set, a fetch row
whose id was taken from the sequence beforehand and is inserted ``ON CONFLICT DO NOTHING``),
so replaying an exchange is safe.

Errors are translated at this edge (CONVENTIONS §7): a deadlock or serialization failure
rolls the whole exchange back and it is replayed once; anything else becomes a
``StoreError`` with one line — but a server that went away (a restart, a failover: the
connection lost, "the database system is shutting down / starting up", SQLSTATE classes 08
and 57P) is waited for: the connection is opened again with a growing pause (0.1 s doubling
to 2 s) for up to ``outage`` seconds, and the exchange replayed, so a worker rides out a
``pg_ctl restart`` instead of exiting. ``on_outage`` hears of it (the seconds the server has
been away; ``None`` once it is back), for the progress line.

A replay after a lost connection may follow a commit whose answer was lost (the Sync went
out, its reply did not come back). The writes are idempotent (above), and every exchange
that reads what it changed must give the same answer when replayed after its own commit:
while such a replay runs, ``replaying`` is True, and a claim or a lease asks for what it may
have taken already (``_pg.py``, ``_pg_work.py``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors

from dustless.errors import StoreError, StoreLocked

__all__ = ["PgConnection", "Read", "columns", "display_dsn", "one_line", "reader", "sqlite_params"]

R = TypeVar("R")
Conn = psycopg.Connection[tuple[Any, ...]]
# What an exchange sends: it queues statements on the connection and returns the function
# that reads their results once the Sync has come back.
Read = Callable[[], R]
Params = Sequence[Any] | Mapping[str, Any] | None
OUTAGE = 120.0  # seconds an exchange waits for a server that went away (restart, failover)
_PAUSES = (0.1, 0.2, 0.5, 1.0, 2.0)  # between two tries to reach it again (then 2 s)


def _server_gone(exc: psycopg.Error, conn: Conn | None) -> bool:
    """The server went away (restart, failover, network), as opposed to refusing what we
    sent: worth waiting for. SQLSTATE class 08 is "connection exception", 57P01-57P03 are
    "admin shutdown", "crash shutdown" and "cannot connect now" (the server is starting up
    or shutting down) — PostgreSQL's Appendix A."""
    state = getattr(exc, "sqlstate", None) or ""
    if state.startswith("08") or state in ("57P01", "57P02", "57P03"):
        return True
    return isinstance(exc, psycopg.OperationalError) and (
        conn is None or conn.closed or conn.broken
    )


def display_dsn(dsn: str) -> str:
    """``host:port/dbname`` of a connection string: what messages show (never a password)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "PostgreSQL"
    host = str(info.get("host") or "localhost")
    port = str(info.get("port") or "5432")
    return f"{host}:{port}/{info.get('dbname') or info.get('user') or ''}"


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class PgConnection:
    """One connection of one worker, used under a lock (the engine may call from a thread)."""

    def __init__(
        self,
        dsn: str,
        *,
        connect_timeout: float = 10.0,
        name: str = "",
        outage: float = OUTAGE,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.dsn = dsn
        self.round_trips = 0
        self.outage = outage
        self.replaying = False  # see the module docstring
        self.on_outage: Callable[[float | None], None] | None = None
        self._connect_timeout = connect_timeout
        self._name = name
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.RLock()
        self._pending: list[tuple[str, Params]] = []
        # The first connection is not waited for: a wrong --db gets its one line at once.
        try:
            self._conn: Conn | None = self._open()
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot open the crawl DB on {display_dsn(self.dsn)}: {one_line(exc)}"
            ) from None

    def _open(self) -> Conn:
        return psycopg.connect(
            self.dsn,
            autocommit=True,
            connect_timeout=max(1, int(self._connect_timeout)),
            application_name=f"dustless {self._name}"[:63],
        )

    @property
    def conn(self) -> Conn:
        """The live connection (opened again if the server dropped it)."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = None
            self._conn = self._open()
        return self._conn

    # -- exchanges -----------------------------------------------------------------------

    def defer(self, sql: str, params: Params) -> None:
        """A write that needs no answer: sent with the next exchange (or ``commit()``)."""
        with self._lock:
            self._pending.append((sql, params))

    def exchange(self, send: Callable[[Conn], Read[R]]) -> R:
        """The pending writes, then ``send``'s statements, in one transaction and one Sync;
        ``send``'s reader is called after it. Replayed once after a deadlock or a
        serialization failure; after the server went away, replayed once it is back (see
        the module docstring)."""
        with self._lock:
            locked = False
            down_since: float | None = None
            tries = 0
            try:
                while True:
                    sent = False
                    try:
                        conn = self.conn
                        sent = True
                        with conn.pipeline():
                            for sql, params in self._pending:
                                conn.execute(sql, params)
                            read = send(conn)
                        self.round_trips += 1
                        self._pending.clear()
                        result = read()
                        self.replaying = False
                        return result
                    except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
                        if locked:
                            raise StoreLocked(f"crawl DB: {one_line(exc)}") from None
                        locked = True
                    except psycopg.Error as exc:
                        if not _server_gone(exc, self._conn):
                            raise self.translate(exc) from None
                        now = self._clock()
                        if down_since is None:
                            down_since = now
                        elif now - down_since > self.outage:
                            raise self.translate(exc) from None
                        # What was sent may have been committed (its answer lost): the
                        # replay must answer as if it had been (module docstring).
                        self.replaying = self.replaying or sent
                        if self.on_outage is not None:
                            self.on_outage(now - down_since)
                        self._sleep(_PAUSES[min(tries, len(_PAUSES) - 1)])
                        tries += 1
            finally:
                if down_since is not None and self.on_outage is not None:
                    self.on_outage(None)

    def flush(self, cur: psycopg.Cursor[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Read a result in the middle of an exchange (the server answers what was sent so
        far; the transaction stays open): one more round trip."""
        self.round_trips += 1
        return cur.fetchall()

    def rows(self, sql: str, params: Params = None) -> list[tuple[Any, ...]]:
        """One statement's rows, in one exchange."""

        def send(conn: Conn) -> Read[list[tuple[Any, ...]]]:
            return reader(conn.execute(sql, params))

        return self.exchange(send)

    def commit(self) -> None:
        with self._lock:
            if self._pending:
                self.exchange(lambda conn: lambda: None)

    def close(self) -> None:
        with self._lock:
            try:
                self.commit()
            finally:
                if self._conn is not None:
                    self._conn.close()

    def translate(self, exc: psycopg.Error) -> StoreError:
        where = display_dsn(self.dsn)
        if isinstance(exc, pg_errors.LockNotAvailable):
            return StoreLocked(f"crawl DB on {where} is locked: {one_line(exc)}")
        if isinstance(exc, psycopg.OperationalError):
            return StoreError(f"lost the crawl DB on {where}: {one_line(exc)}")
        return StoreError(f"crawl DB error on {where}: {one_line(exc)}")


def columns(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Rows as one list per column: what ``unnest(%s::t[], …)`` takes."""
    cols: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for col, value in zip(cols, row, strict=True):
            col.append(value)
    return cols


def reader(cur: psycopg.Cursor[tuple[Any, ...]]) -> Read[list[tuple[Any, ...]]]:
    """The rows of ``cur`` once its exchange is over (none for a statement without rows)."""
    return lambda: cur.fetchall() if cur.description is not None else []


def sqlite_params(sql: str) -> str:
    """SQLite's ``?`` as psycopg's ``%s`` (and a literal ``%`` doubled), quotes skipped."""
    out = []
    quote = ""
    for ch in sql:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "?":
            out.append("%s")
            continue
        if ch == "%":
            out.append("%%")
            continue
        out.append(ch)
    return "".join(out)

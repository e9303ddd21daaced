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
rolls the whole exchange back and it is replayed once; a lost connection is opened again
and the exchange replayed once; anything else becomes a ``StoreError`` with one line.
"""

from __future__ import annotations

import threading
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

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0, name: str = "") -> None:
        self.dsn = dsn
        self.round_trips = 0
        self._connect_timeout = connect_timeout
        self._name = name
        self._lock = threading.RLock()
        self._pending: list[tuple[str, Params]] = []
        self._conn = self._connect()

    def _connect(self) -> Conn:
        try:
            return psycopg.connect(
                self.dsn,
                autocommit=True,
                connect_timeout=max(1, int(self._connect_timeout)),
                application_name=f"dustless {self._name}"[:63],
            )
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot open the crawl DB on {display_dsn(self.dsn)}: {one_line(exc)}"
            ) from None

    @property
    def conn(self) -> Conn:
        """The live connection (opened again if the server dropped it)."""
        if self._conn.closed or self._conn.broken:
            self._conn = self._connect()
        return self._conn

    # -- exchanges -----------------------------------------------------------------------

    def defer(self, sql: str, params: Params) -> None:
        """A write that needs no answer: sent with the next exchange (or ``commit()``)."""
        with self._lock:
            self._pending.append((sql, params))

    def exchange(self, send: Callable[[Conn], Read[R]]) -> R:
        """The pending writes, then ``send``'s statements, in one transaction and one Sync;
        ``send``'s reader is called after it. Replayed once after a deadlock, a
        serialization failure or a lost connection."""
        with self._lock:
            for attempt in (0, 1):
                try:
                    conn = self.conn
                    with conn.pipeline():
                        for sql, params in self._pending:
                            conn.execute(sql, params)
                        read = send(conn)
                    self.round_trips += 1
                    self._pending.clear()
                    return read()
                except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
                    if attempt:
                        raise StoreLocked(f"crawl DB: {one_line(exc)}") from None
                except psycopg.OperationalError as exc:
                    if attempt or not self._conn.broken:
                        raise self.translate(exc) from None
                except psycopg.Error as exc:
                    raise self.translate(exc) from None
            raise AssertionError("not reached")  # pragma: no cover

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

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

An exchange made ``impatient`` (the engine's event loop: it must go on fetching what it holds)
never waits: the server gone, it raises ``DatabaseAway`` at once — without even trying to
open a connection again, which may take ``connect_timeout`` — and the engine makes its commit
thread wait instead (``reach``). The invariant that makes this safe: ``_pending`` (and the
rider) are dropped only once the exchange that carried them has come back, Sync answered. An
exchange that fails leaves them pending, so they are never lost; they go again with the next
exchange (the thread's ``reach``), and a copy the server did commit before its answer was
lost is applied again harmlessly (idempotent, above), never as a second row. What the
impatient exchange itself sent is not replayed here: its caller still holds it and asks
again later; a read that may have changed rows (a claim, a lease) is told ``sent`` and makes
its next call ask for what the lost answer held (``_pg_work.py``).

A replay after a lost connection may follow a commit whose answer was lost (the Sync went
out, its reply did not come back). The writes are idempotent (above), and every exchange
that reads what it changed must give the same answer when replayed after its own commit:
while such a replay runs, ``replaying`` is True, and a claim or a lease asks for what it may
have taken already (``_pg_work.py``).

``DUSTLESS_DB_TRIPS=FILE`` (a debugging aid, ``bench/crawl_scale.py``): every round trip is
also counted by where it came from — the store's method and the crawl's function that called
it — and the counts are appended to FILE as one JSON line when the connection closes.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors

from dustless.errors import DatabaseAway, StoreError, StoreLocked

__all__ = [
    "PgConnection",
    "Read",
    "Rows",
    "columns",
    "display_dsn",
    "one_line",
    "reader",
    "sqlite_params",
]

R = TypeVar("R")
Conn = psycopg.Connection[tuple[Any, ...]]
Rows = list[tuple[Any, ...]]  # what a statement read
# What an exchange sends: it queues statements on the connection and returns the function
# that reads their results once the Sync has come back.
Read = Callable[[], R]
Params = Sequence[Any] | Mapping[str, Any] | None
OUTAGE = 120.0  # seconds an exchange waits for a server that went away (restart, failover)
_PAUSES = (0.1, 0.2, 0.5, 1.0, 2.0)  # between two tries to reach it again (then 2 s)
_TRIPS_ENV = "DUSTLESS_DB_TRIPS"


def _call_site() -> str:
    """``store_method<crawl_function``: the first frame outside this module (the store's
    method) and the first outside the store (who asked). Only with ``DUSTLESS_DB_TRIPS``."""
    frame = sys._getframe(2)
    method = caller = ""
    while frame is not None:
        path = frame.f_code.co_filename
        if not method and not path.endswith("_pg_conn.py"):
            method = frame.f_code.co_name
        if "/store/" not in path and "contextlib" not in path:
            caller = f"{os.path.basename(path)[:-3]}.{frame.f_code.co_name}"
            break
        frame = frame.f_back  # type: ignore[assignment]
    return f"{method}<{caller}"


def _server_gone(exc: psycopg.Error, conn: Conn | None) -> bool:
    """The server went away (restart, failover, network), as opposed to refusing what we
    sent: worth waiting for. SQLSTATE class 08 is "connection exception", 57P01-57P03 are
    "admin shutdown", "crash shutdown" and "cannot connect now" (the server is starting up
    or shutting down) — PostgreSQL's Appendix A."""
    state = getattr(exc, "sqlstate", None) or ""
    if state.startswith("08") or state in ("57P01", "57P02", "57P03"):
        return True
    # libpq's own errors carry no SQLSTATE (every error of the server's does): the
    # connection failed under us — lost, or left mid-pipeline by a server that went away
    # while its answer was read ("cannot exit pipeline mode while busy").
    return isinstance(exc, psycopg.OperationalError) and (
        conn is None or conn.closed or conn.broken or not state
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
    """One connection of one worker, used under a lock: the engine's commit thread and its
    loop take turns (the engine never calls while a commit is in flight, and the lock makes
    sure no two threads ever use the psycopg connection at once)."""

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
        # DUSTLESS_DB_TRIPS (module docstring): round trips by call site, or None.
        self._trips_to = os.environ.get(_TRIPS_ENV) or None
        self.trips_by: Counter[str] | None = Counter() if self._trips_to else None
        self.outage = outage
        self.replaying = False  # see the module docstring
        # The server stayed away past ``outage``: the line said, and every later exchange
        # fails with it at once (the worker is stopping: no second wait at ``close``).
        self.gave_up: str | None = None
        self.on_outage: Callable[[float | None], None] | None = None
        self._connect_timeout = connect_timeout
        self._name = name
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.RLock()
        # The thread whose exchanges never wait for a server that went away (``impatient``).
        self._impatient: int | None = None
        self._pending: list[tuple[str, Params]] = []
        # ``ride``: statements for the tail of the next exchange, and who hears their answer.
        self._tail: tuple[Callable[[Conn], Read[Any]], Callable[[Any], None]] | None = None
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

    @contextlib.contextmanager
    def impatient(self) -> Iterator[None]:
        """Exchanges made by this thread in the block never wait for a server that went
        away: ``DatabaseAway`` at once (the module docstring). Other threads' still wait."""
        before, self._impatient = self._impatient, threading.get_ident()
        try:
            yield
        finally:
            self._impatient = before

    def _away(self, why: str, *, sent: bool) -> DatabaseAway:
        """An impatient exchange met the outage: the connection is let go (the waiting
        exchange, ``reach``, opens a fresh one) and nothing of it counts as done."""
        if self._conn is not None and not self._conn.closed:
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None
        return DatabaseAway(f"the crawl DB on {display_dsn(self.dsn)} is away: {why}", sent=sent)

    def exchange(self, send: Callable[[Conn], Read[R]], *, writes_last: bool = False) -> R:
        """The pending writes (and the rider: ``ride``), then ``send``'s statements, in one
        transaction and one Sync; ``send``'s reader is called after it. ``writes_last``:
        ``send``'s statements first, in a transaction of their own, then the pending writes
        and the rider in another, in the same round trip (admission: a page's links are in
        the DB no later than its row, and an admission never holds a fetch row's locks).
        Replayed once after a deadlock or a serialization failure; after the server went
        away, replayed once it is back (see the module docstring)."""
        with self._lock:
            if self.gave_up is not None:
                raise StoreError(self.gave_up)
            impatient = self._impatient == threading.get_ident()
            if impatient and (self._conn is None or self._conn.closed or self._conn.broken):
                raise self._away("not connected", sent=False)
            locked = False
            down_since: float | None = None
            tries = 0
            try:
                while True:
                    sent = False
                    try:
                        conn = self.conn
                        sent = True
                        tail = self._tail
                        read_tail: Read[Any] | None = None
                        with conn.pipeline() as pipeline:
                            if writes_last:
                                read = send(conn)
                                if self._pending or tail is not None:
                                    pipeline.sync()  # the exchange's transaction ends here
                            for sql, params in self._pending:
                                conn.execute(sql, params)
                            if tail is not None:
                                read_tail = tail[0](conn)
                            if not writes_last:
                                read = send(conn)
                        self._count()
                        self._pending.clear()
                        result = read()
                        if tail is not None and read_tail is not None:
                            self._tail = None
                            tail[1](read_tail())
                        self.replaying = False
                        return result
                    except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
                        if locked:
                            raise StoreLocked(f"crawl DB: {one_line(exc)}") from None
                        locked = True
                    except psycopg.Error as exc:
                        if not _server_gone(exc, self._conn):
                            raise self.translate(exc) from None
                        if impatient:
                            # Nothing waits here (the module docstring): ``_pending`` and the
                            # rider stay for the next exchange; ``sent`` tells the caller.
                            self.replaying = False
                            raise self._away(one_line(exc), sent=sent) from None
                        now = self._clock()
                        if down_since is None:
                            down_since = now
                        elif now - down_since > self.outage:
                            self.gave_up = (
                                f"lost the crawl DB on {display_dsn(self.dsn)}: away for more "
                                f"than {self.outage:.0f} s ({one_line(exc)}); stopped, what "
                                "was not committed is fetched again with --resume"
                            )
                            raise StoreError(self.gave_up) from None
                        if self._conn is not None and not self._conn.closed:
                            # Not known broken yet (a pipeline left busy): the next try
                            # opens a fresh connection rather than reuse this one.
                            with contextlib.suppress(Exception):
                                self._conn.close()
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

    def ride(self, send: Callable[[Conn], Read[R]], answer: Callable[[R], None]) -> None:
        """``send``'s statements ride with the next exchange, after the writes pending then
        (``exchange``); ``answer`` hears what they read. So a commit's writes and a read that
        must follow them cost no round trip of their own when another exchange comes first
        (the engine's commit: the admission's, or the next pages' content-seen query)."""
        with self._lock:
            self._tail = (send, answer)

    def unride(self) -> None:
        """The rider waiting for the next exchange, if any, is dropped."""
        with self._lock:
            self._tail = None

    @property
    def riding(self) -> bool:
        """A rider waits for the next exchange."""
        return self._tail is not None

    def flush(self, cur: psycopg.Cursor[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Read a result in the middle of an exchange (the server answers what was sent so
        far; the transaction stays open): one more round trip."""
        self._count()
        return cur.fetchall()

    def _count(self) -> None:
        self.round_trips += 1
        if self.trips_by is not None:
            self.trips_by[_call_site()] += 1

    def rows(self, sql: str, params: Params = None) -> list[tuple[Any, ...]]:
        """One statement's rows, in one exchange."""

        def send(conn: Conn) -> Read[list[tuple[Any, ...]]]:
            return reader(conn.execute(sql, params))

        return self.exchange(send)

    def commit(self) -> None:
        with self._lock:
            if self._pending:
                self.exchange(lambda conn: lambda: None)

    def maybe_away(self) -> bool:
        """Without waiting: did the server go away while the connection sat idle? An idle
        connection in autocommit mode is sent nothing unasked, but a server shutting down
        (``pg_ctl stop``/``restart``, a failover) sends its FATAL 57P01 and closes: the
        socket turns readable. A stray message (a NOTIFY, a parameter change) makes this
        say yes once: ``reach`` then costs one round trip, which reads it."""
        with self._lock:
            conn = self._conn
            if conn is None or conn.closed or conn.broken:
                return True
            try:
                fd = conn.fileno()
                if hasattr(select, "poll"):  # select() fails on descriptors past 1023
                    poll = select.poll()
                    poll.register(fd, select.POLLIN)
                    return bool(poll.poll(0))
                readable, _, _ = select.select([fd], [], [], 0)
            except (OSError, ValueError, psycopg.Error):
                return True
            return bool(readable)

    def reach(self) -> None:
        """One exchange (the pending writes and a ``SELECT 1``): it waits for the server
        as every exchange does, up to ``outage`` seconds."""
        self.exchange(lambda conn: reader(conn.execute("SELECT 1")))

    def close(self) -> None:
        with self._lock:
            try:
                if self.gave_up is None:
                    self.commit()
            finally:
                if self._conn is not None:
                    self._conn.close()
                self._write_trips()

    def _write_trips(self) -> None:
        if self._trips_to is None or self.trips_by is None:
            return
        line = {"name": self._name, "round_trips": self.round_trips, "by": self.trips_by}
        with open(self._trips_to, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        self.trips_by.clear()

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

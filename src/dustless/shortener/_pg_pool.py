"""The PostgreSQL store's connections: at most N, each made when a request needs it.

Why not ``psycopg_pool``: it replaces a lost connection in the background and, while the
database is down, spaces its attempts with a doubling back-off (1, 2, 4, 8 … s; its
``AttemptWithBackoff``). After an outage of 10 s its next attempt could be 15 s after the
first failure, and every request until then waited its 5 s for a connection and answered
503 — for 5 to 20 s after the database was back. Here nothing connects ahead of need: a
request that finds no idle connection connects itself, so the first request after the
database is back is served, and a request while it is down fails at once (connection
refused) instead of waiting.

An idle connection that the server closed (a restart) is noticed when it is taken — its
socket has become readable: PostgreSQL sends the reason before it closes, or the kernel an
end of file — and is closed and replaced, without a round trip on the healthy path.
"""

from __future__ import annotations

import asyncio
import select

import psycopg
from psycopg.pq import TransactionStatus

from dustless.errors import StoreError

__all__ = ["ConnectionPool", "one_line"]


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _dead(conn: psycopg.AsyncConnection) -> bool:
    """True when an idle connection can no longer be used (see the module's docstring)."""
    if conn.closed or conn.broken:
        return True
    try:
        poller = select.poll()
        poller.register(conn.pgconn.socket, select.POLLIN)
    except (psycopg.Error, OSError, ValueError):
        return True
    return bool(poller.poll(0))


class ConnectionPool:
    """At most ``size`` autocommit connections to ``dsn``; a request waits at most ``wait``
    seconds for one of them to be free, and a connection attempt at most
    ``connect_timeout``. Used from one event loop."""

    def __init__(self, dsn: str, size: int, wait: float, connect_timeout: int) -> None:
        self._dsn = dsn
        self._wait = wait
        self._connect_timeout = connect_timeout
        self._slots = asyncio.Semaphore(size)
        self._idle: list[psycopg.AsyncConnection] = []
        self._closed = False

    def keep(self, conn: psycopg.AsyncConnection) -> None:
        """Take an open connection into the pool (the one that opened the store)."""
        self._idle.append(conn)

    async def getconn(self) -> psycopg.AsyncConnection:
        """A live connection; :class:`StoreError` when none is free in time or the
        database cannot be reached. Give it back with :meth:`putconn`."""
        if self._closed:
            raise StoreError("postgresql: the store is closed")
        try:
            await asyncio.wait_for(self._slots.acquire(), self._wait)
        except TimeoutError:
            raise StoreError(f"postgresql: no connection within {self._wait:g} s") from None
        try:
            while self._idle:
                conn = self._idle.pop()  # the most recently used: the likeliest alive
                if not _dead(conn):
                    return conn
                await conn.close()
            return await psycopg.AsyncConnection.connect(
                self._dsn, autocommit=True, connect_timeout=self._connect_timeout
            )
        except psycopg.Error as exc:
            self._slots.release()
            # No cause chained: a connection that cannot be made is not worth a retry by the
            # reads, which repeat a query whose pooled connection broke under it.
            raise StoreError(f"postgresql: {one_line(exc)}") from None
        except BaseException:
            self._slots.release()
            raise

    async def putconn(self, conn: psycopg.AsyncConnection) -> None:
        """Give back a connection from :meth:`getconn`; a broken one, or one left inside a
        transaction or a query (a cancelled request), is closed rather than kept."""
        try:
            if (
                self._closed
                or conn.closed
                or conn.broken
                or conn.info.transaction_status != TransactionStatus.IDLE
            ):
                await conn.close()
            else:
                self._idle.append(conn)
        finally:
            self._slots.release()

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()

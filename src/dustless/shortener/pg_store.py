"""PostgreSQL backend (psycopg 3, async): for many web servers sharing one database.

Seed 003 ch. 8 (마무리: 웹 서버의 규모 확장) — the web tier is stateless, so any number of
servers may create links at once. The race "two clients shorten the same long URL at the
same moment" is settled by the database, not by us: both transactions ``INSERT … ON CONFLICT
DO NOTHING`` against the partial unique index on ``(url_key, redirect)``; the second waits for
the first to commit, inserts nothing, and then reads the winner's row (READ COMMITTED gives
the next statement a fresh snapshot).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence

import psycopg

from dustless.errors import StoreError

from .codes import MAX_ID, Codec
from .model import AliasTaken, ClickKey, CreateResult, Link, LinkStats, NewLink
from .store import LINK_COLUMNS, SCHEMA_VERSION, row_to_link

__all__ = ["PostgresStore"]

_POOL_SIZE = 4
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE SEQUENCE IF NOT EXISTS shortener_link_ids",
    """CREATE TABLE IF NOT EXISTS links (
        id BIGINT PRIMARY KEY,
        code TEXT NOT NULL UNIQUE,
        long_url TEXT NOT NULL,
        url_key TEXT NOT NULL,
        redirect SMALLINT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION,
        is_alias BOOLEAN NOT NULL DEFAULT FALSE,
        shared BOOLEAN NOT NULL DEFAULT FALSE)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS links_same_url ON links (url_key, redirect) WHERE shared",
    """CREATE TABLE IF NOT EXISTS clicks (
        link_id BIGINT NOT NULL,
        day TEXT NOT NULL,
        referrer_host TEXT NOT NULL,
        ua_family TEXT NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (link_id, day, referrer_host, ua_family))""",
)
_INSERT = (
    "INSERT INTO links (id, code, long_url, url_key, redirect, created_at, expires_at,"
    " is_alias, shared) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT DO NOTHING RETURNING id"
)
_SCHEMA_LOCK = 0x5D0C7  # advisory lock id: serialises schema creation across processes


class PostgresStore:
    """The :class:`~dustless.shortener.store.Store` on a PostgreSQL database."""

    def __init__(self, conns: Sequence[psycopg.AsyncConnection], codec: Codec) -> None:
        self._pool: asyncio.Queue[psycopg.AsyncConnection] = asyncio.Queue()
        for conn in conns:
            self._pool.put_nowait(conn)
        self._all = tuple(conns)
        self.codec = codec

    @classmethod
    async def open(cls, dsn: str) -> PostgresStore:
        conns: list[psycopg.AsyncConnection] = []
        try:
            for _ in range(_POOL_SIZE):
                conns.append(await psycopg.AsyncConnection.connect(dsn, autocommit=True))
            key = await _init_schema(conns[0])
        except psycopg.Error as exc:
            for conn in conns:
                await conn.close()
            raise StoreError(f"cannot open PostgreSQL store: {_one_line(exc)}") from exc
        return cls(conns, Codec(key))

    @contextlib.asynccontextmanager
    async def _conn(self) -> AsyncIterator[psycopg.AsyncConnection]:
        conn = await self._pool.get()
        try:
            yield conn
        except psycopg.Error as exc:
            raise StoreError(f"postgresql: {_one_line(exc)}") from exc
        finally:
            self._pool.put_nowait(conn)

    async def get(self, code: str) -> Link | None:
        async with self._conn() as conn:
            cur = await conn.execute(f"SELECT {LINK_COLUMNS} FROM links WHERE code = %s", (code,))
            row = await cur.fetchone()
        return None if row is None else row_to_link(row)

    async def create(self, new: NewLink) -> CreateResult:
        async with self._conn() as conn:
            if new.dedup:
                existing = await _same_url(conn, new)
                if existing is not None:
                    return CreateResult(existing, created=False)
            while True:
                async with conn.transaction():
                    cur = await conn.execute("SELECT nextval('shortener_link_ids')")
                    row = await cur.fetchone()
                    assert row is not None
                    link_id = int(row[0])
                    if link_id > MAX_ID:
                        raise StoreError("the 7-character code space is exhausted (62**7 links)")
                    code = new.alias if new.alias is not None else self.codec.encode(link_id)
                    cur = await conn.execute(
                        _INSERT,
                        (
                            link_id,
                            code,
                            new.long_url,
                            new.key,
                            int(new.redirect),
                            new.created_at,
                            new.expires_at,
                            new.alias is not None,
                            new.dedup,
                        ),
                    )
                    inserted = await cur.fetchone()
                # Leaving the transaction block committed it: only now is 201 allowed.
                if inserted is not None:
                    link = Link(
                        link_id,
                        code,
                        new.long_url,
                        new.redirect,
                        new.created_at,
                        new.expires_at,
                        new.alias is not None,
                    )
                    return CreateResult(link, created=True)
                if new.dedup:
                    existing = await _same_url(conn, new)
                    if existing is not None:  # a concurrent create of the same URL won
                        return CreateResult(existing, created=False)
                if new.alias is not None:
                    cur = await conn.execute(
                        f"SELECT {LINK_COLUMNS} FROM links WHERE code = %s", (new.alias,)
                    )
                    taken = await cur.fetchone()
                    if taken is not None:
                        link = row_to_link(taken)
                        if link.is_alias and link.long_url == new.long_url:
                            return CreateResult(link, created=False)
                        raise AliasTaken(f"alias '{new.alias}' is taken")
                # A generated code an imported link already uses: try the next id.

    async def add_clicks(self, counts: Mapping[ClickKey, int]) -> None:
        rows = [(k.link_id, k.day, k.referrer_host, k.ua_family, n) for k, n in counts.items()]
        if not rows:
            return
        async with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO clicks (link_id, day, referrer_host, ua_family, n)"
                " VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (link_id, day, referrer_host, ua_family)"
                " DO UPDATE SET n = clicks.n + excluded.n",
                rows,
            )

    async def stats(self, link: Link, top: int = 10) -> LinkStats:
        async with self._conn() as conn:

            async def query(sql: str, *args: object) -> tuple[tuple[str, int], ...]:
                cur = await conn.execute(sql, (link.id, *args))
                return tuple((str(a), int(b)) for a, b in await cur.fetchall())

            by_day = await query(
                "SELECT day, SUM(n) FROM clicks WHERE link_id = %s GROUP BY day ORDER BY day"
            )
            refs = await query(
                "SELECT referrer_host, SUM(n) AS c FROM clicks WHERE link_id = %s"
                " GROUP BY referrer_host ORDER BY c DESC, referrer_host LIMIT %s",
                top,
            )
            uas = await query(
                "SELECT ua_family, SUM(n) AS c FROM clicks WHERE link_id = %s"
                " GROUP BY ua_family ORDER BY c DESC, ua_family LIMIT %s",
                top,
            )
        return LinkStats(link, sum(n for _, n in by_day), by_day, refs, uas)

    async def export_links(self) -> list[Link]:
        async with self._conn() as conn:
            cur = await conn.execute(f"SELECT {LINK_COLUMNS} FROM links ORDER BY id")
            return [row_to_link(r) for r in await cur.fetchall()]

    async def import_links(self, links: Sequence[tuple[Link, str]]) -> int:
        added = 0
        async with self._conn() as conn, conn.transaction():
            for link, key in links:
                shared = not link.is_alias and link.expires_at is None
                for share in (True, False) if shared else (False,):
                    cur = await conn.execute("SELECT nextval('shortener_link_ids')")
                    row = await cur.fetchone()
                    assert row is not None
                    cur = await conn.execute(
                        _INSERT,
                        (
                            int(row[0]),
                            link.code,
                            link.long_url,
                            key,
                            int(link.redirect),
                            link.created_at,
                            link.expires_at,
                            link.is_alias,
                            share,
                        ),
                    )
                    if await cur.fetchone() is not None:
                        added += 1
                        break
                    cur = await conn.execute("SELECT 1 FROM links WHERE code = %s", (link.code,))
                    if await cur.fetchone() is not None:
                        break
        return added

    async def count(self) -> int:
        async with self._conn() as conn:
            cur = await conn.execute("SELECT COUNT(*) FROM links")
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def close(self) -> None:
        for conn in self._all:
            await conn.close()


async def _same_url(conn: psycopg.AsyncConnection, new: NewLink) -> Link | None:
    cur = await conn.execute(
        f"SELECT {LINK_COLUMNS} FROM links WHERE url_key = %s AND redirect = %s AND shared",
        (new.key, int(new.redirect)),
    )
    row = await cur.fetchone()
    return None if row is None else row_to_link(row)


async def _init_schema(conn: psycopg.AsyncConnection) -> bytes:
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        for statement in _SCHEMA:
            await conn.execute(statement)
        for name, value in (
            ("code_key", secrets.token_hex(32)),
            ("schema_version", str(SCHEMA_VERSION)),
        ):
            await conn.execute(
                "INSERT INTO meta (name, value) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (name, value),
            )
        cur = await conn.execute("SELECT name, value FROM meta")
        meta: dict[str, str] = {str(k): str(v) for k, v in await cur.fetchall()}
    if int(meta["schema_version"]) > SCHEMA_VERSION:
        raise StoreError(f"database schema {meta['schema_version']} is newer than this dustless")
    return bytes.fromhex(meta["code_key"])


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())

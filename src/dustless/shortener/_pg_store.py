"""PostgreSQL backend (psycopg 3, async): for many web servers sharing one database.

Seed 003 ch. 8 (마무리: 웹 서버의 규모 확장) — the web tier is stateless, so any number of
servers may create links at once. The race "two clients shorten the same long URL at the
same moment" is settled by the database, not by us: both transactions ``INSERT … ON CONFLICT
DO NOTHING`` against the partial unique index on ``(owner, url_key, redirect)``; the second
waits for the first to commit, inserts nothing, and then reads the winner's row (READ
COMMITTED gives the next statement a fresh snapshot).

Connections come from a small pool of our own (``pg_pool``, which says why not
``psycopg_pool``), so a database restart costs the requests in flight, not the service: a
connection the server closed while it sat idle is noticed when it is taken, closed and
replaced, and the first request after the database is back connects at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import psycopg

from dustless.errors import StoreError, UsageError

from ._codes import MAX_ID, Codec
from ._model import (
    AliasTaken,
    ApiKey,
    ClickKey,
    CreateResult,
    ImportCounts,
    Link,
    LinkPage,
    LinkRecord,
    LinkStats,
    NewLink,
    StoredKey,
)
from ._pg_pool import ConnectionPool
from ._pg_pool import one_line as _one_line
from ._pg_schema import init_schema
from ._store import (
    CLICK_COLUMNS,
    KEY_COLUMNS,
    LINK_COLUMNS,
    STORED_KEY_COLUMNS,
    ClickGroups,
    RawDump,
    key_conflict,
    like_pattern,
    link_conflict,
    link_page,
    link_values,
    make_stats,
    new_link,
    order_clause,
    row_to_key,
    row_to_link,
    same_slug_request,
    shares,
    tags_by_link,
)

__all__ = ["PostgresStore"]

_C = ' COLLATE "C"'  # text orders byte by byte, as SQLite's BINARY does
_POOL_SIZE = 4
_WAIT = 5.0  # seconds a request waits for a connection before it answers 503
_BUCKET_IDLE = 86_400.0  # a bucket untouched this long is full again for any rate ≥ burst/day
_INSERT = (
    "INSERT INTO links (id, code, long_url, url_key, redirect, created_at, expires_at,"
    " is_alias, shared, owner, max_visits, visits, valid_since, title)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT DO NOTHING RETURNING id"
)
# One round trip per create: the bucket is refilled for the time since its last use, a token
# taken if there is one, and the answer returned, in one statement that holds the row's lock —
# so the instances sharing the table never both spend the same token. The clock is the
# database's: the instances' own clocks may disagree.
_TAKE_TOKEN = """
INSERT INTO rate_buckets AS b (name, tokens, updated, granted)
VALUES (%(name)s, %(burst)s - 1, extract(epoch FROM clock_timestamp()), TRUE)
ON CONFLICT (name) DO UPDATE SET
    tokens = CASE
        WHEN least(%(burst)s, b.tokens + greatest(0, excluded.updated - b.updated) * %(rate)s) >= 1
        THEN least(%(burst)s, b.tokens + greatest(0, excluded.updated - b.updated) * %(rate)s) - 1
        ELSE least(%(burst)s, b.tokens + greatest(0, excluded.updated - b.updated) * %(rate)s)
    END,
    granted =
        least(%(burst)s, b.tokens + greatest(0, excluded.updated - b.updated) * %(rate)s) >= 1,
    updated = greatest(b.updated, excluded.updated)
RETURNING tokens, granted
"""
_UPSERT_CLICKS = (
    "INSERT INTO clicks (link_id, day, referrer_host, ua_family, os_family, n)"
    " SELECT unnest(%s::bigint[]), %s, %s, %s, %s, unnest(%s::bigint[])"
    " ON CONFLICT (link_id, day, referrer_host, ua_family, os_family)"
    " DO UPDATE SET n = clicks.n + excluded.n"
)


class PostgresStore:
    """The :class:`~dustless.shortener._store.Store` on a PostgreSQL database."""

    def __init__(self, pool: ConnectionPool, codec: Codec) -> None:
        self._pool = pool
        self.codec = codec
        self._takes = 0

    @classmethod
    async def open(cls, dsn: str) -> PostgresStore:
        try:
            # One plain connection first: its error names what is wrong. It is the pool's
            # first connection; the others are made when requests need them.
            conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open PostgreSQL store: {_one_line(exc)}") from exc
        try:
            key = await init_schema(conn)
        except BaseException as exc:
            await conn.close()
            if isinstance(exc, psycopg.Error):
                raise StoreError(f"cannot open PostgreSQL store: {_one_line(exc)}") from exc
            raise
        pool = ConnectionPool(dsn, size=_POOL_SIZE, wait=_WAIT, connect_timeout=5)
        pool.keep(conn)
        return cls(pool, Codec(key))

    @contextlib.asynccontextmanager
    async def _conn(self) -> AsyncIterator[psycopg.AsyncConnection]:
        conn = await self._pool.getconn()
        try:
            yield conn
        except psycopg.Error as exc:
            raise StoreError(f"postgresql: {_one_line(exc)}") from exc
        finally:
            await self._pool.putconn(conn)  # a broken one is closed, not kept

    async def _read(self, sql: str, params: tuple[object, ...] = ()) -> tuple[Any, ...] | None:
        """One row of a read. A read is safe to repeat: once more, on another connection, when
        this one broke under us (the server went away after the readability check, as after
        a restart: every pooled connection was cut)."""
        for attempt in (1, 2):
            try:
                async with self._conn() as conn:
                    cur = await conn.execute(sql, params)
                    return await cur.fetchone()
            except StoreError as exc:
                if attempt == 2 or not isinstance(exc.__cause__, psycopg.OperationalError):
                    raise
        raise AssertionError("not reached")

    async def get(self, code: str) -> Link | None:
        row = await self._read(f"SELECT {LINK_COLUMNS} FROM links WHERE code = %s", (code,))
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
                            new.owner,
                            new.max_visits,
                            0,
                            new.valid_since,
                            new.title,
                        ),
                    )
                    inserted = await cur.fetchone()
                    if inserted is not None:
                        await _insert_tags(conn, link_id, new.tags)
                # Leaving the transaction block committed it: only now is 201 allowed.
                if inserted is not None:
                    return CreateResult(new_link(link_id, code, new), created=True)
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
                        if same_slug_request(link, new):
                            return CreateResult(link, created=False)
                        raise AliasTaken(f"slug '{new.alias}' is taken")
                # A generated code an imported link already uses: try the next id.

    async def take_visit(self, link_id: int) -> Link | None:
        async with self._conn() as conn:
            # The row lock orders concurrent visits from every instance: no overshoot.
            cur = await conn.execute(
                "UPDATE links SET visits = visits + 1"
                " WHERE id = %s AND max_visits IS NOT NULL AND visits < max_visits"
                f" RETURNING {LINK_COLUMNS}",
                (link_id,),
            )
            row = await cur.fetchone()
        return None if row is None else row_to_link(row)

    async def update_link(
        self,
        link_id: int,
        expires_at: float | None,
        max_visits: int | None,
        valid_since: float | None,
        title: str | None,
    ) -> Link | None:
        async with self._conn() as conn:
            cur = await conn.execute(
                "UPDATE links SET expires_at = %(until)s::float8, max_visits = %(limit)s::bigint,"
                " valid_since = %(since)s::float8, title = %(title)s,"
                " shared = shared AND %(until)s::float8 IS NULL AND %(limit)s::bigint IS NULL"
                " AND %(since)s::float8 IS NULL"
                f" WHERE id = %(id)s RETURNING {LINK_COLUMNS}",
                {
                    "until": expires_at,
                    "limit": max_visits,
                    "since": valid_since,
                    "title": title,
                    "id": link_id,
                },
            )
            row = await cur.fetchone()
        return None if row is None else row_to_link(row)

    async def take_token(self, bucket: str, rate: float, burst: int) -> float:
        async with self._conn() as conn:
            cur = await conn.execute(
                _TAKE_TOKEN, {"name": bucket, "rate": rate, "burst": float(burst)}
            )
            row = await cur.fetchone()
            self._takes += 1
            if self._takes % 1024 == 0:  # forget buckets that are long full again
                await conn.execute(
                    "DELETE FROM rate_buckets"
                    " WHERE updated < extract(epoch FROM clock_timestamp()) - %s",
                    (_BUCKET_IDLE,),
                )
        assert row is not None
        tokens, granted = float(row[0]), bool(row[1])
        return 0.0 if granted else (1.0 - tokens) / rate

    async def add_clicks(self, counts: Mapping[ClickKey, int]) -> None:
        groups: dict[tuple[str, str, str, str], dict[int, int]] = {}
        for key, n in counts.items():
            group = groups.setdefault(
                (key.day, key.referrer_host, key.ua_family, key.os_family), {}
            )
            group[key.link_id] = group.get(key.link_id, 0) + n
        await self.add_click_groups(groups)

    async def add_click_groups(self, groups: ClickGroups) -> None:
        if not any(groups.values()):
            return
        # One statement per group, groups and ids in a fixed order: two instances upserting
        # the same rows take their locks in the same order and cannot deadlock.
        async with self._conn() as conn, conn.transaction():
            for (day, host, family, system), counts in sorted(groups.items()):
                ids = sorted(counts)
                if ids:
                    await conn.execute(
                        _UPSERT_CLICKS,
                        (ids, day, host, family, system, [counts[i] for i in ids]),
                    )

    async def stats(self, link: Link, top: int = 10) -> LinkStats:
        async with self._conn() as conn:

            async def query(sql: str) -> list[tuple[str, int]]:
                cur = await conn.execute(sql, (link.id,))
                return [(str(a), int(b)) for a, b in await cur.fetchall()]

            by_day = await query(
                "SELECT day, SUM(n) FROM clicks WHERE link_id = %s GROUP BY day ORDER BY day"
            )
            refs = await query(
                "SELECT referrer_host, SUM(n) AS c FROM clicks WHERE link_id = %s"
                " GROUP BY referrer_host ORDER BY c DESC, referrer_host"
            )
            uas = await query(
                "SELECT ua_family, SUM(n) AS c FROM clicks WHERE link_id = %s"
                " GROUP BY ua_family ORDER BY c DESC, ua_family"
            )
            systems = await query(
                "SELECT os_family, SUM(n) AS c FROM clicks WHERE link_id = %s"
                ' GROUP BY os_family ORDER BY c DESC, os_family COLLATE "C"'
            )
        return make_stats(link, by_day, refs, uas, top, systems)

    async def list_links(
        self,
        owner: int | None,
        search: str,
        offset: int,
        limit: int,
        since_day: str,
        tag: str | None = None,
        order: tuple[str, bool] | None = None,
    ) -> LinkPage:
        clauses: list[str] = []
        args: list[object] = []
        if tag is not None:
            clauses.append("id IN (SELECT link_id FROM link_tags WHERE tag = %s)")
            args.append(tag)
        if owner is not None:
            clauses.append("owner = %s")
            args.append(owner)
        if search:
            clauses.append("(code LIKE %s OR long_url LIKE %s)")  # backslash is the escape
            args += [like_pattern(search)] * 2
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        async with self._conn() as conn:
            cur = await conn.execute(f"SELECT COUNT(*) FROM links{where}", args)
            row = await cur.fetchone()
            total = int(row[0]) if row else 0
            cur = await conn.execute(
                f"SELECT {LINK_COLUMNS} FROM links{where}{order_clause(order, _C)}"
                " LIMIT %s OFFSET %s",
                [*args, limit, offset],
            )
            links = [row_to_link(r) for r in await cur.fetchall()]
            cur = await conn.execute(
                "SELECT link_id, day, ua_family, SUM(n) FROM clicks"
                " WHERE link_id = ANY(%s) GROUP BY link_id, day, ua_family",
                ([link.id for link in links],),
            )
            clicks = await cur.fetchall()
            cur = await conn.execute(
                "SELECT link_id, tag FROM link_tags WHERE link_id = ANY(%s)",
                ([link.id for link in links],),
            )
            tag_rows = await cur.fetchall()
        return link_page(total, links, clicks, since_day, tag_rows)

    async def set_tags(self, link_id: int, tags: Sequence[str]) -> None:
        async with self._conn() as conn, conn.transaction():
            await conn.execute("DELETE FROM link_tags WHERE link_id = %s", (link_id,))
            await _insert_tags(conn, link_id, tags)

    async def tags_of(self, link_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        async with self._conn() as conn:
            cur = await conn.execute(
                "SELECT link_id, tag FROM link_tags WHERE link_id = ANY(%s)", (list(link_ids),)
            )
            return tags_by_link(await cur.fetchall())

    async def list_tags(self, owner: int | None) -> list[tuple[str, int]]:
        where, args = ("", ()) if owner is None else (" WHERE l.owner = %s", (owner,))
        async with self._conn() as conn:
            cur = await conn.execute(
                "SELECT t.tag, COUNT(*) FROM link_tags t JOIN links l ON l.id = t.link_id"
                f"{where} GROUP BY t.tag ORDER BY t.tag",
                args,
            )
            return [(str(t), int(n)) for t, n in await cur.fetchall()]

    async def export_rows(self) -> list[tuple[object, ...]]:
        async with self._conn() as conn:
            cur = await conn.execute(f"SELECT {LINK_COLUMNS} FROM links ORDER BY id")
            return [tuple(r) for r in await cur.fetchall()]

    async def import_links(self, links: Sequence[tuple[Link, str]]) -> int:
        added = 0
        async with self._conn() as conn, conn.transaction():
            for link, key in links:
                shared = shares(link)
                for share in (True, False) if shared else (False,):
                    cur = await conn.execute("SELECT nextval('shortener_link_ids')")
                    row = await cur.fetchone()
                    assert row is not None
                    cur = await conn.execute(
                        _INSERT,
                        (int(row[0]), *link_values(link, key, share, link.owner)),
                    )
                    if await cur.fetchone() is not None:
                        added += 1
                        break
                    cur = await conn.execute("SELECT 1 FROM links WHERE code = %s", (link.code,))
                    if await cur.fetchone() is not None:
                        break
        return added

    async def export_dump(self) -> RawDump:
        # REPEATABLE READ: the three lists are one snapshot, whatever is written meanwhile.
        async with self._conn() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cur = await conn.execute(f"SELECT {STORED_KEY_COLUMNS} FROM api_keys ORDER BY id")
            keys = [tuple(r) for r in await cur.fetchall()]
            cur = await conn.execute(f"SELECT {LINK_COLUMNS} FROM links ORDER BY id")
            links = [tuple(r) for r in await cur.fetchall()]
            cur = await conn.execute(
                f"SELECT {CLICK_COLUMNS} FROM clicks"
                " ORDER BY link_id, day, referrer_host, ua_family, os_family"
            )
            clicks = [tuple(r) for r in await cur.fetchall()]
            cur = await conn.execute("SELECT link_id, tag FROM link_tags ORDER BY link_id, tag")
            tags = [tuple(r) for r in await cur.fetchall()]
        return RawDump(keys, links, clicks, tags)

    async def import_dump(
        self, keys: Sequence[StoredKey], links: Sequence[LinkRecord]
    ) -> ImportCounts:
        async with self._conn() as conn, conn.transaction():
            # One import at a time: two racing imports of one file must not both insert.
            await conn.execute("LOCK TABLE api_keys, links IN SHARE ROW EXCLUSIVE MODE")
            return await _import_dump(conn, keys, links)

    async def count(self) -> int:
        async with self._conn() as conn:
            cur = await conn.execute("SELECT COUNT(*) FROM links")
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def ping(self) -> None:
        # /healthz: retried like any read, so that the first check after a database restart
        # says the database is back rather than that a dead pooled connection was tried.
        await self._read("SELECT 1")

    async def add_key(self, name: str, key_hash: str, admin: bool, now: float) -> ApiKey:
        async with self._conn() as conn:
            cur = await conn.execute(
                "INSERT INTO api_keys (name, key_hash, admin, created_at)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING id",
                (name, key_hash, admin, now),
            )
            row = await cur.fetchone()
        if row is None:
            raise UsageError(f"a key named {name!r} exists already")
        return ApiKey(int(row[0]), name, admin, now)

    async def key_for_hash(self, key_hash: str) -> ApiKey | None:
        async with self._conn() as conn:
            cur = await conn.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys WHERE key_hash = %s", (key_hash,)
            )
            row = await cur.fetchone()
        return None if row is None else row_to_key(row)

    async def list_keys(self) -> list[ApiKey]:
        async with self._conn() as conn:
            cur = await conn.execute(f"SELECT {KEY_COLUMNS} FROM api_keys ORDER BY id")
            return [row_to_key(r) for r in await cur.fetchall()]

    async def revoke_key(self, name: str, now: float) -> ApiKey | None:
        async with self._conn() as conn:
            cur = await conn.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, %s)"
                f" WHERE name = %s RETURNING {KEY_COLUMNS}",
                (now, name),
            )
            row = await cur.fetchone()
        return None if row is None else row_to_key(row)

    async def close(self) -> None:
        await self._pool.close()


async def _same_url(conn: psycopg.AsyncConnection, new: NewLink) -> Link | None:
    cur = await conn.execute(
        f"SELECT {LINK_COLUMNS} FROM links"
        " WHERE owner = %s AND url_key = %s AND redirect = %s AND shared",
        (new.owner, new.key, int(new.redirect)),
    )
    row = await cur.fetchone()
    return None if row is None else row_to_link(row)


async def _import_dump(
    conn: psycopg.AsyncConnection, keys: Sequence[StoredKey], links: Sequence[LinkRecord]
) -> ImportCounts:
    """The whole import in the caller's transaction: a conflict raises and rolls it back."""
    owners: dict[str, int] = {}
    keys_added = keys_present = 0
    for key in keys:
        cur = await conn.execute("SELECT id, key_hash FROM api_keys WHERE name = %s", (key.name,))
        found = await cur.fetchone()
        problem = key_conflict(key.name, found, key)
        if problem:
            raise UsageError(problem)
        if found is not None:
            owners[key.name] = int(found[0])
            keys_present += 1
            continue
        cur = await conn.execute(
            "INSERT INTO api_keys (name, key_hash, admin, created_at, revoked_at)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING id",
            (key.name, key.key_hash, key.admin, key.created_at, key.revoked_at),
        )
        row = await cur.fetchone()
        if row is None:
            raise UsageError(
                f"key {key.name!r} has the hash of another key in the target database "
                "(nothing was imported)"
            )
        owners[key.name] = int(row[0])
        keys_added += 1
    added = present = clicks = 0
    for record in links:
        link = record.link
        cur = await conn.execute("SELECT long_url FROM links WHERE code = %s", (link.code,))
        found = await cur.fetchone()
        problem = link_conflict(found, record)
        if problem:
            raise UsageError(problem)
        if found is not None:
            present += 1
            continue
        owner = 0 if record.owner_name is None else owners[record.owner_name]
        link_id = None
        for share in (True, False) if shares(link) else (False,):
            cur = await conn.execute("SELECT nextval('shortener_link_ids')")
            row = await cur.fetchone()
            assert row is not None
            cur = await conn.execute(
                _INSERT,
                (int(row[0]), *link_values(link, record.url_key, share, owner)),
            )
            inserted = await cur.fetchone()
            if inserted is not None:
                link_id = int(inserted[0])
                break
        assert link_id is not None
        added += 1
        if record.clicks:
            await conn.execute(
                f"INSERT INTO clicks ({CLICK_COLUMNS}) SELECT %s, *"
                " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[])",
                (
                    link_id,
                    [c[0] for c in record.clicks],
                    [c[1] for c in record.clicks],
                    [c[2] for c in record.clicks],
                    [c[3] for c in record.clicks],
                    [c[4] for c in record.clicks],
                ),
            )
            clicks += sum(c[4] for c in record.clicks)
        await _insert_tags(conn, link_id, record.tags)
    return ImportCounts(keys_added, keys_present, added, present, clicks)


async def _insert_tags(conn: psycopg.AsyncConnection, link_id: int, tags: Sequence[str]) -> None:
    if tags:
        await conn.execute(
            "INSERT INTO link_tags (link_id, tag) SELECT %s, unnest(%s::text[])"
            " ON CONFLICT DO NOTHING",
            (link_id, list(tags)),
        )

"""Hosts, robots.txt, seeds and parties (``SiteStore``) in ``PostgresCrawlStore`` (seed 004
§2).

A base class of ``PostgresCrawlStore``; the SQLite twin is ``_sqlite_sites.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dustless.store._admit import Site
from dustless.store._pg_conn import (
    Conn,
    PgConnection,
    Read,
    Rows,
    columns,
    reader,
)
from dustless.store._rows import (
    url_hash,
)
from dustless.store._types import (
    HostInfo,
    NewSeed,
    RobotsRow,
    SeedRow,
    SeedUpdate,
)

__all__ = ["PgSites"]


class PgSites:
    """Hosts, robots.txt, seeds and sites; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection
    _batch: int | None

    def update_hosts(self, batch: Sequence[HostInfo]) -> None:
        if not batch:
            return
        last = {h.name: h for h in batch}
        rows = [
            (h.name, h.ip, h.robots_state, h.robots_fetched_at, h.crawl_delay,
             json.dumps(list(h.sitemaps)))
            for _, h in sorted(last.items())
        ]  # fmt: skip
        self._db.defer(
            "INSERT INTO hosts (name, ip, robots_state, robots_fetched_at, crawl_delay, sitemaps) "
            "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::float8[], "
            "%s::float8[], %s::text[]) ON CONFLICT (name) DO UPDATE SET ip = excluded.ip, "
            "robots_state = excluded.robots_state, "
            "robots_fetched_at = excluded.robots_fetched_at, "
            "crawl_delay = excluded.crawl_delay, sitemaps = excluded.sitemaps",
            columns(rows, 6),
        )

    def hosts(self, names: Iterable[str] | None = None) -> dict[str, HostInfo]:
        cols = "name, ip, robots_state, robots_fetched_at, crawl_delay, sitemaps"
        if names is None:
            rows = self._db.rows(f"SELECT {cols} FROM hosts")
        else:
            wanted = list(dict.fromkeys(names))
            rows = self._db.rows(
                f"SELECT {cols} FROM hosts WHERE name = ANY(%s::text[])", (wanted,)
            )
        return {r[0]: HostInfo(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5]))) for r in rows}

    def add_seeds(self, batch: Sequence[NewSeed]) -> list[tuple[int, bool]]:
        if not batch:
            return []
        rows = [
            (s.url, s.identity, url_hash(s.identity), s.host, s.discovered_from,
             s.created_batch if s.created_batch is not None else self._batch)
            for s in batch
        ]  # fmt: skip

        def send(conn: Conn) -> Read[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
            new = reader(
                conn.execute(
                    "INSERT INTO seeds (url, identity, url_hash, host, discovered_from, "
                    "created_batch) SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[], "
                    "%s::text[], %s::bigint[], %s::int[]) ON CONFLICT (identity) DO NOTHING "
                    "RETURNING identity",
                    columns(rows, 6),
                )
            )
            every = reader(
                conn.execute(
                    "SELECT identity, id FROM seeds WHERE identity = ANY(%s::text[])",
                    ([s.identity for s in batch],),
                )
            )
            return lambda: (new(), every())

        new_rows, id_rows = self._db.exchange(send)
        inserted = {r[0] for r in new_rows}
        ids = {identity: int(i) for identity, i in id_rows}
        out = []
        for s in batch:
            out.append((ids[s.identity], s.identity in inserted))
            inserted.discard(s.identity)
        return out

    def update_seeds(self, batch: Sequence[SeedUpdate]) -> None:
        if not batch:
            return
        merged: dict[int, list[Any]] = {}
        for s in batch:  # in order, as SQLite applies them: a later value wins, None keeps
            row = merged.setdefault(s.id, [None, None, None])
            for i, value in enumerate((s.content_sha1, s.state, s.party_seconds)):
                if value is not None:
                    row[i] = value
        rows = [(sid, *vals) for sid, vals in sorted(merged.items())]
        self._db.defer(
            "UPDATE seeds s SET content_sha1 = coalesce(v.c, s.content_sha1), "
            "state = coalesce(v.st, s.state), party_seconds = coalesce(v.p, s.party_seconds) "
            "FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::float8[]) AS v(id, c, st, p) "
            "WHERE s.id = v.id",
            columns(rows, 4),
        )

    def seeds(self) -> list[SeedRow]:
        rows = self._db.rows(
            "SELECT id, url, identity, url_hash, host, content_sha1, state, party_seconds, "
            "discovered_from, created_batch FROM seeds ORDER BY id"
        )
        return [SeedRow(*r) for r in rows]

    def robots(self, origins: Iterable[str]) -> dict[str, RobotsRow]:
        wanted = list(dict.fromkeys(origins))
        if not wanted:
            return {}
        rows = self._db.rows(
            "SELECT origin, status, body, fetched_at FROM robots WHERE origin = ANY(%s::text[])",
            (wanted,),
        )
        return {o: RobotsRow(o, s, bytes(b), at) for o, s, b, at in rows}

    def put_robots(self, rows: Sequence[RobotsRow]) -> None:
        if not rows:
            return
        last = sorted({r.origin: r for r in rows}.items())
        self._db.defer(
            "INSERT INTO robots (origin, status, body, fetched_at) SELECT * FROM "
            "unnest(%s::text[], %s::int[], %s::bytea[], %s::float8[]) ON CONFLICT (origin) "
            "DO UPDATE SET status = excluded.status, body = excluded.body, "
            "fetched_at = excluded.fetched_at",
            columns([(r.origin, r.status, r.body, r.fetched_at) for _, r in last], 4),
        )

    def has_seeds(self) -> bool:
        return bool(self._db.rows("SELECT 1 FROM seeds LIMIT 1"))

    def rebuild_sites(self, site_of_host: Callable[[str], str]) -> int:
        if self._db.rows("SELECT 1 FROM sites LIMIT 1"):
            return 0

        def send(conn: Conn) -> Read[tuple[Rows, Rows]]:
            parties = reader(
                conn.execute(
                    "SELECT u.seed_id, u.host FROM urls u "
                    "JOIN seeds s ON s.identity = u.identity ORDER BY u.id"
                )
            )
            counts = reader(
                conn.execute(
                    "SELECT host, count(*) FROM urls WHERE state <> 'skipped' GROUP BY host"
                )
            )
            return lambda: (parties(), counts())

        party_rows, count_rows = self._db.exchange(send)
        sites: dict[str, Site] = {}
        # A party exists where a seed's URL was admitted (queued or fetched), 004 §2.
        for seed_id, host in party_rows:
            sites.setdefault(site_of_host(host), Site(seed_id, 0))
        for host, n in count_rows:
            sites.setdefault(site_of_host(host), Site(None, 0)).pages += int(n)
        rows = sorted((name, s.seed_id, s.pages) for name, s in sites.items())
        self._db.rows(
            "INSERT INTO sites (site, seed_id, pages) SELECT * FROM "
            "unnest(%s::text[], %s::bigint[], %s::bigint[]) ON CONFLICT (site) DO NOTHING",
            columns(rows, 3),
        )
        return len(sites)

"""What ``PostgresCrawlStore`` knows about its URL rows (``URLStore``): URLs by id and state
counts, the collection a recrawl queues, a host's sources, sitemap dates and pattern-script
labels.

A base class of ``PostgresCrawlStore``; the SQLite twin is ``_sqlite_urls.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dustless.kinds import LinkKind
from dustless.store._pg_conn import (
    Conn,
    PgConnection,
    Read,
    Rows,
    columns,
    reader,
)
from dustless.store._rows import (
    STATES,
    URL_COLS,
    url_row,
)
from dustless.store._types import (
    PROBE_PREFIX,
    StoredURL,
    URLDate,
    URLLabel,
    URLState,
)

__all__ = ["PgURLs"]


class PgURLs:
    """URL rows read and labelled; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection

    def label_urls(self, labels: Sequence[URLLabel]) -> None:
        if not labels:
            return
        # One row per identity (an UPDATE … FROM touches a row once), folded in order as
        # SQLite applies them one by one: the last page type, and of the category fields
        # the last one given (a None adds nothing, ``URLLabel``).
        folded: dict[str, tuple[str, str | None, str | None, str | None]] = {}
        for x in labels:
            _, c, ci, cn = folded.get(x.identity, (x.page_type, None, None, None))
            folded[x.identity] = (
                x.page_type,
                c if x.category is None else x.category,
                ci if x.category_id is None else x.category_id,
                cn if x.category_name is None else x.category_name,
            )
        rows = [(identity, *fields) for identity, fields in folded.items()]
        self._db.defer(
            "UPDATE urls u SET page_type = v.pt, category = coalesce(v.c, u.category), "
            "category_id = coalesce(v.ci, u.category_id), "
            "category_name = coalesce(v.cn, u.category_name) "
            "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
            "AS v(identity, pt, c, ci, cn) WHERE u.identity = v.identity",
            columns(rows, 5),
        )

    def urls_by_id(self, ids: Iterable[int]) -> dict[int, StoredURL]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        rows = self._db.rows(f"SELECT {URL_COLS} FROM urls WHERE id = ANY(%s::bigint[])", (wanted,))
        return {int(r[0]): url_row(r) for r in rows}

    def url_counts(self) -> dict[URLState, int]:
        counts = dict.fromkeys(URLState, 0)
        for state, n in self._db.rows("SELECT state, count(*) FROM urls GROUP BY state"):
            counts[STATES[state]] = int(n)
        return counts

    def collection_ids(self, kinds: Sequence[LinkKind] | None = None) -> list[int]:
        sql = (
            "SELECT id FROM urls WHERE state IN ('done', 'queued') "
            "AND substr(identity, 1, %s) <> %s"
        )
        params: list[Any] = [len(PROBE_PREFIX), PROBE_PREFIX]
        if kinds is not None:
            sql += " AND kind = ANY(%s::text[])"
            params.append([k.value for k in kinds])
        return [int(r[0]) for r in self._db.rows(sql + " ORDER BY id", params)]

    def count_kind(self, host: str, kind: LinkKind) -> int:
        ((n,),) = self._db.rows(
            "SELECT count(*) FROM urls WHERE host = %s AND kind = %s", (host, kind.value)
        )
        return int(n)

    def record_dates(self, dates: Sequence[URLDate]) -> int:
        if not dates:
            return 0
        # One row per URL and batch, the last reading of the batch (an upsert may not touch
        # a row twice in one statement, so the readings are reduced here first).
        last = {(d.identity, d.batch): d for d in dates}
        rows = sorted(last.values(), key=lambda d: (d.identity, d.batch))

        def send(conn: Conn) -> Read[Rows]:
            return reader(
                conn.execute(
                    "INSERT INTO url_dates AS d (url_id, batch, lastmod, changefreq, source_id) "
                    "SELECT u.id, v.batch, v.lastmod, v.changefreq, v.source_id FROM unnest("
                    "%s::text[], %s::int[], %s::float8[], %s::text[], %s::bigint[]) "
                    "AS v(identity, batch, lastmod, changefreq, source_id) "
                    "JOIN urls u ON u.identity = v.identity ORDER BY u.id, v.batch "
                    "ON CONFLICT (url_id, batch) DO UPDATE SET lastmod = excluded.lastmod, "
                    "changefreq = excluded.changefreq, source_id = excluded.source_id "
                    "RETURNING (SELECT identity FROM urls WHERE id = d.url_id)",
                    columns(
                        [(d.identity, d.batch, d.lastmod, d.changefreq, d.source_id) for d in rows],
                        5,
                    ),
                )
            )

        held = {r[0] for r in self._db.exchange(send)}
        # As SQLite counts them: every reading of a URL the crawl holds wrote a row.
        return sum(1 for d in dates if d.identity in held)

    def category_names(self, url_ids: Iterable[int]) -> dict[int, str]:
        ids = list(dict.fromkeys(url_ids))
        if not ids:
            return {}
        rows = self._db.rows(
            "SELECT id, category_name FROM urls WHERE category_name IS NOT NULL "
            "AND category_name <> '' AND id = ANY(%s::bigint[])",
            (ids,),
        )
        return {int(i): name for i, name in rows}

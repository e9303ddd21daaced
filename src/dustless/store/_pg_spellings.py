"""Fallback spellings (``SpellingStore``, ``crawl/spellings.py``) in ``PostgresCrawlStore``.

Several workers keep spellings at once: ``add_spellings`` keeps at most ``limit`` per
identity across them by taking a transaction-scoped advisory lock per identity (in key
order) before counting. A base class of ``PostgresCrawlStore``; the SQLite twin is
``_sqlite_spellings.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from dustless.store._pg_conn import (
    Conn,
    PgConnection,
    Read,
    reader,
)
from dustless.store._pg_schema import (
    LOCK_MANY,
    LOCK_SPELLINGS,
    lock_key,
)
from dustless.store._rows import (
    URL_COLS,
    url_row,
)
from dustless.store._types import (
    StoredURL,
)

__all__ = ["PgSpellings"]


_U_COLS = ", ".join("u." + c.strip() for c in URL_COLS.split(","))


# The spellings of ``(identity, url, n)`` not kept yet, numbered per identity in the order
# met, inserted while the identity's count stays within the limit.
_ADD_SPELLINGS = """
INSERT INTO spellings (identity, url)
SELECT v.identity, v.url FROM (
    SELECT d.identity, d.url, d.n, row_number() OVER (PARTITION BY d.identity ORDER BY d.n) AS k
    FROM (
        SELECT DISTINCT ON (identity, url) identity, url, n
        FROM unnest(%(ids)s::text[], %(urls)s::text[]) WITH ORDINALITY AS p(identity, url, n)
        ORDER BY identity, url, n
    ) d
    WHERE NOT EXISTS (SELECT 1 FROM spellings s WHERE s.identity = d.identity AND s.url = d.url)
) v
WHERE v.k + (SELECT count(*) FROM spellings s WHERE s.identity = v.identity) <= %(limit)s
ORDER BY v.n
ON CONFLICT DO NOTHING
"""


class PgSpellings:
    """Kept spellings; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection

    def add_spellings(self, pairs: Sequence[tuple[str, str]], limit: int) -> None:
        if not pairs:
            return
        self._db.defer(LOCK_MANY, (LOCK_SPELLINGS, sorted({lock_key(i) for i, _ in pairs})))
        self._db.defer(
            _ADD_SPELLINGS,
            {"ids": [i for i, _ in pairs], "urls": [u for _, u in pairs], "limit": limit},
        )

    def spelling_state(self, base: str, names: Sequence[str]) -> tuple[list[str], list[str]]:
        def send(conn: Conn) -> Read[tuple[list[str], list[str]]]:
            tried = reader(
                conn.execute(
                    "SELECT url FROM urls WHERE identity = ANY(%s::text[]) ORDER BY id",
                    (list(names),),
                )
            )
            kept = reader(
                conn.execute("SELECT url FROM spellings WHERE identity = %s ORDER BY seq", (base,))
            )
            return lambda: ([r[0] for r in tried()], [r[0] for r in kept()])

        return self._db.exchange(send)

    def spelling_rows(self, names: Sequence[str]) -> list[tuple[StoredURL, str | None, int | None]]:
        rows = self._db.rows(
            f"SELECT {_U_COLS}, f.state, f.status FROM urls u LEFT JOIN LATERAL "
            "(SELECT state, status FROM fetches WHERE url_id = u.id ORDER BY id DESC LIMIT 1) f "
            "ON true "
            "WHERE u.identity = ANY(%s::text[]) ORDER BY u.id",
            (list(names),),
        )
        return [(url_row(r[:10]), r[10], r[11]) for r in rows]

    def spelling_bases(self) -> list[str]:
        return [r[0] for r in self._db.rows("SELECT DISTINCT identity FROM spellings")]

"""Learning while crawling in ``PostgresCrawlStore`` (``LearnStore``): rules learned, what
they merged, and the re-keying of URL rows a new rule gives another identity
(docs/learning.md) — the twin of ``_sqlite_learn.py`` (the spellings: ``_pg_spellings.py``).

Several workers write these tables at once, so where SQLite's answer comes from running
statements one after another under its one writer, here the statement itself must give it:

* ``add_learned_rules`` answers the id of the row already stored when another worker learned
  the same rule first (``ON CONFLICT DO NOTHING``, then a read in the same transaction);
* ``rekey_urls`` runs ``dustless_rekey`` (``_pg_schema.py``, V6), which moves rows one by
  one and reports a new identity already stored as a collision — also one stored a moment
  ago by another worker's admission.

Writes that need no answer ride with the next exchange, as the rest of the store's do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dustless.store._learn_types import (
    MERGE_COLS,
    RULE_COLS,
    LearnedRuleRow,
    MergeRow,
    merge_params,
    merge_row,
)
from dustless.store._pg_conn import Conn, PgConnection, Read, columns, reader
from dustless.store._rows import URL_COLS, url_row
from dustless.store._types import StoredURL

__all__ = ["PgLearn"]


class PgLearn:
    """Learned rules and merges; ``PostgresCrawlStore`` sets ``_db``."""

    _db: PgConnection
    _worker: str

    # -- learned rules -----------------------------------------------------------------------
    def add_learned_rules(self, rules: Sequence[LearnedRuleRow]) -> list[int]:
        if not rules:
            return []
        rows = [
            (r.host, r.element, r.spec, r.support, r.pairs, r.differ, r.evidence, r.learned_at,
             r.learned_fetches, r.worker if r.worker is not None else self._worker)
            for r in rules
        ]  # fmt: skip

        def send(conn: Conn) -> Read[list[tuple[Any, ...]]]:
            conn.execute(
                "INSERT INTO learned_rules (host, element, spec, support, pairs, differ, "
                "evidence, learned_at, learned_fetches, worker) "
                "SELECT h, e, s, su, p, d, ev, la, lf, w FROM unnest("
                "%s::text[], %s::text[], %s::text[], %s::int[], %s::int[], %s::int[], "
                "%s::text[], %s::float8[], %s::bigint[], %s::text[]) WITH ORDINALITY "
                "AS v(h, e, s, su, p, d, ev, la, lf, w, n) ORDER BY n "
                "ON CONFLICT (host, spec) DO NOTHING",
                columns(rows, 10),
            )
            # Another worker may have learned the same rule for the host: its row's id.
            return reader(
                conn.execute(
                    "SELECT r.id FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY "
                    "AS v(host, spec, n) JOIN learned_rules r ON r.host = v.host "
                    "AND r.spec = v.spec ORDER BY v.n",
                    ([r.host for r in rules], [r.spec for r in rules]),
                )
            )

        return [int(r[0]) for r in self._db.exchange(send)]

    def retract_learned_rules(self, retractions: Sequence[tuple[int, float, str]]) -> None:
        if not retractions:
            return
        first: dict[int, tuple[float, str]] = {}
        for rid, at, reason in retractions:  # in order: the first retraction stands
            first.setdefault(rid, (at, reason))
        self._db.defer(
            "UPDATE learned_rules r SET retracted_at = coalesce(r.retracted_at, v.at), "
            "reason = coalesce(r.reason, v.reason) FROM unnest(%s::bigint[], %s::float8[], "
            "%s::text[]) AS v(id, at, reason) WHERE r.id = v.id",
            (list(first), [a for a, _ in first.values()], [w for _, w in first.values()]),
        )

    def learned_rules(self) -> list[LearnedRuleRow]:
        rows = self._db.rows(f"SELECT {RULE_COLS} FROM learned_rules ORDER BY id")
        return [LearnedRuleRow(*r) for r in rows]  # bigint columns come back as int

    # -- merges ------------------------------------------------------------------------------
    def add_merges(self, merges: Sequence[MergeRow]) -> None:
        if not merges:
            return
        rows = [merge_params(m) for m in merges]  # a repeat: the first stays (DO NOTHING)
        self._db.defer(
            f"INSERT INTO learned_merges ({MERGE_COLS}) SELECT rule_id, base, url, host, site, "
            "depth, kind, seed_id, parent_id, external, url_id, checked FROM unnest("
            "%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[], "
            "%s::text[], %s::bigint[], %s::bigint[], %s::int[], %s::bigint[], %s::int[]) "
            "WITH ORDINALITY AS v(rule_id, base, url, host, site, depth, kind, seed_id, "
            "parent_id, external, url_id, checked, n) ORDER BY n ON CONFLICT DO NOTHING",
            columns(rows, 12),
        )

    def merges_of(self, rule_ids: Iterable[int]) -> list[MergeRow]:
        ids = list(dict.fromkeys(rule_ids))
        if not ids:
            return []
        rows = self._db.rows(
            f"SELECT {MERGE_COLS} FROM learned_merges WHERE rule_id = ANY(%s::bigint[]) "
            "ORDER BY seq",
            (ids,),
        )
        return [merge_row(r) for r in rows]

    def drop_merges(self, rule_ids: Iterable[int]) -> None:
        ids = list(dict.fromkeys(rule_ids))
        if ids:
            self._db.defer("DELETE FROM learned_merges WHERE rule_id = ANY(%s::bigint[])", (ids,))

    def merge_counts(self) -> dict[int, tuple[int, int]]:
        rows = self._db.rows(
            "SELECT rule_id, sum(CASE WHEN checked = 0 THEN 1 ELSE 0 END), sum(checked) "
            "FROM learned_merges GROUP BY rule_id"
        )
        return {int(r): (int(n), int(c)) for r, n, c in rows}

    # -- re-keying ---------------------------------------------------------------------------
    def queued_of_host(self, host: str, limit: int) -> list[StoredURL]:
        rows = self._db.rows(
            f"SELECT {URL_COLS} FROM urls WHERE state = 'queued' AND host = %s "
            "ORDER BY priority DESC, depth, id LIMIT %s",
            (host, limit),
        )
        return [url_row(r) for r in rows]

    def rekey_urls(self, changes: Sequence[tuple[int, str, str]]) -> list[int]:
        if not changes:
            return []
        rows = self._db.rows(
            "SELECT * FROM dustless_rekey(%s::bigint[], %s::text[], %s::text[])",
            ([c[0] for c in changes], [c[1] for c in changes], [c[2] for c in changes]),
        )
        return [int(r[0]) for r in rows]

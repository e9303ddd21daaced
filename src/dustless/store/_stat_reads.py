"""The reads behind ``dustless stats`` (seed 004 §3): the crawl's counted fetches, grouped.

:func:`stat_reads` builds one temporary table of the counted fetches — every URL's *last*
fetch in each asked batch, joined with its URL once; sitemaps and feeds (link kinds ``m``,
``n``) are URL sources, not documents, and are left out (a sitemap robots.txt lists sits at
depth 0 and would count as a seed) — then runs one aggregate query per table of the
statistics over it, so a million fetches cost a few scans, not a million Python objects.
What the rows mean, and the figures made of them, is ``analysis/_stats.py``'s; this module
only reads. The SQL is the subset SQLite and PostgreSQL share (``_reader.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dustless.store._reader import CrawlReader

__all__ = ["CanonicalReads", "StatReads", "StatTotals", "stat_reads"]

_OK_SUM = "coalesce(sum(CASE WHEN state = 'OK' THEN 1 ELSE 0 END), 0)"  # portable SQL
_TEMP_TABLES = ("t", "sp", "nc", "d", "cn", "ct")


@dataclass(frozen=True, slots=True)
class StatTotals:
    urls_known: int  # URLs other than evaluate's probes
    seeds_known: int
    fetches: int  # counted fetches, gates included
    requested: int
    downloaded: int
    first: float | None  # the first and last counted fetch's time
    last: float | None
    hosts: int


@dataclass(frozen=True, slots=True)
class CanonicalReads:
    """The canonical declarations of the counted documents (RFC 6596)."""

    documents: int
    declaring: int
    own: int
    elsewhere: tuple[tuple[str, str], ...]  # (url, canonical) declaring another URL
    statuses: tuple[int | None, ...]  # the last status of each declared URL fetched


@dataclass(frozen=True, slots=True)
class StatReads:
    """Every row ``crawl_stats`` is made of; each is named after the table it feeds."""

    totals: StatTotals
    seed_states: dict[str, int]  # Table 1
    document_states: dict[str, int]  # Table 2
    seed_codes: tuple[tuple[int, int], ...]  # (status, count) of the state "code"
    document_codes: tuple[tuple[int, int], ...]
    truncations: tuple[tuple[str, str | None, int], ...]  # (state, error, count)
    seeds: tuple[tuple[str, str], ...]  # (url, state) of the requested seeds, in fetch order
    document_lengths: tuple[int, int, int, float]  # Table 3: count, min, max, mean
    size_buckets: dict[int, int]  # Table 5's bucket -> downloads
    download_sizes: tuple[int, ...]
    mean_size: float
    max_size: int
    storage: tuple[tuple[str, int, int, int], ...]  # Fig. 4: file, records, raw, stored
    depths: tuple[tuple[int, int, int, int], ...]  # Table 6: depth, requested, OK, links
    link_kinds: tuple[tuple[bool, bool, bool, int], ...]  # Table 13: h, a, f, documents
    filtering: tuple[tuple[str, int, int, int], ...]  # seed 002 Table 2: type, n, before, after
    timeline: tuple[tuple[int, str, int], ...]  # (bucket, state, count)
    bucket_seconds: float
    documents: int
    distinct_documents: int
    documents_by_host: dict[str, int]
    top_hosts: tuple[tuple[str, int, int, int], ...]  # host, requested, OK, bytes
    canonicals: CanonicalReads | None  # None: a crawl stored before declarations were kept


def stat_reads(
    db: CrawlReader,
    batches: Sequence[int],
    *,
    gates: Sequence[str],
    classes: Mapping[str, str],
    seed_prefix: Callable[[str], str],
    size_bucket: int,
    size_buckets: int,
    bucket_seconds: Callable[[float], float],
    filtering: bool,
    top_hosts: int,
) -> StatReads:
    """The rows of the statistics of ``batches``. ``gates``: the states of a fetch stopped
    before any request; ``classes``: payload SHA-1 -> its document class where another's;
    ``seed_prefix``: Table 3's string of a seed; Table 5's buckets of ``size_bucket`` bytes,
    ``size_buckets`` of them then one open; ``bucket_seconds``: the timeline's width for a
    span; ``filtering``: read seed 002 Table 2 (a ``--script`` crawl)."""
    try:
        _count(db, batches)
        totals = _totals(db, gates)
        first, last = totals.first, totals.last
        width = 1.0 if first is None or last is None else bucket_seconds(last - first)
        documents, distinct, by_host = _documents(db, classes)
        mean_size, max_size = _size_summary(db)
        return StatReads(
            totals=totals,
            seed_states=_states(db, "WHERE depth = 0"),
            document_states=_states(db, ""),
            seed_codes=_codes(db, "depth = 0 AND "),
            document_codes=_codes(db, ""),
            truncations=_truncations(db),
            seeds=_seeds(db, gates),
            document_lengths=_document_lengths(db, seed_prefix),
            size_buckets=_size_buckets(db, size_bucket, size_buckets),
            download_sizes=_sizes(db),
            mean_size=mean_size,
            max_size=max_size,
            storage=_storage(db),
            depths=_depths(db, gates),
            link_kinds=_link_kinds(db),
            filtering=_filtering(db) if filtering else (),
            timeline=_timeline(db, first, width),
            bucket_seconds=width,
            documents=documents,
            distinct_documents=distinct,
            documents_by_host=by_host,
            top_hosts=_hosts(db, gates, top_hosts),
            canonicals=_canonicals(db),
        )
    finally:
        for name in _TEMP_TABLES:
            db.script(f"DROP TABLE IF EXISTS temp.{name}")


def _count(db: CrawlReader, batches: Sequence[int]) -> None:
    """The temporary table ``t`` of the counted fetches (the module's docstring)."""
    marks = ",".join("?" * len(batches)) or "NULL"
    db.script("DROP TABLE IF EXISTS temp.t")
    db.script(
        "CREATE TEMP TABLE t AS SELECT f.id, f.batch, f.fetched_at, f.state, f.status, f.size_raw, "
        "f.size_stored, f.links_h, f.links_a, f.links_f, f.links_internal, f.warc_file, "
        "f.url_id, u.host, u.depth, u.seed_id, f.links_before, f.links_after, u.page_type, "
        "CASE WHEN f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code', 'pBig', 'pFlat') "
        "THEN f.content_sha1 END AS doc "
        "FROM fetches f JOIN urls u ON u.id = f.url_id "
        "WHERE f.id IN (SELECT max(id) FROM fetches WHERE batch IN "
        f"({marks}) GROUP BY url_id, batch) AND u.kind NOT IN ('m', 'n')",
        batches,
    )


def _requested(gates: Sequence[str]) -> tuple[str, str]:
    """SQL for "a request was made", as a condition and as a sum (in CASE form: PostgreSQL
    has no sum(boolean))."""
    cond = f"state NOT IN ({','.join('?' * len(gates))})"
    return cond, f"coalesce(sum(CASE WHEN {cond} THEN 1 ELSE 0 END), 0)"


def _totals(db: CrawlReader, gates: Sequence[str]) -> StatTotals:
    (urls_known,) = db.query("SELECT count(*) FROM urls WHERE substr(identity, 1, 6) != 'probe '")[
        0
    ]
    (seeds_known,) = db.query("SELECT count(*) FROM seeds")[0]
    fetches, requested, downloaded, t0, t1, hosts = db.query(
        f"SELECT count(*), {_requested(gates)[1]}, {_OK_SUM}, "
        "min(fetched_at), max(fetched_at), count(DISTINCT host) FROM t",
        gates,
    )[0]
    return StatTotals(
        int(urls_known),
        int(seeds_known),
        int(fetches),
        int(requested),
        int(downloaded),
        None if t0 is None else float(t0),
        None if t1 is None else float(t1),
        int(hosts),
    )


def _states(db: CrawlReader, where: str) -> dict[str, int]:
    rows = db.query(f"SELECT state, count(*) FROM t {where} GROUP BY state")
    return {str(s): int(c) for s, c in rows}


def _codes(db: CrawlReader, seeds: str) -> tuple[tuple[int, int], ...]:
    return tuple(
        (int(s), int(c))
        for s, c in db.query(
            f"SELECT status, count(*) FROM t WHERE {seeds}state = 'code' "
            "AND status IS NOT NULL GROUP BY status"
        )
    )


def _truncations(db: CrawlReader) -> tuple[tuple[str, str | None, int], ...]:
    """Counted fetches a WARC record holds cut: the reason is the WARC writer's, from the
    state and the error (``truncation``)."""
    return tuple(
        (str(s), e, int(c))
        for s, e, c in db.query(
            "SELECT t.state, f.error, count(*) FROM t JOIN fetches f ON f.id = t.id "
            "WHERE t.state IN ('tooBig', 'dTim', 'dErr') AND t.warc_file IS NOT NULL "
            "GROUP BY 1, 2"
        )
    )


def _seeds(db: CrawlReader, gates: Sequence[str]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (str(u), str(s))
        for u, s in db.query(
            "SELECT u.url, t.state FROM t JOIN urls u ON u.id = t.url_id WHERE t.depth = 0 "
            f"AND t.{_requested(gates)[0]} ORDER BY t.id",
            gates,
        )
    )


def _document_lengths(
    db: CrawlReader, seed_prefix: Callable[[str], str]
) -> tuple[int, int, int, float]:
    """Table 3's document strings: the URL without its seed's string (004 §3)."""
    db.script("DROP TABLE IF EXISTS temp.sp")
    db.script("CREATE TEMP TABLE sp (id INTEGER PRIMARY KEY, prefix TEXT NOT NULL)")
    prefixes = [(i, seed_prefix(u)) for i, u in db.query("SELECT id, url FROM seeds")]
    db.script_many("INSERT INTO temp.sp (id, prefix) VALUES (?, ?)", prefixes)
    slash = db.instr("r", "'/'")
    after_scheme = db.instr("u.url", "'://'")
    n, lo, hi, mean = db.query(
        "SELECT count(*), min(l), max(l), avg(l) FROM (SELECT CASE "
        "WHEN sp.prefix IS NOT NULL AND substr(r, 1, length(sp.prefix)) = sp.prefix THEN "
        + db.greatest(
            "0",
            "length(r) - length(sp.prefix) "
            "- CASE WHEN substr(r, length(sp.prefix) + 1, 1) = '/' THEN 1 ELSE 0 END",
        )
        + f" WHEN {slash} > 0 THEN length(r) - {slash} ELSE 0 END AS l "
        f"FROM (SELECT substr(u.url, {after_scheme} + 3) AS r, t.seed_id FROM t "
        "JOIN urls u ON u.id = t.url_id "
        "WHERE t.state = 'OK') x LEFT JOIN temp.sp ON sp.id = x.seed_id) y"
    )[0]
    return int(n), int(lo or 0), int(hi or 0), float(mean or 0)


def _size_buckets(db: CrawlReader, size: int, buckets: int) -> dict[int, int]:
    # Bucket min((max(size, 1) - 1) // size, buckets), in integer division (our own
    # constants inline: a bound parameter may not be an integer).
    return {
        int(b): int(c)
        for b, c in db.query(
            f"SELECT CASE WHEN s > {int(buckets) * int(size)} THEN {int(buckets)} "
            f"WHEN s > 0 THEN (s - 1) / {int(size)} ELSE 0 END, count(*) "
            "FROM (SELECT coalesce(size_raw, 0) AS s FROM t WHERE state = 'OK') z GROUP BY 1"
        )
    }


def _sizes(db: CrawlReader) -> tuple[int, ...]:
    return tuple(
        int(v) for (v,) in db.query("SELECT coalesce(size_raw, 0) FROM t WHERE state = 'OK'")
    )


def _size_summary(db: CrawlReader) -> tuple[float, int]:
    mean, top = db.query(
        "SELECT coalesce(avg(coalesce(size_raw, 0)), 0), coalesce(max(size_raw), 0) FROM t "
        "WHERE state = 'OK'"
    )[0]
    return float(mean), int(top)


def _storage(db: CrawlReader) -> tuple[tuple[str, int, int, int], ...]:
    return tuple(
        (str(f), int(c), int(r), int(s))
        for f, c, r, s in db.query(
            "SELECT warc_file, count(*), coalesce(sum(size_raw), 0), "
            "coalesce(sum(size_stored), 0) FROM t WHERE warc_file IS NOT NULL "
            "GROUP BY warc_file ORDER BY warc_file"
        )
    )


def _depths(db: CrawlReader, gates: Sequence[str]) -> tuple[tuple[int, int, int, int], ...]:
    return tuple(
        (int(d), int(r), int(k), int(links))
        for d, r, k, links in db.query(
            f"SELECT depth, {_requested(gates)[1]}, {_OK_SUM}, "
            "coalesce(sum(CASE WHEN state = 'OK' THEN links_internal ELSE 0 END), 0) "
            "FROM t GROUP BY depth ORDER BY depth",
            gates,
        )
    )


def _link_kinds(db: CrawlReader) -> tuple[tuple[bool, bool, bool, int], ...]:
    return tuple(
        (bool(h), bool(a), bool(f), int(c))
        for h, a, f, c in db.query(
            "SELECT links_h > 0, links_a > 0, links_f > 0, count(*) FROM t WHERE state = 'OK' "
            "GROUP BY 1, 2, 3"
        )
    )


def _filtering(db: CrawlReader) -> tuple[tuple[str, int, int, int], ...]:
    """The downloads that stored their link counts before and after pattern filtering."""
    return tuple(
        (str(p), int(n), int(b), int(a))
        for p, n, b, a in db.query(
            "SELECT coalesce(page_type, 'other'), count(*), sum(links_before), "
            "sum(links_after) FROM t WHERE state = 'OK' AND links_before IS NOT NULL "
            "GROUP BY 1"
        )
    )


def _timeline(
    db: CrawlReader, first: float | None, width: float
) -> tuple[tuple[int, str, int], ...]:
    if first is None:
        return ()
    return tuple(
        (int(b), str(s), int(c))
        for b, s, c in db.query(
            f"SELECT {db.floor('(fetched_at - ?) / ?')}, state, count(*) FROM t "
            "GROUP BY 1, 2 ORDER BY 1",
            (first, width),
        )
    )


def _documents(db: CrawlReader, classes: Mapping[str, str]) -> tuple[int, int, dict[str, int]]:
    """Documents, distinct ones, and distinct ones per host: each payload's class (or its
    SHA-1), counted by SQL over the few payloads whose class is another's."""
    db.script("DROP TABLE IF EXISTS temp.nc")
    db.script("CREATE TEMP TABLE nc (sha TEXT PRIMARY KEY, cls TEXT NOT NULL)")
    db.script_many("INSERT INTO temp.nc (sha, cls) VALUES (?, ?)", list(classes.items()))
    db.script("DROP TABLE IF EXISTS temp.d")
    db.script(
        "CREATE TEMP TABLE d AS SELECT t.host AS host, coalesce(nc.cls, t.doc) AS cls "
        "FROM t LEFT JOIN temp.nc AS nc ON nc.sha = t.doc WHERE t.doc IS NOT NULL"
    )
    documents, distinct = db.query("SELECT count(*), count(DISTINCT cls) FROM temp.d")[0]
    by_host = {
        str(h): int(n)
        for h, n in db.query("SELECT host, count(DISTINCT cls) FROM temp.d GROUP BY host")
    }
    return int(documents), int(distinct), by_host


def _hosts(
    db: CrawlReader, gates: Sequence[str], top: int
) -> tuple[tuple[str, int, int, int], ...]:
    return tuple(
        (str(h), int(r), int(k), int(b))
        for h, r, k, b in db.query(
            f"SELECT host, {_requested(gates)[1]}, {_OK_SUM}, "
            "coalesce(sum(CASE WHEN state = 'OK' THEN size_raw ELSE 0 END), 0) FROM t "
            "GROUP BY host ORDER BY 2 DESC, host LIMIT ?",
            (*gates, top),
        )
    )


def _canonicals(db: CrawlReader) -> CanonicalReads | None:
    """The declarations of the counted documents, and the last answer of each declared URL
    the crawl fetched."""
    if "canonical" not in db.columns("fetches"):
        return None
    db.script("DROP TABLE IF EXISTS temp.cn")
    db.script(
        "CREATE TEMP TABLE cn AS SELECT u.url AS url, u.host AS host, f.canonical AS canonical "
        "FROM temp.t c JOIN fetches f ON f.id = c.id JOIN urls u ON u.id = c.url_id "
        "WHERE c.doc IS NOT NULL"
    )
    documents, declaring, own = db.query(
        "SELECT count(*), count(canonical), "
        "coalesce(sum(CASE WHEN canonical = url THEN 1 ELSE 0 END), 0) FROM temp.cn"
    )[0]
    elsewhere = tuple(
        (str(u), str(c))
        for u, c in db.query(
            "SELECT url, canonical FROM temp.cn WHERE canonical IS NOT NULL AND canonical != url"
        )
    )
    db.script("DROP TABLE IF EXISTS temp.ct")
    db.script(
        "CREATE TEMP TABLE ct AS SELECT DISTINCT canonical AS url FROM temp.cn "
        "WHERE canonical IS NOT NULL AND canonical != url"
    )
    statuses = tuple(
        s
        for (s,) in db.query(
            "SELECT (SELECT f.status FROM fetches f WHERE f.url_id = u.id ORDER BY f.id DESC "
            "LIMIT 1) FROM urls u JOIN temp.ct ON ct.url = u.url"
        )
    )
    return CanonicalReads(int(documents), int(declaring), int(own), elsewhere, statuses)

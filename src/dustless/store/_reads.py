"""The named reads of a crawl: every question its readers ask of the crawl tables, as SQL.

The store is the one place that speaks SQL over the crawl tables (docs/internals.md): the
readers (``analysis``, ``export``, ``recrawl``, the CLI, the demo) ask these functions and get
typed rows back. Each read takes a :class:`~dustless.store.CrawlReader`, so it is written once
in the SQL both databases share, and the PostgreSQL reader translates it (``_pg_reader.py``).
The scans a million fetches run through (``observation_rows``, ``evaluation_rows``,
``history_rows``) yield plain tuples typed by an alias: a named tuple per row costs more
than the loop that reads it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from dustless.store._reader import CrawlReader
from dustless.store._rows import FETCH_COLS, fetch_row
from dustless.store._types import FetchRow

__all__ = [
    "EvaluationRow",
    "FirstCrawl",
    "HistoryRow",
    "LearnedRead",
    "ObservationRow",
    "SeedOutcome",
    "URLLabelRow",
    "canonical_declarations",
    "evaluation_rows",
    "export_fetch_rows",
    "fetch_tally",
    "first_crawl",
    "history_rows",
    "latest_lastmods",
    "learned_rule_reads",
    "max_depth",
    "merge_counts",
    "observation_rows",
    "payload_fingerprints",
    "seed_outcomes",
    "soft404_count",
    "url_labels",
]

# The states whose 2xx payload is a document (a truncated tooBig one is not).
_DOCUMENT_STATES = "('OK', 'code', 'pBig', 'pFlat')"


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values)) or "NULL"


def _last_per_url_and_batch(marks: str) -> str:
    """The counted fetches: each URL's last fetch in each of the batches ``marks`` binds."""
    return f"SELECT max(id) FROM fetches WHERE batch IN ({marks}) GROUP BY url_id, batch"


# -- content identity (analysis/_content.py) ---------------------------------------------------
def fetch_tally(db: CrawlReader) -> tuple[int, int]:
    """``(fetches, last fetch id)``: a crawl that went on since differs in one of them."""
    count, last = db.query("SELECT count(*), coalesce(max(id), 0) FROM fetches")[0]
    return int(count), int(last)


def payload_fingerprints(db: CrawlReader) -> Iterator[tuple[str, bytes]]:
    """``(payload SHA-1, visible-text fingerprint)`` of every fetch that stored one, in fetch
    order (a plain scan: a GROUP BY over a million fetches took several times as long)."""
    return db.iterate(
        "SELECT content_sha1, content_fp FROM fetches "
        "WHERE content_fp IS NOT NULL AND content_sha1 IS NOT NULL ORDER BY id"
    )


# -- rules learn (analysis/_learnobs.py) -------------------------------------------------------
# (url, status, payload SHA-1 of a document, Location)
ObservationRow = tuple[str, int | None, str | None, str | None]


def observation_rows(db: CrawlReader) -> Iterator[ObservationRow]:
    """Every fetch of the crawl (every batch) in fetch order, as the learner observes it."""
    return db.iterate(
        f"SELECT u.url, f.status, CASE WHEN f.state IN {_DOCUMENT_STATES} "
        "THEN f.content_sha1 END, f.location "
        "FROM fetches f JOIN urls u ON u.id = f.url_id ORDER BY f.id"
    )


# -- evaluate (analysis/_evaluate.py, _canonical_eval.py) ---------------------------------------
# (url, in a probe batch, stopped by a gate, document's SHA-1, redirect's Location, soft 404)
EvaluationRow = tuple[str, bool, bool, str | None, str | None, bool]


def evaluation_rows(
    db: CrawlReader,
    crawl: Sequence[int],
    probes: Sequence[int],
    gates: Sequence[str],
    soft404_state: str,
) -> Iterator[EvaluationRow]:
    """Every fetch of the ``crawl`` and ``probes`` batches in fetch order; SQL does the
    per-row tests so the caller's loop only fills a dict. A document is a complete 2xx
    answer with a payload hash."""
    wanted = (*crawl, *probes)
    # "+f.batch": scan fetches in id order rather than through the batch index and a sort.
    sql = (
        f"SELECT u.url, f.batch IN ({_marks(probes)}) , f.state IN ({_marks(gates)}), "
        "CASE WHEN f.content_sha1 IS NOT NULL AND f.status BETWEEN 200 AND 299 "
        f"AND f.state IN {_DOCUMENT_STATES} THEN f.content_sha1 END, "
        "CASE WHEN f.status BETWEEN 300 AND 399 THEN f.location END, f.state = ? "
        f"FROM fetches f JOIN urls u ON u.id = f.url_id WHERE +f.batch IN ({_marks(wanted)}) "
        "ORDER BY f.id"
    )
    return db.iterate(sql, (*probes, *gates, soft404_state, *wanted))


def canonical_declarations(db: CrawlReader, batches: Sequence[int]) -> Iterator[tuple[str, str]]:
    """``(url, declared canonical)`` of the 2xx fetches of ``batches`` that declared one, in
    fetch order; nothing for a crawl stored before declarations were kept."""
    if not batches or "canonical" not in db.columns("fetches"):
        return iter(())
    return db.iterate(
        "SELECT u.url, f.canonical FROM fetches f JOIN urls u ON u.id = f.url_id "
        f"WHERE f.canonical IS NOT NULL AND f.batch IN ({_marks(batches)}) "
        "AND f.status BETWEEN 200 AND 299 ORDER BY f.id",
        batches,
    )


def soft404_count(db: CrawlReader, batches: tuple[int, ...]) -> int:
    """URLs whose last fetch in a batch was a soft 404 (state ``soft404``, crawl/soft404.py):
    no document, so every reader counts them apart."""
    if not batches:
        return 0
    (n,) = db.query(
        "SELECT count(*) FROM fetches f WHERE f.state = 'soft404' AND f.id IN ("
        f"{_last_per_url_and_batch(_marks(batches))})",
        batches,
    )[0]
    return int(n)


# -- changes (analysis/_changes_db.py) ---------------------------------------------------------
# (url id, url, host, depth, batch, state, status, payload SHA-1, links h, a, f,
#  a revisit, the sitemap's lastmod)
HistoryRow = tuple[
    int, str, str, int, int, str, int | None, str | None, int, int, int, bool, float | None
]


def history_rows(db: CrawlReader, batches: Sequence[int]) -> Iterator[HistoryRow]:
    """Every fetch of ``batches`` of a URL that is not a URL source (sitemap, feed), by URL,
    batch and fetch, with the sitemap date of the URL in that batch (``NULL`` before a
    crawl DB kept dates)."""
    dated = "url_dates" in db.tables
    lastmod = "d.lastmod" if dated else "NULL"
    join = "LEFT JOIN url_dates d ON d.url_id = f.url_id AND d.batch = f.batch " if dated else ""
    return db.iterate(
        "SELECT u.id, u.url, u.host, u.depth, f.batch, f.state, f.status, f.content_sha1, "
        f"f.links_h, f.links_a, f.links_f, f.revisit_of IS NOT NULL, {lastmod} "
        f"FROM fetches f JOIN urls u ON u.id = f.url_id {join}"
        f"WHERE f.batch IN ({_marks(batches)}) AND u.kind NOT IN ('m', 'n') "
        "ORDER BY u.id, f.batch, f.id",
        batches,
    )


def latest_lastmods(db: CrawlReader, batches: Sequence[int]) -> Iterator[tuple[int, int, float]]:
    """``(url id, batch, lastmod)``: each URL's latest sitemap date over ``batches``."""
    if "url_dates" not in db.tables:
        return iter(())
    # (url_id, batch) is unique in url_dates.
    return db.iterate(
        "SELECT url_id, batch, lastmod FROM (SELECT url_id, batch, lastmod, "
        "row_number() OVER (PARTITION BY url_id ORDER BY batch DESC) AS n FROM url_dates "
        f"WHERE lastmod IS NOT NULL AND batch IN ({_marks(batches)})) d WHERE n = 1",
        batches,
    )


# -- learning while crawling (analysis/_learnstats.py) -----------------------------------------
class LearnedRead(NamedTuple):
    """A row of ``learned_rules`` as stored."""

    id: int
    host: str
    spec: str
    support: int
    pairs: int
    differ: int
    evidence: str
    learned_at: float
    learned_fetches: int
    retracted_at: float | None
    reason: str | None


def learned_rule_reads(db: CrawlReader) -> tuple[LearnedRead, ...]:
    """Every rule the crawl learned, by host and in the order learned (none before the
    crawl DB kept them)."""
    if "learned_rules" not in db.tables:
        return ()
    return tuple(
        LearnedRead(*r)
        for r in db.query(
            "SELECT id, host, spec, support, pairs, differ, evidence, learned_at, "
            "learned_fetches, retracted_at, reason FROM learned_rules ORDER BY host, id"
        )
    )


def merge_counts(db: CrawlReader) -> dict[int, tuple[int, int]]:
    """``rule id -> (URLs merged, of which fetched anyway to check the rule)``."""
    if "learned_merges" not in db.tables:
        return {}
    checked = "sum(checked)" if "checked" in db.columns("learned_merges") else "0"
    return {
        int(rid): (int(n), int(c))
        for rid, n, c in db.query(
            f"SELECT rule_id, count(*), {checked} FROM learned_merges GROUP BY rule_id"
        )
    }


# -- export (export/_files.py) -----------------------------------------------------------------
def export_fetch_rows(db: CrawlReader) -> Iterator[FetchRow]:
    """Every fetch row of the crawl, in fetch order (the store's columns)."""
    for r in db.iterate(
        f"SELECT {FETCH_COLS} FROM fetches f JOIN urls u ON u.id = f.url_id ORDER BY f.id"
    ):
        yield fetch_row(r)


class URLLabelRow(NamedTuple):
    """What a ``--script`` crawl stored about a URL (``urls`` columns of migration v2)."""

    page_type: str
    category: str | None
    category_id: str | None
    category_name: str | None


def url_labels(db: CrawlReader) -> dict[int, URLLabelRow]:
    """``url id -> its label``, for the URLs a pattern script labelled."""
    return {
        int(r[0]): URLLabelRow(*r[1:])
        for r in db.query(
            "SELECT id, page_type, category, category_id, category_name FROM urls "
            "WHERE page_type IS NOT NULL"
        )
    }


# -- the CLI after a crawl (cli/_outcome.py), the demo -----------------------------------------
class SeedOutcome(NamedTuple):
    """A seed's last fetch in one batch, and its host's robots.txt state."""

    url: str
    state: str
    status: int | None
    error: str | None
    robots_state: str | None


def seed_outcomes(db: CrawlReader, batch: int) -> list[SeedOutcome]:
    """The seeds (depth 0) of ``batch``, each with its last fetch, in URL order."""
    return [
        SeedOutcome(*r)
        for r in db.query(
            "SELECT u.url, f.state, f.status, f.error, h.robots_state FROM fetches f "
            "JOIN urls u ON u.id = f.url_id LEFT JOIN hosts h ON h.name = u.host "
            "WHERE f.id IN (SELECT max(id) FROM fetches WHERE batch = ? GROUP BY url_id) "
            "AND u.depth = 0 ORDER BY u.id",
            (batch,),
        )
    ]


def max_depth(db: CrawlReader) -> int | None:
    """The depth of the deepest URL the crawl knows (``None``: it knows none)."""
    [(depth,)] = db.query("SELECT max(depth) FROM urls")
    return None if depth is None else int(depth)


@dataclass(frozen=True, slots=True)
class FirstCrawl:
    """A crawl directory's DB, as ``crawl`` checks it before starting over (crawl/resume.py)."""

    ended: bool  # its one batch ended
    seeds: int  # fetches of seeds
    answered: int  # ... that a server answered
    responses: int  # fetches of any URL that a server answered


def first_crawl(db_path: Path) -> FirstCrawl | None:
    """What ``crawl.db`` at ``db_path`` holds, read-only (a check, never a migration), when
    it holds a single batch; ``None`` when it holds more, or is not a readable crawl DB."""
    try:
        uri = db_path.resolve().as_uri() + "?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
            batches = conn.execute("SELECT ended_at FROM crawls").fetchall()
            if len(batches) != 1:
                return None
            seeds, answered = conn.execute(
                "SELECT count(*), count(f.status) FROM fetches f "
                "JOIN urls u ON u.id = f.url_id WHERE u.depth = 0"
            ).fetchone()
            (responses,) = conn.execute(
                "SELECT count(*) FROM fetches WHERE status IS NOT NULL"
            ).fetchone()
    except sqlite3.Error:
        return None
    return FirstCrawl(batches[0][0] is not None, int(seeds), int(answered), int(responses))

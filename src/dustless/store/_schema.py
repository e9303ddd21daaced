"""The crawl DB schema, as an ordered list of migrations (ARCHITECTURE: "Schema changes are
migrations, not rewrites").

``PRAGMA user_version`` holds the number of migrations applied. A store opens a DB, applies
every migration past that number inside one transaction each, and refuses a DB written by a
newer dustless (a higher number than it knows). Never edit a released migration: append one.

Seed 004 §2 keeps two kinds of table — one for seeds (id, URL, URL hash, content hash, party
time, network state) and one for documents (id, URL, URL hash, content hash, depth, download
time, MIME, file, state). We split the document table into ``urls`` (one row per identity:
what URL-seen needs) and ``fetches`` (one row per fetch, every fetch kept: what statistics and
recrawls need). This is SQLite's SQL (``PRAGMA``, SQLite triggers, sums of comparisons): a
PostgreSQL store keeps twin migrations of its own, with the same tables and columns
(``tests/store/test_schema_drift.py`` fails when they drift). What must be portable is the
readers' SQL (``dustless.store.CrawlReader``, docs/storage.md).
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration"]

Migration = tuple[str, ...]  # statements run in one transaction

_V1: Migration = (
    # One row per batch (004 §4 "일괄 수집"); a resume continues the open batch.
    """CREATE TABLE crawls (
        batch       INTEGER PRIMARY KEY,
        started_at  REAL NOT NULL,
        ended_at    REAL,
        batch_time  REAL NOT NULL,
        config      TEXT NOT NULL,
        resumes     INTEGER NOT NULL DEFAULT 0
    )""",
    # 004 §2: the robot keeps each site's IP and robots rules and reuses them for the party.
    """CREATE TABLE hosts (
        name               TEXT PRIMARY KEY,
        ip                 TEXT,
        robots_state       TEXT,
        robots_fetched_at  REAL,
        crawl_delay        REAL,
        sitemaps           TEXT NOT NULL DEFAULT '[]'
    )""",
    # 004 §2 seed table: id, URL, URL hash, content hash of the seed document, party time,
    # network state of the seed document.
    """CREATE TABLE seeds (
        id               INTEGER PRIMARY KEY,
        url              TEXT NOT NULL,
        identity         TEXT NOT NULL,
        url_hash         INTEGER NOT NULL,
        host             TEXT NOT NULL,
        content_sha1     TEXT,
        state            TEXT,
        party_seconds    REAL,
        discovered_from  INTEGER,
        created_batch    INTEGER
    )""",
    "CREATE UNIQUE INDEX seeds_identity ON seeds (identity)",
    # One row per URL identity. The UNIQUE index is the authority behind the Bloom filter.
    """CREATE TABLE urls (
        id         INTEGER PRIMARY KEY,
        url        TEXT NOT NULL,
        identity   TEXT NOT NULL,
        host       TEXT NOT NULL,
        depth      INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        seed_id    INTEGER,
        parent_id  INTEGER,
        priority   INTEGER NOT NULL DEFAULT 0,
        state      TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX urls_identity ON urls (identity)",
    # Partial indexes: only queued rows are indexed, so claiming stays cheap however many
    # URLs are done; the order is priority, then breadth-first by depth (004 §2), then
    # discovery order.
    "CREATE INDEX urls_queued ON urls (priority DESC, depth, id) WHERE state = 'queued'",
    "CREATE INDEX urls_queued_host ON urls (host, priority DESC, depth, id) WHERE state = 'queued'",
    # Every fetch kept (ARCHITECTURE "Storage"), with the batch it belongs to.
    """CREATE TABLE fetches (
        id              INTEGER PRIMARY KEY,
        url_id          INTEGER NOT NULL REFERENCES urls (id),
        batch           INTEGER NOT NULL,
        fetched_at      REAL NOT NULL,
        state           TEXT NOT NULL,
        status          INTEGER,
        mime            TEXT,
        size_raw        INTEGER,
        size_stored     INTEGER,
        elapsed         REAL,
        connect_time    REAL,
        ttfb            REAL,
        content_sha1    TEXT,
        revisit_of      INTEGER,
        links_h         INTEGER NOT NULL DEFAULT 0,
        links_a         INTEGER NOT NULL DEFAULT 0,
        links_f         INTEGER NOT NULL DEFAULT 0,
        links_internal  INTEGER NOT NULL DEFAULT 0,
        links_external  INTEGER NOT NULL DEFAULT 0,
        location        TEXT,
        etag            TEXT,
        last_modified   TEXT,
        warc_file       TEXT,
        warc_offset     INTEGER,
        warc_length     INTEGER,
        warc_record_id  TEXT,
        req_file        TEXT,
        req_offset      INTEGER,
        req_length      INTEGER,
        error           TEXT
    )""",
    "CREATE INDEX fetches_url ON fetches (url_id)",
    "CREATE INDEX fetches_batch ON fetches (batch)",
    "CREATE INDEX fetches_sha1 ON fetches (content_sha1) WHERE content_sha1 IS NOT NULL",
)

# Seed 002 pattern scripts (``--script``): every URL's page type (§3.2: list, detail, other) and
# category — the pattern's ``class``, the category instance id (§3.4.2) and its name read from
# anchor text and pagination (§4.1, Figs. 13-14) — and, per fetched page of a scripted site,
# its links before and after filtering (§3.4.1, Table 2). NULL: no script said anything.
_V2: Migration = (
    "ALTER TABLE urls ADD COLUMN page_type TEXT",
    "ALTER TABLE urls ADD COLUMN category TEXT",
    "ALTER TABLE urls ADD COLUMN category_id TEXT",
    "ALTER TABLE urls ADD COLUMN category_name TEXT",
    "ALTER TABLE fetches ADD COLUMN links_before INTEGER",
    "ALTER TABLE fetches ADD COLUMN links_after INTEGER",
)

# Many workers on one crawl, and what a crash must not lose or repeat (ARCHITECTURE "Many
# machines"; docs/storage.md):
# * ``workers``: who takes part, where its WARC files are (``dir``), when it was last seen.
# * ``host_work``: one row per politeness key (authority) with URLs queued: how many, and
#   the worker holding its lease until ``lease_until``. A host has one owner at a time, so
#   politeness (one request at a time, the delay) holds across workers; ``ready_at`` (wall
#   clock) carries the politeness clock from one owner to the next. ``queued`` is kept by
#   triggers on ``urls``, so no code path can let the counts drift from the rows.
# * ``sites``: the parties (004 §2) and the URLs admitted per site: ``--max-sites``,
#   ``--max-pages`` and ``--max-pages-per-site`` are decided here, by every worker alike.
# * ``robots``: each origin's robots.txt (RFC 9309 §2.3 keys it by scheme, host and port),
#   reused within its 24 hours (§2.4) by a resumed crawl or another worker.
# * ``warc_files``: per WARC file, where the last record a commit covered ends; a resume cuts
#   anything after it (records no row points to), so the files and the DB stay in step.
#   Files of older crawls have no row: only a torn last record is cut there, as before.
# * ``fetches.worker``: which worker made a fetch (and so where its WARC records are).
_V3: Migration = (
    """CREATE TABLE workers (
        name        TEXT PRIMARY KEY,
        dir         TEXT NOT NULL,
        machine     TEXT,
        pid         INTEGER,
        started_at  REAL NOT NULL,
        seen_at     REAL NOT NULL
    )""",
    """CREATE TABLE host_work (
        host         TEXT PRIMARY KEY,
        queued       INTEGER NOT NULL DEFAULT 0,
        owner        TEXT,
        lease_until  REAL,
        ready_at     REAL NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX host_work_queued ON host_work (lease_until) WHERE queued > 0",
    "CREATE INDEX host_work_owner ON host_work (owner) WHERE owner IS NOT NULL",
    # Every host with work, in-flight claims included (a resume returns those to the queue).
    """INSERT INTO host_work (host, queued)
        SELECT host, sum(state = 'queued') FROM urls
        WHERE state IN ('queued', 'in-flight') GROUP BY host""",
    """CREATE TRIGGER urls_queued_insert AFTER INSERT ON urls WHEN NEW.state = 'queued'
    BEGIN
        INSERT INTO host_work (host, queued) VALUES (NEW.host, 1)
        ON CONFLICT (host) DO UPDATE SET queued = queued + 1;
    END""",
    """CREATE TRIGGER urls_queued_update AFTER UPDATE OF state ON urls
    WHEN (OLD.state = 'queued') != (NEW.state = 'queued')
    BEGIN
        INSERT INTO host_work (host, queued)
        VALUES (NEW.host, CASE WHEN NEW.state = 'queued' THEN 1 ELSE -1 END)
        ON CONFLICT (host) DO UPDATE SET queued = queued + excluded.queued;
    END""",
    """CREATE TABLE sites (
        site     TEXT PRIMARY KEY,
        seed_id  INTEGER,
        pages    INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE robots (
        origin      TEXT PRIMARY KEY,
        status      INTEGER,
        body        BLOB NOT NULL,
        fetched_at  REAL NOT NULL
    )""",
    """CREATE TABLE warc_files (
        name           TEXT PRIMARY KEY,
        worker         TEXT,
        committed_end  INTEGER NOT NULL
    )""",
    "ALTER TABLE fetches ADD COLUMN worker TEXT",
)

# Near-duplicate content identity and fallback spellings (docs/evaluation.md, crawling.md):
# per fetch, the MinHash fingerprint of the document's visible text (NULL: none, e.g. a
# failed or truncated fetch, a non-text type, or a payload already stored); per identity,
# the other spellings the crawl met (at most 8, in the order met), which the crawler tries
# when the spelling it fetched gave no document.
_V4: Migration = (
    "ALTER TABLE fetches ADD COLUMN content_fp BLOB",
    """CREATE TABLE spellings (
        identity  TEXT NOT NULL,
        url       TEXT NOT NULL,
        PRIMARY KEY (identity, url)
    )""",
)

# URL sources: sitemaps and feeds (docs/sitemaps.md).
# * ``fetches.source_state``: how reading a sitemap or feed ended (``SourceState``: ok, bomb,
#   malformed, dtd, url-limit, …); NULL for pages and for sources not read (a 404, a network
#   state). The network state stays what the transfer did (seed 004 Fig. 3), so a bomb served
#   with 200 reads ``code`` 200 there and ``bomb`` here: two questions, two columns.
# * ``url_dates``: what a sitemap (``<lastmod>``, ``<changefreq>``) or a feed (the entry's
#   date) said about a URL, one row per URL and batch (the last reading of the batch), with
#   the source's url id. Kept per batch, so ``changes`` can compare what lastmod said between
#   two downloads with what the content did, and a recrawl can see that lastmod moved since
#   a page's last download (``recrawl/_plan.py``).
# * ``urls_sources``: a host's sitemaps and feeds, counted when an index lists more (the
#   per-host bound on sitemaps), without a scan of every URL.
_V5: Migration = (
    "ALTER TABLE fetches ADD COLUMN source_state TEXT",
    """CREATE TABLE url_dates (
        url_id      INTEGER NOT NULL,
        batch       INTEGER NOT NULL,
        lastmod     REAL,
        changefreq  TEXT,
        source_id   INTEGER,
        PRIMARY KEY (url_id, batch)
    )""",
    "CREATE INDEX urls_sources ON urls (host, kind) WHERE kind IN ('m', 'n')",
)

# Learning while crawling (docs/learning.md): per fetch, the canonical URL the page declared
# (``<link rel="canonical">`` or the HTTP ``Link: <…>; rel="canonical"`` header, RFC 6596) —
# evidence, never an order; the rules learned per host (authority) from content, redirects and
# those declarations, each with its evidence, when it was learned and, if so, when and why it
# was retracted; and what each rule merged, so that a retraction can admit again every URL it
# kept from being fetched (``url_id``: a queued row the rule merged, now in state ``merged``;
# ``checked``: a merge fetched anyway, to check the rule).
_V6: Migration = (
    "ALTER TABLE fetches ADD COLUMN canonical TEXT",
    """CREATE TABLE learned_rules (
        id               INTEGER PRIMARY KEY,
        host             TEXT NOT NULL,
        element          TEXT NOT NULL,
        spec             TEXT NOT NULL,
        support          INTEGER NOT NULL,
        pairs            INTEGER NOT NULL,
        differ           INTEGER NOT NULL,
        evidence         TEXT NOT NULL,
        learned_at       REAL NOT NULL,
        learned_fetches  INTEGER NOT NULL,
        worker           TEXT,
        retracted_at     REAL,
        reason           TEXT
    )""",
    "CREATE UNIQUE INDEX learned_rules_spec ON learned_rules (host, spec)",
    """CREATE TABLE learned_merges (
        rule_id    INTEGER NOT NULL,
        base       TEXT NOT NULL,
        url        TEXT NOT NULL,
        host       TEXT NOT NULL,
        site       TEXT NOT NULL,
        depth      INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        seed_id    INTEGER,
        parent_id  INTEGER,
        external   INTEGER NOT NULL DEFAULT 0,
        url_id     INTEGER,
        checked    INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (rule_id, base)
    )""",
)

# Nothing changes on SQLite (its triggers run per row). The number keeps the two stores'
# versions in step: PostgreSQL's seventh migration rewrites its update trigger
# (``_pg_schema.py``), so a version means one schema on both.
_V7: Migration = ()

# PostgreSQL's eighth migration gives each host lease an epoch, so that a worker's writes
# under a lease it lost are refused (``_pg_schema.py``). SQLite has the column too, to keep
# one schema, and never needs it: one process holds every host.
_V8: Migration = ("ALTER TABLE host_work ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0",)

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8)
SCHEMA_VERSION = len(MIGRATIONS)

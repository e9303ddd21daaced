"""The crawl store: ``OUTDIR/crawl.db`` (SQLite, WAL) and ``OUTDIR/warc/*.warc.gz`` (WARC 1.1).

The engine's loop, with the calls that matter for crash safety (docs/storage.md)::

    store = SQLiteStore(outdir)                          # migrates the schema if needed
    batch = store.resume_batch() or store.start_batch(config_json, now)
    store.requeue_in_flight()                            # after a crash
    warc = WarcWriter(outdir / "warc", exact_ends=store.warc_committed_ends())  # cuts the tail

    leases = store.lease_hosts(100, now=wall, ttl=60)    # hosts are leased to one worker
    urls = store.claim_queued(500, hosts=leased, per_host=20)   # a window, not the queue
    ... fetch ...
    refs = warc.write_response(url, head, body, fetched_at=t, request=raw_req)
    store.record_fetches([FetchRecord(url_id, t, "OK", warc=refs.response, ...)])
    store.admit([AdmitURL(...), ...], limits, batch)     # found links, a batch per second
    ... at least once a second:
    durable_commit(store, warc)                          # fsync WARC, then commit the DB

``docs/storage.md`` documents the directory layout, the schema, the WARC records and the
guarantees; ``docs/internals.md`` the signatures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dustless.store._cdxj import CdxjEntry, cdx_timestamp, entry_from_head, scan_entries
from dustless.store._index import INDEX_DIR, CdxjIndex
from dustless.store._learn_types import LearnedRuleRow, MergeRow
from dustless.store._protocol import (
    CrawlStore,
    FetchStore,
    LearnStore,
    SiteStore,
    SpellingStore,
    StoreSession,
    URLStore,
    WorkStore,
)
from dustless.store._reader import (
    WARC_DIR,
    BatchInfo,
    CrawlDB,
    CrawlReader,
    open_crawl,
    worker_dir_message,
)
from dustless.store._reads import (
    EvaluationRow,
    FirstCrawl,
    HistoryRow,
    LearnedRead,
    ObservationRow,
    SeedOutcome,
    URLLabelRow,
    canonical_declarations,
    evaluation_rows,
    export_fetch_rows,
    fetch_tally,
    first_crawl,
    history_rows,
    latest_lastmods,
    learned_rule_reads,
    max_depth,
    merge_counts,
    observation_rows,
    payload_fingerprints,
    seed_outcomes,
    soft404_count,
    url_labels,
)
from dustless.store._recover import (
    RecoveryResult,
    WarcRecord,
    iter_records,
    read_record,
    recover_warc,
)
from dustless.store._rows import FETCH_COLS, fetch_row
from dustless.store._schema import SCHEMA_VERSION
from dustless.store._sqlite import LOCAL_WORKER, SQLiteStore, url_hash
from dustless.store._stat_reads import CanonicalReads, StatReads, StatTotals, stat_reads
from dustless.store._surt import surt_key
from dustless.store._types import (
    DB_NAME,
    PROBE_KIND,
    PROBE_PREFIX,
    URL_KINDS,
    AdmitResult,
    Admitted,
    AdmitURL,
    Batch,
    ContentRef,
    FetchRecord,
    FetchRow,
    HostInfo,
    HostLease,
    Limits,
    NewSeed,
    NewURL,
    RobotsRow,
    SeedRow,
    SeedUpdate,
    StoredURL,
    URLDate,
    URLLabel,
    URLState,
    Verdict,
    WarcRef,
    WorkerRow,
    WorkLeft,
)
from dustless.store._warc import (
    AS_SENT,
    BODIES,
    DECODED,
    DEFAULT_MAX_SIZE,
    REVISIT_PROFILE,
    TRUNCATIONS,
    ResponseRefs,
    WarcWriter,
    sha1_digest,
    truncation,
    warc_date,
)

__all__ = [
    "AS_SENT",
    "BODIES",
    "DB_NAME",
    "DECODED",
    "DEFAULT_MAX_SIZE",
    "FETCH_COLS",
    "INDEX_DIR",
    "LOCAL_WORKER",
    "PROBE_KIND",
    "PROBE_PREFIX",
    "REVISIT_PROFILE",
    "SCHEMA_VERSION",
    "TRUNCATIONS",
    "URL_KINDS",
    "WARC_DIR",
    "AdmitResult",
    "AdmitURL",
    "Admitted",
    "Batch",
    "BatchInfo",
    "CanonicalReads",
    "CdxjEntry",
    "CdxjIndex",
    "ContentRef",
    "CrawlDB",
    "CrawlReader",
    "CrawlStatus",
    "CrawlStore",
    "EvaluationRow",
    "FetchRecord",
    "FetchRow",
    "FetchStore",
    "FirstCrawl",
    "HistoryRow",
    "HostInfo",
    "HostLease",
    "LearnStore",
    "LearnedRead",
    "LearnedRuleRow",
    "Limits",
    "MergeRow",
    "NewSeed",
    "NewURL",
    "ObservationRow",
    "PostgresCrawlStore",
    "RecoveryResult",
    "ResponseRefs",
    "RobotsRow",
    "SQLiteStore",
    "SeedOutcome",
    "SeedRow",
    "SeedUpdate",
    "SiteStore",
    "SpellingStore",
    "StatReads",
    "StatTotals",
    "StoreSession",
    "StoredURL",
    "URLDate",
    "URLLabel",
    "URLLabelRow",
    "URLState",
    "URLStore",
    "Verdict",
    "WarcRecord",
    "WarcRef",
    "WarcWriter",
    "WorkLeft",
    "WorkStore",
    "WorkerRow",
    "WorkerStatus",
    "canonical_declarations",
    "cdx_timestamp",
    "display_dsn",
    "durable_commit",
    "entry_from_head",
    "evaluation_rows",
    "export_fetch_rows",
    "fetch_row",
    "fetch_tally",
    "first_crawl",
    "history_rows",
    "iter_records",
    "latest_lastmods",
    "learned_rule_reads",
    "max_depth",
    "merge_counts",
    "observation_rows",
    "one_line",
    "open_crawl",
    "payload_fingerprints",
    "read_record",
    "recover_warc",
    "scan_entries",
    "seed_outcomes",
    "sha1_digest",
    "soft404_count",
    "sqlite_params",
    "stat_reads",
    "surt_key",
    "truncation",
    "url_hash",
    "url_labels",
    "warc_date",
    "worker_dir_message",
]

if TYPE_CHECKING:
    from dustless.store._pg import PostgresCrawlStore
    from dustless.store._pg_conn import display_dsn, one_line, sqlite_params
    from dustless.store._pg_read import CrawlStatus, WorkerStatus

# The PostgreSQL store is imported when first used (PEP 562): its driver takes 0.2 s to
# import, which a crawl on SQLite (and every command line check) should not pay.
_LAZY = {
    "PostgresCrawlStore": "dustless.store._pg",
    "CrawlStatus": "dustless.store._pg_read",
    "WorkerStatus": "dustless.store._pg_read",
    "display_dsn": "dustless.store._pg_conn",
    "one_line": "dustless.store._pg_conn",
    "sqlite_params": "dustless.store._pg_conn",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dustless.store' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def durable_commit(store: CrawlStore, *writers: WarcWriter) -> None:
    """fsync every WARC writer, then commit the DB: the order that keeps the DB from ever
    pointing at a WARC record that is not on disk (docs/storage.md, "Crash safety")."""
    for w in writers:
        w.flush_durable()
    store.commit()

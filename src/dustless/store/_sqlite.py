"""``SQLiteStore``: the crawl DB of one machine, ``OUTDIR/crawl.db`` in WAL mode.

Why these pragmas: WAL lets readers (``dustless stats`` on a running crawl) proceed while the
crawler writes; ``synchronous=NORMAL`` in WAL mode keeps every commit across a process crash
(kill -9; the OS holds the WAL pages) and only risks the last commits on power loss — and even
then the DB loses pointers, never gains ones to WARC bytes that are missing, because WARC
records are fsynced before the commit that points at them.

Writes open one ``BEGIN IMMEDIATE`` transaction lazily and ``commit()`` ends it, so a batch of
URLs and fetches costs one fsync-free commit per second, not one per row. All methods hold a
lock, so the engine may call them from a worker thread (``asyncio.to_thread``). The read
queries (URLs by id, fetches, contents, WARC ends) live in ``_sqlite_read.py``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from dustless.errors import StoreCorrupt, StoreError, StoreLocked
from dustless.store._protocol import CrawlStore
from dustless.store._rows import (
    FETCH_INSERT,
    MAX_PARAMS,
    URL_COLS,
    chunks,
    claim_order,
    fetch_params,
    url_hash,
    url_row,
)
from dustless.store._schema import MIGRATIONS, Migration
from dustless.store._sqlite_learn import SQLiteLearn
from dustless.store._sqlite_read import SQLiteReads
from dustless.store._sqlite_work import SQLiteWork
from dustless.store._types import (
    DB_NAME,
    Batch,
    FetchRecord,
    HostInfo,
    NewSeed,
    NewURL,
    SeedRow,
    SeedUpdate,
    StoredURL,
    URLLabel,
    URLState,
)

__all__ = ["LOCAL_WORKER", "SQLiteStore", "url_hash"]

LOCAL_WORKER = "local"


class SQLiteStore(SQLiteReads, SQLiteWork, SQLiteLearn):
    """The ``CrawlStore`` on SQLite. ``SQLiteStore(OUTDIR)`` opens or creates ``OUTDIR/crawl.db``.

    ``path`` may also name the DB file itself (``.db``) or be ``":memory:"`` for tests.
    ``worker`` names the process in leases and fetch rows (one machine: ``local``).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout: float = 10.0,
        cache_mb: int = 64,
        migrations: Sequence[Migration] = MIGRATIONS,
        worker: str = LOCAL_WORKER,
    ) -> None:
        p = Path(path)
        if str(path) != ":memory:" and p.suffix != ".db":
            p.mkdir(parents=True, exist_ok=True)
            p = p / DB_NAME
        self.path = p
        self._lock = threading.RLock()
        self._in_tx = False
        self._batch: int | None = None
        self._worker = worker
        try:
            self._db = sqlite3.connect(
                str(p), timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(f"PRAGMA cache_size=-{int(cache_mb) * 1024}")
            self._db.execute("PRAGMA foreign_keys=OFF")  # checked by the engine's flow
            self._migrate(migrations)
        except sqlite3.Error as exc:
            raise self._translate(exc) from exc

    # -- plumbing ----------------------------------------------------------------------------
    @staticmethod
    def _translate(exc: sqlite3.Error) -> StoreError:
        msg = str(exc)
        if "locked" in msg or "busy" in msg:
            return StoreLocked(f"crawl DB is locked by another process: {msg}")
        if isinstance(exc, sqlite3.DatabaseError) and (
            "malformed" in msg or "not a database" in msg
        ):
            return StoreCorrupt(f"crawl DB is corrupt: {msg}")
        return StoreError(f"crawl DB error: {msg}")

    def _migrate(self, migrations: Sequence[Migration]) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version > len(migrations):
            raise StoreError(
                f"crawl DB schema version {version} is newer than this dustless knows "
                f"({len(migrations)}); upgrade dustless"
            )
        for number in range(version, len(migrations)):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in migrations[number]:
                    self._db.execute(statement)
                # PRAGMA takes no parameters; the value is our own integer.
                self._db.execute(f"PRAGMA user_version = {number + 1}")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    @property
    def worker(self) -> str:
        return self._worker

    @property
    def shared(self) -> bool:
        # One machine, one crawling process at a time (the WARC files are locked): what
        # this process has not seen, no other worker has stored meanwhile.
        return False

    def watch_outages(self, hook: Callable[[float | None], None]) -> None:
        """A file on this machine is never away: nothing to watch."""

    def maybe_away(self) -> bool:
        return False

    def reach(self) -> None:
        """A file on this machine is always there."""

    def impatient(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _write(self) -> sqlite3.Connection:
        """The connection inside an open write transaction (begun lazily)."""
        if not self._in_tx:
            self._db.execute("BEGIN IMMEDIATE")
            self._in_tx = True
        return self._db

    def commit(self) -> None:
        with self._lock:
            if self._in_tx:
                self._db.execute("COMMIT")
                self._in_tx = False

    def rollback(self) -> None:
        """Drop uncommitted writes (tests; the engine never needs it)."""
        with self._lock:
            if self._in_tx:
                self._db.execute("ROLLBACK")
                self._in_tx = False

    def close(self) -> None:
        with self._lock:
            self.commit()
            self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        # As sqlite3's own context manager: commit on success, roll back on an exception
        # (never persist half of what a failing block meant to write).
        if exc_type is not None:
            self.rollback()
        self.close()

    # -- batches ----------------------------------------------------------------------------
    def start_batch(self, config: str, now: float, batch_time: float | None = None) -> Batch:
        with self._lock:
            db = self._write()
            (last,) = db.execute("SELECT coalesce(max(batch), 0) FROM crawls").fetchone()
            number = int(last) + 1
            bt = now if batch_time is None else batch_time
            db.execute(
                "INSERT INTO crawls (batch, started_at, batch_time, config) VALUES (?, ?, ?, ?)",
                (number, now, bt, config),
            )
            self._batch = number
            return Batch(number, now, bt, config)

    def resume_batch(self) -> Batch | None:
        with self._lock:
            row = self._db.execute(
                "SELECT batch, started_at, batch_time, config, ended_at FROM crawls "
                "ORDER BY batch DESC LIMIT 1"
            ).fetchone()
            if row is None or row[4] is not None:
                return None
            self._write().execute(
                "UPDATE crawls SET resumes = resumes + 1 WHERE batch = ?", (row[0],)
            )
            self._batch = row[0]
            return Batch(*row)

    def end_batch(self, number: int, now: float) -> None:
        with self._lock:
            self._write().execute(
                "UPDATE crawls SET ended_at = coalesce(ended_at, ?) WHERE batch = ?", (now, number)
            )

    def batches(self) -> list[Batch]:
        with self._lock:
            rows = self._db.execute(
                "SELECT batch, started_at, batch_time, config, ended_at FROM crawls ORDER BY batch"
            ).fetchall()
        return [Batch(*r) for r in rows]

    # -- URLs --------------------------------------------------------------------------------
    def add_urls(self, batch: Sequence[NewURL]) -> list[bool]:
        if not batch:
            return []
        inserted: set[str] = set()
        with self._lock:
            db = self._write()
            # Multi-row INSERT … ON CONFLICT DO NOTHING RETURNING: one statement per ~3000
            # URLs, and RETURNING names exactly the identities that were new.
            for part in chunks(batch, MAX_PARAMS // 9):
                sql = (
                    "INSERT INTO urls (url, identity, host, depth, kind, seed_id, parent_id, "
                    "priority, state) VALUES "
                    + ",".join(["(?,?,?,?,?,?,?,?,?)"] * len(part))
                    + " ON CONFLICT (identity) DO NOTHING RETURNING identity"
                )
                params: list[Any] = []
                for u in part:
                    params += (
                        u.url,
                        u.identity,
                        u.host,
                        u.depth,
                        u.kind.value,
                        u.seed_id,
                        u.parent_id,
                        u.priority,
                        u.state.value,
                    )
                inserted.update(r[0] for r in db.execute(sql, params))
            # The first occurrence of a new identity in the batch is the inserted one.
            result = []
            for u in batch:
                if u.identity in inserted:
                    inserted.discard(u.identity)
                    result.append(True)
                else:
                    result.append(False)
        return result

    def contains_identities(self, identities: Iterable[str]) -> set[str]:
        ids = list(dict.fromkeys(identities))
        found: set[str] = set()
        with self._lock:
            for part in chunks(ids, 900):
                sql = f"SELECT identity FROM urls WHERE identity IN ({','.join('?' * len(part))})"
                found.update(r[0] for r in self._db.execute(sql, part))
        return found

    def iter_identities(self, chunk: int = 50_000) -> Iterator[list[str]]:
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, identity FROM urls WHERE id > ? ORDER BY id LIMIT ?", (last, chunk)
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [r[1] for r in rows]

    def claim_queued(
        self, limit: int, *, hosts: Sequence[str] | None = None, per_host: int | None = None
    ) -> list[StoredURL]:
        if limit <= 0:
            return []
        pick = (
            "SELECT id FROM urls WHERE state = 'queued'{where} "
            "ORDER BY priority DESC, depth, id LIMIT ?"
        )
        # One UPDATE … RETURNING per host (or one in all): the claim is a single statement,
        # so two workers sharing the DB can never claim the same URL.
        claim = f"UPDATE urls SET state = 'in-flight' WHERE id IN ({pick}) RETURNING {URL_COLS}"
        rows: list[StoredURL] = []
        with self._lock:
            db = self._write()
            if hosts is None:
                rows = [url_row(r) for r in db.execute(claim.format(where=""), (limit,))]
                rows.sort(key=claim_order)
            else:
                each = limit if per_host is None else per_host
                for host in hosts:
                    want = min(each, limit - len(rows))
                    if want <= 0:
                        break
                    got = [
                        url_row(r)
                        for r in db.execute(claim.format(where=" AND host = ?"), (host, want))
                    ]
                    got.sort(key=claim_order)
                    rows += got
        return rows

    def queued(self, after_id: int = 0, limit: int = 1000) -> list[StoredURL]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {URL_COLS} FROM urls WHERE state = 'queued' AND id > ? "
                "ORDER BY id LIMIT ?",
                (after_id, limit),
            ).fetchall()
        return [url_row(r) for r in rows]

    def set_url_state(self, ids: Sequence[int], state: URLState) -> None:
        with self._lock:
            db = self._write()
            for part in chunks(list(ids), 900):
                db.execute(
                    f"UPDATE urls SET state = ? WHERE id IN ({','.join('?' * len(part))})",
                    [state.value, *part],
                )

    def label_urls(self, labels: Sequence[URLLabel]) -> None:
        if not labels:
            return
        with self._lock:
            self._write().executemany(
                "UPDATE urls SET page_type = ?, category = coalesce(?, category), "
                "category_id = coalesce(?, category_id), "
                "category_name = coalesce(?, category_name) WHERE identity = ?",
                [
                    (x.page_type, x.category, x.category_id, x.category_name, x.identity)
                    for x in labels
                ],
            )

    # -- fetches -----------------------------------------------------------------------------
    def record_fetches(self, batch: Sequence[FetchRecord]) -> list[int]:
        if not batch:
            return []
        with self._lock:
            if self._batch is None:
                (current,) = self._db.execute("SELECT max(batch) FROM crawls").fetchone()
                self._batch = current
            db = self._write()
            rows = []
            for f in batch:
                number = f.batch if f.batch is not None else self._batch
                if number is None:
                    raise StoreError("record_fetches before start_batch: no batch is open")
                rows.append(fetch_params(f, number, self._worker))
            # We hold the write lock (BEGIN IMMEDIATE), so rowids of a rowid table are
            # handed out as max + 1, max + 2, …: the ids follow without a query per row.
            (first,) = db.execute("SELECT coalesce(max(id), 0) + 1 FROM fetches").fetchone()
            db.executemany(FETCH_INSERT, rows)
            (last,) = db.execute("SELECT max(id) FROM fetches").fetchone()
            if last != first + len(rows) - 1:
                raise StoreCorrupt("fetch ids were not assigned consecutively")
            ids = list(range(first, first + len(rows)))
            db.executemany(
                "UPDATE urls SET state = ? WHERE id = ?",
                [(f.url_state.value, f.url_id) for f in batch],
            )
        return ids

    # -- hosts and seeds ---------------------------------------------------------------------
    def update_hosts(self, batch: Sequence[HostInfo]) -> None:
        if not batch:
            return
        with self._lock:
            self._write().executemany(
                "INSERT OR REPLACE INTO hosts (name, ip, robots_state, robots_fetched_at, "
                "crawl_delay, sitemaps) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        h.name,
                        h.ip,
                        h.robots_state,
                        h.robots_fetched_at,
                        h.crawl_delay,
                        json.dumps(list(h.sitemaps)),
                    )
                    for h in batch
                ],
            )

    def hosts(self, names: Iterable[str] | None = None) -> dict[str, HostInfo]:
        cols = "name, ip, robots_state, robots_fetched_at, crawl_delay, sitemaps"
        with self._lock:
            if names is None:
                rows = self._db.execute(f"SELECT {cols} FROM hosts").fetchall()
            else:
                rows = []
                for part in chunks(list(dict.fromkeys(names)), 900):
                    marks = ",".join("?" * len(part))
                    rows += self._db.execute(
                        f"SELECT {cols} FROM hosts WHERE name IN ({marks})", part
                    ).fetchall()
        return {r[0]: HostInfo(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5]))) for r in rows}

    def add_seeds(self, batch: Sequence[NewSeed]) -> list[tuple[int, bool]]:
        out: list[tuple[int, bool]] = []
        with self._lock:
            db = self._write()
            for s in batch:
                cur = db.execute(
                    "INSERT INTO seeds (url, identity, url_hash, host, discovered_from, "
                    "created_batch) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (identity) DO NOTHING",
                    (
                        s.url,
                        s.identity,
                        url_hash(s.identity),
                        s.host,
                        s.discovered_from,
                        s.created_batch if s.created_batch is not None else self._batch,
                    ),
                )
                if cur.rowcount == 1:
                    out.append((int(cur.lastrowid or 0), True))
                else:
                    (sid,) = db.execute(
                        "SELECT id FROM seeds WHERE identity = ?", (s.identity,)
                    ).fetchone()
                    out.append((int(sid), False))
        return out

    def update_seeds(self, batch: Sequence[SeedUpdate]) -> None:
        with self._lock:
            self._write().executemany(
                "UPDATE seeds SET content_sha1 = coalesce(?, content_sha1), "
                "state = coalesce(?, state), party_seconds = coalesce(?, party_seconds) "
                "WHERE id = ?",
                [(s.content_sha1, s.state, s.party_seconds, s.id) for s in batch],
            )

    def seeds(self) -> list[SeedRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, url, identity, url_hash, host, content_sha1, state, party_seconds, "
                "discovered_from, created_batch FROM seeds ORDER BY id"
            ).fetchall()
        return [SeedRow(*r) for r in rows]

    # -- inspection ---------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """SQL on this SQLite file, for tests and debugging. Not part of ``CrawlStore``:
        nothing in dustless reads the crawl DB this way (the readers of ``analysis`` go
        through ``CrawlReader``)."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _translated(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Translate sqlite3's exceptions at the I/O edge (CONVENTIONS §7)."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except sqlite3.Error as exc:
            raise SQLiteStore._translate(exc) from exc

    return wrapper


for _name in (
    "commit", "rollback", "close", "start_batch", "resume_batch", "end_batch", "batches",
    "add_urls", "contains_identities", "claim_queued", "queued", "requeue_in_flight",
    "set_url_state", "urls_by_id", "url_counts", "record_fetches", "content_seen",
    "iter_content_sha1s", "last_fetches", "fetch_state_counts", "warc_ends", "update_hosts",
    "hosts", "add_seeds", "update_seeds", "seeds", "query", "label_urls", "admit",
    "rebuild_sites", "lease_hosts", "renew_leases", "release_hosts", "work_left", "robots",
    "put_robots", "warc_committed", "warc_committed_ends", "register_worker", "workers",
    "has_seeds", "category_names", "add_spellings", "count_kind", "record_dates", "collection_ids",
    # learning while crawling (_sqlite_learn.py)
    "add_learned_rules", "retract_learned_rules", "learned_rules", "add_merges", "merges_of",
    "drop_merges", "merge_counts", "queued_of_host", "rekey_urls",
):  # fmt: skip
    setattr(SQLiteStore, _name, _translated(getattr(SQLiteStore, _name)))


def _is_a_crawl_store(store: SQLiteStore) -> CrawlStore:
    return store  # mypy proves SQLiteStore implements the protocol

"""The store's named reads of a crawl (``dustless.store``: ``stat_reads``, ``history_rows`` …),
on SQLite and on PostgreSQL alike: one small crawl is written through the ``CrawlStore`` and
every read family answers the same rows from both readers (the PostgreSQL reader translates
the shared SQL, ``store/_pg_reader.py``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dustless.kinds import LinkKind
from dustless.store import (
    CrawlReader,
    CrawlStore,
    FetchRecord,
    HostInfo,
    LearnedRuleRow,
    MergeRow,
    NewSeed,
    NewURL,
    SQLiteStore,
    URLDate,
    URLLabel,
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
    open_crawl,
    payload_fingerprints,
    seed_outcomes,
    soft404_count,
    stat_reads,
    url_labels,
)

A, B = "aa" * 20, "bb" * 20


def _url(path: str, depth: int, host: str = "a.test") -> NewURL:
    url = f"http://{host}{path}"
    return NewURL(url, url, host, depth, seed_id=1)


def _write(store: CrawlStore) -> None:
    """Batch 1: a seed and four pages; batch 2 fetches the seed again."""
    store.start_batch('{"policy": "standard"}', now=1000.0)
    store.add_seeds([NewSeed("http://a.test/", "http://a.test/", "a.test")])
    store.add_urls([_url("/", 0), _url("/p", 1), _url("/r", 1), _url("/s", 1), _url("/g", 2)])
    ids = {u.url.removeprefix("http://a.test"): u.id for u in store.claim_queued(10)}
    store.update_hosts([HostInfo("a.test", "127.0.0.1", "parsed")])

    def fetch(path: str, t: float, state: str, **kw: Any) -> FetchRecord:
        return FetchRecord(ids[path], t, state, **kw)  # type: ignore[arg-type]

    store.record_fetches(
        [
            fetch("/", 1001.0, "OK", status=200, size_raw=1000, content_sha1=A, links_a=3,
                  links_internal=3, content_fp=b"\x01" * 8, canonical="http://b.test/x"),
            fetch("/p", 1002.0, "hTim", error="timed out"),
            fetch("/p", 1003.0, "OK", status=200, size_raw=300_000, content_sha1=B, links_h=1,
                  links_before=10, links_after=4),
            fetch("/r", 1004.0, "code", status=301, location="http://a.test/p"),
            fetch("/s", 1005.0, "soft404", status=200, content_sha1="cc" * 20),
            fetch("/g", 1006.0, "robots"),
        ]
    )  # fmt: skip
    store.label_urls([URLLabel("http://a.test/p", "detail", "news", "7", "News")])
    store.record_dates([URLDate("http://a.test/p", 1, 500.0, None, ids["/"])])
    store.end_batch(1, now=1010.0)
    store.start_batch('{"policy": "standard"}', now=2000.0)
    store.record_fetches([fetch("/", 2001.0, "OK", status=200, size_raw=10, content_sha1=A)])
    store.record_dates([URLDate("http://a.test/p", 2, 900.0, None, ids["/"])])
    (rid,) = store.add_learned_rules(
        [LearnedRuleRow("a.test", "query", '{"drop": "x"}', 3, 4, 1, "content 4", 1500.0, 5)]
    )
    store.add_merges(
        [
            MergeRow(rid, "http://a.test/p?x=1", "http://a.test/p?x=1", "a.test", "a.test", 1,
                     LinkKind.ANCHOR),
            MergeRow(rid, "http://a.test/p?x=2", "http://a.test/p?x=2", "a.test", "a.test", 1,
                     LinkKind.ANCHOR, checked=True),
        ]
    )  # fmt: skip
    store.end_batch(2, now=2010.0)
    store.commit()


@pytest.fixture(params=["sqlite", "postgresql"])
def reader(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CrawlReader]:
    """The small crawl, read through ``open_crawl`` (its directory, or ``--db``)."""
    if request.param == "sqlite":
        store: Any = SQLiteStore(tmp_path / "crawl.db")
        _write(store)
        store.close()
        with open_crawl(tmp_path) as db:
            yield db
        return
    from dustless.store import PostgresCrawlStore

    server = request.getfixturevalue("postgres")
    dsn = server.new_database()
    try:
        store = PostgresCrawlStore(dsn, worker="w1")
        _write(store)
        store.close()
        with open_crawl(None, db=dsn) as db:
            yield db
    finally:
        with contextlib.suppress(Exception):
            server.drop_database(dsn)


def _stats(db: CrawlReader, batches: tuple[int, ...], **kw: Any) -> Any:
    options: dict[str, Any] = {
        "gates": ("NULL", "filtered", "iErr", "robots"),
        "classes": {},
        "seed_prefix": lambda url: url.split("://", 1)[-1].rstrip("/"),
        "size_bucket": 256 * 1024,
        "size_buckets": 8,
        "bucket_seconds": lambda span: 10.0,
        "filtering": False,
        "top_hosts": 5,
    }
    return stat_reads(db, batches, **{**options, **kw})


def test_stat_reads_count_each_urls_last_fetch(reader: CrawlReader) -> None:
    got = _stats(reader, (1,))
    t = got.totals
    assert (t.urls_known, t.seeds_known, t.fetches, t.requested, t.downloaded) == (5, 1, 5, 4, 2)
    assert (t.first, t.last, t.hosts) == (1001.0, 1006.0, 1)
    assert got.seed_states == {"OK": 1}
    assert got.document_states == {"OK": 2, "code": 1, "soft404": 1, "robots": 1}
    assert got.document_codes == ((301, 1),)
    assert got.seed_codes == ()
    assert got.seeds == (("http://a.test/", "OK"),)
    assert got.size_buckets == {0: 1, 1: 1}
    assert sorted(got.download_sizes) == [1000, 300_000]
    assert (got.mean_size, got.max_size) == (150_500.0, 300_000)
    assert got.depths == ((0, 1, 1, 3), (1, 3, 1, 0), (2, 0, 0, 0))
    assert sorted(got.link_kinds) == [(False, True, False, 1), (True, False, False, 1)]
    assert sorted(got.timeline) == [
        (0, "OK", 2),
        (0, "code", 1),
        (0, "robots", 1),
        (0, "soft404", 1),
    ]
    assert got.bucket_seconds == 10.0
    assert (got.documents, got.distinct_documents) == (2, 2)
    assert got.top_hosts == (("a.test", 4, 2, 301_000),)
    assert got.canonicals is not None
    assert (got.canonicals.documents, got.canonicals.declaring, got.canonicals.own) == (2, 1, 0)
    assert got.canonicals.elsewhere == (("http://a.test/", "http://b.test/x"),)
    assert got.canonicals.statuses == ()  # the crawl never fetched the declared URL
    # One document class for both payloads: one distinct document; the temp tables are gone.
    again = _stats(reader, (1,), classes={B: A})
    assert (again.documents, again.distinct_documents) == (2, 1)
    assert _stats(reader, (1, 2)).totals.fetches == 6
    # Seed 002 Table 2's rows, by the page type a pattern script gave the URL.
    assert _stats(reader, (1,), filtering=True).filtering == (("detail", 1, 10, 4),)


def test_reads_for_evaluate_and_learning(reader: CrawlReader) -> None:
    assert fetch_tally(reader)[0] == 7
    assert list(payload_fingerprints(reader)) == [(A, b"\x01" * 8)]
    observed = list(observation_rows(reader))
    assert observed[0] == ("http://a.test/", 200, A, None)
    assert ("http://a.test/r", 301, None, "http://a.test/p") in observed
    assert ("http://a.test/s", 200, None, None) in observed  # a soft 404 is no document
    rows = list(evaluation_rows(reader, (1,), (), ("robots",), "soft404"))
    assert len(rows) == 6
    by_url = {r[0]: tuple(bool(v) if i in (1, 2, 5) else v for i, v in enumerate(r)) for r in rows}
    assert by_url["http://a.test/g"] == ("http://a.test/g", False, True, None, None, False)
    assert by_url["http://a.test/r"][4] == "http://a.test/p"
    assert by_url["http://a.test/s"][5] is True
    assert list(canonical_declarations(reader, (1,))) == [("http://a.test/", "http://b.test/x")]
    assert list(canonical_declarations(reader, ())) == []
    assert soft404_count(reader, (1,)) == 1
    assert soft404_count(reader, (2,)) == 0


def test_reads_for_changes(reader: CrawlReader) -> None:
    rows = list(history_rows(reader, (1, 2)))
    assert [(r[1], r[4], r[5]) for r in rows][:3] == [
        ("http://a.test/", 1, "OK"),
        ("http://a.test/", 2, "OK"),
        ("http://a.test/p", 1, "hTim"),
    ]
    p_ok = next(r for r in rows if r[1] == "http://a.test/p" and r[5] == "OK")
    assert p_ok[12] == 500.0  # the sitemap's date in that batch
    assert [(b, v) for _, b, v in latest_lastmods(reader, (1, 2))] == [(2, 900.0)]
    assert [(b, v) for _, b, v in latest_lastmods(reader, (1,))] == [(1, 500.0)]


def test_reads_for_learned_rules_export_and_the_cli(reader: CrawlReader) -> None:
    (rule,) = learned_rule_reads(reader)
    assert (rule.host, rule.spec, rule.support, rule.pairs, rule.differ) == (
        "a.test",
        '{"drop": "x"}',
        3,
        4,
        1,
    )
    assert merge_counts(reader) == {rule.id: (2, 1)}
    fetched = list(export_fetch_rows(reader))
    assert [f.url for f in fetched][:2] == ["http://a.test/", "http://a.test/p"]
    assert fetched[0].content_sha1 == A
    labels = url_labels(reader)
    assert [
        (lab.page_type, lab.category, lab.category_id, lab.category_name) for lab in labels.values()
    ] == [("detail", "news", "7", "News")]
    assert seed_outcomes(reader, 1) == [("http://a.test/", "OK", 200, None, "parsed")]
    assert max_depth(reader) == 2


def test_first_crawl_reads_a_directory_read_only(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "crawl.db")
    store.start_batch("{}", now=1.0)
    store.add_urls([_url("/", 0)])
    (seed,) = store.claim_queued(1)
    store.record_fetches([FetchRecord(seed.id, 2.0, "noIP")])  # type: ignore[arg-type]
    store.commit()
    got = first_crawl(tmp_path / "crawl.db")
    assert got is not None
    assert (got.ended, got.seeds, got.answered, got.responses) == (False, 1, 0, 0)
    store.end_batch(1, now=3.0)
    store.commit()
    store.close()
    assert first_crawl(tmp_path / "crawl.db") == type(got)(True, 1, 0, 0)
    (tmp_path / "other.db").write_bytes(b"not a database at all, just bytes" * 10)
    assert first_crawl(tmp_path / "other.db") is None

"""The ``CrawlStore`` contract, on SQLite and on PostgreSQL alike (``open_store`` runs each
test on both): batches, URL-seen by identity, claims, every fetch kept, hosts and seeds.

What only one store has (SQLite's WAL and its file, PostgreSQL's migrations on a server)
is tested in ``test_sqlite_store.py`` and ``test_pg_store.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing

import pytest

from dustless.errors import StoreError
from dustless.kinds import LinkKind
from dustless.store import (
    PROBE_PREFIX,
    CrawlStore,
    FetchRecord,
    HostInfo,
    NewSeed,
    NewURL,
    RobotsRow,
    SeedUpdate,
    SQLiteStore,
    URLDate,
    URLLabel,
    URLState,
    WarcRef,
    WorkLeft,
    url_hash,
)

Opener = Callable[..., CrawlStore]


def u(path: str, host: str = "a.test", depth: int = 1, **kw: object) -> NewURL:
    url = f"http://{host}{path}"
    return NewURL(url, url, host, depth, **kw)  # type: ignore[arg-type]


@pytest.fixture
def store(open_store: Opener) -> CrawlStore:
    s = open_store()
    s.start_batch('{"policy": "standard"}', now=1000.0)
    return s


def test_batches_start_resume_end(open_store: Opener) -> None:
    with closing(open_store()) as s:
        assert s.resume_batch() is None
        b1 = s.start_batch('{"x": 1}', now=10.0, batch_time=5.0)
        assert (b1.number, b1.batch_time) == (1, 5.0)
    with closing(open_store()) as s:
        again = s.resume_batch()
        assert again is not None
        assert again.number == 1
        assert again.config == '{"x": 1}'
        s.end_batch(1, now=20.0)
        assert s.resume_batch() is None
        assert s.start_batch("{}", now=30.0).number == 2
        assert [b.ended_at for b in s.batches()] == [20.0, None]


def test_add_urls_reports_new_identities(store: CrawlStore) -> None:
    assert store.add_urls([u("/1"), u("/2"), u("/1")]) == [True, True, False]
    assert store.add_urls([u("/2"), u("/3")]) == [False, True]
    assert store.add_urls([]) == []
    assert store.contains_identities(["http://a.test/1", "http://a.test/9"]) == {"http://a.test/1"}
    assert sorted(i for chunk in store.iter_identities(chunk=2) for i in chunk) == [
        "http://a.test/1",
        "http://a.test/2",
        "http://a.test/3",
    ]


def test_add_urls_large_batch_spans_statements(store: CrawlStore) -> None:
    batch = [u(f"/{i}") for i in range(10_000)] + [u("/5")]
    result = store.add_urls(batch)
    assert result.count(True) == 10_000
    assert result[-1] is False
    assert store.url_counts()[URLState.QUEUED] == 10_000


def test_identity_not_url_is_unique(store: CrawlStore) -> None:
    a = NewURL("http://a.test/P", "http://a.test/p", "a.test", 1)
    b = NewURL("http://a.test/p", "http://a.test/p", "a.test", 1)
    assert store.add_urls([a, b]) == [True, False]
    assert store.query("SELECT url FROM urls") == [("http://a.test/P",)]


def test_claim_order_is_priority_then_depth_then_discovery(store: CrawlStore) -> None:
    store.add_urls([u("/d2", depth=2), u("/d1", depth=1), u("/p", depth=3, priority=5)])
    store.add_urls([u("/d1b", depth=1), u("/skip", state=URLState.SKIPPED)])
    claimed = store.claim_queued(3)
    assert [c.url.rsplit("/", 1)[1] for c in claimed] == ["p", "d1", "d1b"]
    assert all(
        c.state is URLState.IN_FLIGHT for c in store.urls_by_id(c.id for c in claimed).values()
    )
    assert [c.url for c in store.claim_queued(10)] == ["http://a.test/d2"]
    assert store.claim_queued(10) == []


def _queued_hosts(store: CrawlStore) -> dict[str, int]:
    """The per-host counts the DB keeps for leasing (``host_work``, kept by triggers)."""
    return dict(store.query("SELECT host, queued FROM host_work WHERE queued > 0"))


def test_claim_per_host_window(store: CrawlStore) -> None:
    store.add_urls([u(f"/{i}", host=h) for h in ("a.test", "b.test", "c.test") for i in range(5)])
    assert _queued_hosts(store) == {"a.test": 5, "b.test": 5, "c.test": 5}
    got = store.claim_queued(100, hosts=["a.test", "c.test"], per_host=2)
    assert [(c.host, c.url[-1]) for c in got] == [
        ("a.test", "0"),
        ("a.test", "1"),
        ("c.test", "0"),
        ("c.test", "1"),
    ]
    assert _queued_hosts(store) == {"a.test": 3, "b.test": 5, "c.test": 3}
    assert len(store.claim_queued(3, hosts=["b.test"])) == 3  # limit caps the total


def test_queued_pages_by_id_without_claiming(store: CrawlStore) -> None:
    store.add_urls([u(f"/{i}") for i in range(7)])
    seen, after = [], 0
    while page := store.queued(after_id=after, limit=3):
        seen += [p.url for p in page]
        after = page[-1].id
    assert len(seen) == 7
    assert store.url_counts()[URLState.QUEUED] == 7


def test_requeue_in_flight_after_crash(open_store: Opener) -> None:
    with closing(open_store()) as s:
        s.start_batch("{}", 1.0)
        s.add_urls([u("/1"), u("/2")])
        s.claim_queued(2)
    with closing(open_store()) as s:
        assert s.requeue_in_flight() == 2
        assert s.url_counts()[URLState.QUEUED] == 2


def test_set_url_state(store: CrawlStore) -> None:
    store.add_urls([u("/1"), u("/2")])
    store.set_url_state([1, 2], URLState.DONE)
    assert store.url_counts()[URLState.DONE] == 2


def _fetch(url_id: int, t: float, **kw: object) -> FetchRecord:
    return FetchRecord(url_id, t, kw.pop("state", "OK"), **kw)  # type: ignore[arg-type]


def test_every_fetch_is_kept_and_url_marked_done(store: CrawlStore) -> None:
    store.add_urls([u("/1"), u("/2")])
    ids = store.record_fetches(
        [
            _fetch(1, 10.0, status=200, mime="text/html", content_sha1="aa", links_a=3, links_h=1),
            _fetch(2, 11.0, state="cTim", error="connect timeout", url_state=URLState.QUEUED),
        ]
    )
    assert len(ids) == 2
    store.record_fetches([_fetch(1, 20.0, status=200, content_sha1="bb", batch=2)])
    rows = list(store.iter_fetches())
    assert [(r.url_id, r.batch, r.content_sha1) for r in rows] == [
        (1, 1, "aa"),
        (2, 1, None),
        (1, 2, "bb"),
    ]
    assert [r.id for r in store.iter_fetches(batch=2)] == [rows[2].id]
    assert rows[0].links_a == 3
    assert rows[0].kind == "a"
    assert store.last_fetches([1, 2])[1].content_sha1 == "bb"
    counts = store.url_counts()
    assert (counts[URLState.DONE], counts[URLState.QUEUED]) == (1, 1)
    assert store.fetch_state_counts() == {"OK": 2, "cTim": 1}
    assert store.fetch_state_counts(batch=1) == {"OK": 1, "cTim": 1}


def test_record_fetches_needs_a_batch(open_store: Opener) -> None:
    with closing(open_store()) as s:
        s.add_urls([u("/1")])
        with pytest.raises(StoreError, match="batch"):
            s.record_fetches([_fetch(1, 1.0)])


def test_content_seen_returns_first_original_capture(store: CrawlStore) -> None:
    store.add_urls([u("/1"), u("/2"), u("/3")])
    w1 = WarcRef("w-00001.warc.gz", 100, 50, "<urn:uuid:1>")
    (first,) = store.record_fetches([_fetch(1, 10.0, content_sha1="ab" * 20, warc=w1)])
    store.record_fetches([_fetch(2, 11.0, content_sha1="ab" * 20, revisit_of=first)])
    seen = store.content_seen(["ab" * 20, "cd" * 20])
    assert list(seen) == ["ab" * 20]
    ref = seen["ab" * 20]
    assert (ref.fetch_id, ref.url, ref.fetched_at, ref.warc) == (first, "http://a.test/1", 10.0, w1)


def test_warc_ends(store: CrawlStore) -> None:
    store.add_urls([u("/1"), u("/2")])
    store.record_fetches(
        [
            _fetch(1, 1.0, warc=WarcRef("f1", 0, 10), warc_request=WarcRef("f1", 10, 5)),
            _fetch(2, 2.0, warc=WarcRef("f2", 40, 2)),
        ]
    )
    assert store.warc_ends() == {"f1": 15, "f2": 42}


def test_hosts_upsert(store: CrawlStore) -> None:
    store.update_hosts([HostInfo("a.test", "127.0.0.1", "pending"), HostInfo("b.test")])
    store.update_hosts([HostInfo("a.test", "127.0.0.1", "parsed", 5.0, 2.5, ("http://a/s.xml",))])
    hosts = store.hosts()
    assert hosts["a.test"] == HostInfo(
        "a.test", "127.0.0.1", "parsed", 5.0, 2.5, ("http://a/s.xml",)
    )
    assert list(store.hosts(["b.test", "zz"])) == ["b.test"]


def test_seed_table_of_004(store: CrawlStore) -> None:
    got = store.add_seeds(
        [
            NewSeed("http://a.test/", "http://a.test/", "a.test"),
            NewSeed("http://b.test/", "http://b.test/", "b.test", discovered_from=1),
            NewSeed("http://a.test/", "http://a.test/", "a.test"),
        ]
    )
    assert got == [(1, True), (2, True), (1, False)]
    store.update_seeds([SeedUpdate(1, content_sha1="ff", state="OK", party_seconds=12.5)])
    store.update_seeds([SeedUpdate(1, state="cErr")])
    s1, s2 = store.seeds()
    assert (s1.content_sha1, s1.state, s1.party_seconds) == ("ff", "cErr", 12.5)
    assert s1.url_hash == url_hash("http://a.test/")
    assert (s2.discovered_from, s2.created_batch) == (1, 1)


def test_queued_host_counts_follow_every_write(store: CrawlStore) -> None:
    def recount() -> dict[str, int]:
        rows = store.query("SELECT host, count(*) FROM urls WHERE state = 'queued' GROUP BY host")
        return dict(rows)

    store.add_urls([u(f"/{i}", host=h) for h in ("a.test", "b.test") for i in range(4)])
    assert _queued_hosts(store) == recount() == {"a.test": 4, "b.test": 4}
    store.add_urls(
        [u("/x", host="c.test"), u("/0", host="a.test"), u("/s", state=URLState.SKIPPED)]
    )
    assert _queued_hosts(store) == recount()
    got = store.claim_queued(10, hosts=["a.test"], per_host=3)
    assert _queued_hosts(store) == recount()
    store.claim_queued(100)
    assert _queued_hosts(store) == recount() == {}
    store.record_fetches([_fetch(got[0].id, 1.0, state="hTim", url_state=URLState.QUEUED)])
    assert _queued_hosts(store) == recount() == {"a.test": 1}
    store.requeue_in_flight()
    assert _queued_hosts(store) == recount()
    store.set_url_state([1, 2], URLState.DONE)
    assert _queued_hosts(store) == recount()
    if isinstance(store, SQLiteStore):  # PostgreSQL has committed each call already
        store.rollback()
    assert _queued_hosts(store) == recount()


def test_validators_and_timings_read_back(store: CrawlStore) -> None:
    store.add_urls([u("/1")])
    req = WarcRef("w", 10, 5)
    store.record_fetches(
        [_fetch(1, 1.0, etag='"x"', last_modified="Sat, 21 Nov 2026 07:00:00 GMT",
                connect_time=0.01, ttfb=0.02, elapsed=0.5, warc=WarcRef("w", 0, 10, "<id>"),
                warc_request=req)]
    )  # fmt: skip
    row = store.last_fetches([1])[1]
    assert (row.etag, row.last_modified) == ('"x"', "Sat, 21 Nov 2026 07:00:00 GMT")
    assert (row.connect_time, row.ttfb, row.elapsed) == (0.01, 0.02, 0.5)
    assert row.warc == WarcRef("w", 0, 10, "<id>")
    assert row.warc_request == req


# -- what later migrations added (V4 spellings and fingerprints, V5 sources, V6 canonical) ----
def test_new_fetch_columns_read_back(store: CrawlStore) -> None:
    store.add_urls([u("/1"), u("/s.xml", kind=LinkKind.SITEMAP)])
    store.record_fetches(
        [
            _fetch(1, 1.0, content_fp=b"\x00\x01fp", canonical="http://a.test/c"),
            _fetch(2, 2.0, source_state="bomb"),
        ]
    )
    assert store.last_fetches([2])[2].source_state == "bomb"
    assert store.query("SELECT content_fp, canonical, source_state FROM fetches ORDER BY id") == [
        (b"\x00\x01fp", "http://a.test/c", None),
        (None, None, "bomb"),
    ]


def test_spellings_are_kept_in_the_order_met_up_to_a_limit(store: CrawlStore) -> None:
    base = "http://a.test/p"
    store.add_urls([u("/p"), NewURL("http://a.test/P", "http://a.test/p?x", "a.test", 1)])
    store.add_spellings([(base, "http://a.test/P1"), (base, "http://a.test/P0")], 3)
    store.add_spellings(
        [(base, "http://a.test/P1"), (base, "http://a.test/P9"), (base, "http://a.test/P8")], 3
    )
    store.add_spellings([("http://b.test/", "http://B.test/")], 3)
    tried, kept = store.spelling_state(base, ["http://a.test/p?x", base, "http://a.test/none"])
    assert tried == ["http://a.test/p", "http://a.test/P"]  # by id
    assert kept == ["http://a.test/P1", "http://a.test/P0", "http://a.test/P9"]
    assert sorted(store.spelling_bases()) == ["http://a.test/p", "http://b.test/"]
    store.record_fetches([_fetch(1, 1.0, state="code", status=404)])
    store.record_fetches([_fetch(1, 2.0, state="OK", status=200)])
    rows = store.spelling_rows(["http://a.test/p?x", base])
    assert [(r.url, state, status) for r, state, status in rows] == [
        ("http://a.test/p", "OK", 200),
        ("http://a.test/P", None, None),
    ]


def test_sources_counted_dated_and_left_out_of_a_collection(store: CrawlStore) -> None:
    store.add_urls(
        [
            u("/s1.xml", kind=LinkKind.SITEMAP),
            u("/s2.xml", kind=LinkKind.SITEMAP, state=URLState.DONE),
            u("/feed", kind=LinkKind.FEED),
            u("/1"),
            u("/2", state=URLState.SKIPPED),
            NewURL("http://a.test/3", PROBE_PREFIX + "http://a.test/3", "a.test", 0),
            u("/x", host="b.test", kind=LinkKind.SITEMAP),
        ]
    )
    assert store.count_kind("a.test", LinkKind.SITEMAP) == 2
    assert store.count_kind("a.test", LinkKind.FEED) == 1
    assert store.count_kind("c.test", LinkKind.SITEMAP) == 0
    assert store.collection_ids() == [1, 2, 3, 4, 7]
    assert store.collection_ids([LinkKind.SITEMAP, LinkKind.FEED]) == [1, 2, 3, 7]
    written = store.record_dates(
        [
            URLDate("http://a.test/1", 1, 100.0, "daily", 1),
            URLDate("http://a.test/1", 1, 200.0, None, 3),  # later in the batch: replaces
            URLDate("http://a.test/1", 2, 300.0, "weekly", 1),
            URLDate("http://a.test/unknown", 1, 1.0, None, 1),  # not held: skipped
        ]
    )
    assert written == 3
    assert store.query(
        "SELECT url_id, batch, lastmod, changefreq, source_id FROM url_dates ORDER BY batch"
    ) == [(4, 1, 200.0, None, 3), (4, 2, 300.0, "weekly", 1)]
    assert store.record_dates([]) == 0


# -- what the engine asks once per run (lifecycle, workers, robots.txt, WARC marks) ---------
def test_close_commits_and_the_worker_is_the_name_opened_as(open_store: Opener) -> None:
    s = open_store(worker="w1")
    assert s.worker == "w1"
    # Only a store across the network may have other workers writing meanwhile.
    assert s.shared is (not isinstance(s, SQLiteStore))
    s.start_batch("{}", now=1.0)
    s.add_urls([u("/1")])
    s.close()  # no commit() first: close commits
    with closing(open_store()) as again:
        assert again.contains_identities(["http://a.test/1"]) == {"http://a.test/1"}


def test_a_db_that_is_up_is_reached_at_once_and_never_reported_away(store: CrawlStore) -> None:
    heard: list[float | None] = []
    store.watch_outages(heard.append)
    assert store.maybe_away() is False
    store.reach()
    with store.impatient():  # nothing is away: the calls go through
        assert store.add_urls([u("/1")]) == [True]
        store.commit()
    store.reach()
    assert store.url_counts()[URLState.QUEUED] == 1
    assert heard == []  # the hook hears of outages only


def test_workers_register_and_are_listed_by_name(open_store: Opener) -> None:
    with closing(open_store(worker="w2")) as b, closing(open_store(worker="w1")) as a:
        a.register_worker("/crawl/w1", now=10.0)
        a.commit()
        b.register_worker("/crawl/w2", now=11.0)
        b.commit()
        a.register_worker("/elsewhere", now=20.0)  # a heartbeat: started_at stays
        a.commit()
        rows = a.workers()
    assert [(w.name, w.dir, w.started_at, w.seen_at) for w in rows] == [
        ("w1", "/elsewhere", 10.0, 20.0),
        ("w2", "/crawl/w2", 11.0, 11.0),
    ]
    assert all(w.pid is not None and w.machine for w in rows)


def test_work_left_read_ahead_answers_with_the_writes_before_it(open_store: Opener) -> None:
    with closing(open_store(worker="w1")) as s:
        s.start_batch("{}", now=1.0)
        s.register_worker("/w1", now=100.0)
        s.add_urls([u("/1"), u("/2", host="b.test")])
        s.expect_work_left(100.0, alive_within=30.0)
        s.commit()
        assert s.work_left(100.0, alive_within=30.0) == WorkLeft(2, 0, 1)
        s.claim_queued(10)
        s.commit()
        # Nothing was announced this time: work_left asks. (Who is alive is not asked: on
        # a shared store the asking is this worker's heartbeat, on SQLite it is not.)
        assert s.work_left(200.0) == WorkLeft(0, 0, 0)


def test_robots_txt_is_stored_per_origin_and_replaced(store: CrawlStore) -> None:
    assert store.robots([]) == {}
    store.put_robots(
        [
            RobotsRow("http://a.test", 200, b"User-agent: *\nDisallow: /x\n", 5.0),
            RobotsRow("https://a.test", None, b"", 6.0),
        ]
    )
    store.put_robots([RobotsRow("http://a.test", 404, b"", 7.0)])
    store.put_robots([])
    got = store.robots(["http://a.test", "https://a.test", "http://a.test:8080"])
    assert got == {
        "http://a.test": RobotsRow("http://a.test", 404, b"", 7.0),
        "https://a.test": RobotsRow("https://a.test", None, b"", 6.0),
    }


def test_warc_commit_marks_are_each_workers_own(open_store: Opener) -> None:
    with closing(open_store(worker="w1")) as a, closing(open_store(worker="w2")) as b:
        a.warc_committed({"w1-1.warc.gz": 100, "w1-2.warc.gz": 5})
        a.warc_committed({})
        a.commit()
        b.warc_committed({"w2-1.warc.gz": 7})
        b.commit()
        a.warc_committed({"w1-1.warc.gz": 250})
        a.commit()
        assert a.warc_committed_ends() == {"w1-1.warc.gz": 250, "w1-2.warc.gz": 5}
        assert b.warc_committed_ends() == {"w2-1.warc.gz": 7}


def test_content_sha1s_are_listed_once_each_in_chunks(store: CrawlStore) -> None:
    assert list(store.iter_content_sha1s()) == []
    store.add_urls([u(f"/{i}") for i in range(4)])
    store.record_fetches(
        [
            _fetch(1, 1.0, content_sha1="bb" * 20),
            _fetch(2, 2.0, content_sha1="aa" * 20),
            _fetch(3, 3.0, content_sha1="bb" * 20),
            _fetch(4, 4.0, state="cErr"),
        ]
    )
    assert list(store.iter_content_sha1s(chunk=1)) == [["aa" * 20], ["bb" * 20]]


def test_labels_add_what_pages_revealed(store: CrawlStore) -> None:
    store.add_urls([u("/1"), u("/2"), u("/3")])
    assert store.category_names([1, 2, 3]) == {}
    store.label_urls(
        [
            URLLabel("http://a.test/1", "list", "c1", "7", "Shoes"),
            URLLabel("http://a.test/2", "detail", category_name=""),
            # A later label of the same URL without a name keeps the name (a None adds nothing).
            URLLabel("http://a.test/1", "detail", "c2"),
            URLLabel("http://a.test/9", "list", category_name="not held"),
        ]
    )
    store.label_urls([])
    assert store.category_names([1, 2, 3, 1]) == {1: "Shoes"}  # an empty name is none
    assert store.query("SELECT id, page_type, category, category_id FROM urls ORDER BY id") == [
        (1, "detail", "c2", "7"),
        (2, "detail", None, None),
        (3, None, None, None),
    ]


def test_sites_are_rebuilt_from_seeds_and_urls_only_when_missing(store: CrawlStore) -> None:
    assert store.has_seeds() is False
    store.add_seeds([NewSeed("http://a.test/", "http://a.test/", "a.test")])
    assert store.has_seeds() is True
    store.add_urls(
        [
            u("/", seed_id=1, depth=0),
            u("/1"),
            u("/x", host="www.a.test"),
            u("/s", host="b.test", state=URLState.SKIPPED),
            u("/c", host="c.test"),
        ]
    )
    store.commit()

    def site_of(host: str) -> str:
        return host.removeprefix("www.")

    assert store.rebuild_sites(site_of) == 2  # a.test (its seed's party) and c.test
    store.commit()
    assert sorted(store.query("SELECT site, seed_id, pages FROM sites")) == [
        ("a.test", 1, 3),  # a skipped URL (b.test's) is no page of a party
        ("c.test", None, 1),
    ]
    assert store.rebuild_sites(site_of) == 0  # the table is there: nothing to rebuild

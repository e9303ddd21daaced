"""The redirect path's data structures: cache admission, click groups, grouped click writes."""

import gc

from dustless.errors import StoreError
from dustless.shortener._cache import LinkCache
from dustless.shortener._clicks import ClickRecorder
from dustless.shortener._model import ClickKey, Link, NewLink, Redirect
from dustless.shortener._sqlite_store import _CLICK_CHUNK, SqliteStore
from dustless.shortener._store import GroupedClickStore


def link(i: int, redirect: Redirect = Redirect.FOUND, expires_at: float | None = None) -> Link:
    return Link(i, f"c{i:06d}", f"https://example.com/{i}", redirect, 1.0, expires_at)


def test_the_cache_gives_back_the_link_it_was_given():
    cache = LinkCache(10)
    original = link(1, Redirect.MOVED_PERMANENTLY, expires_at=99.5)
    cache.put(original)
    assert cache.get(original.code) == original
    assert cache.get(original.code).redirect is Redirect.MOVED_PERMANENTLY
    entry = cache.entry(original.code)
    assert entry is not None
    assert (entry[0], entry[3], entry[5]) == (1, 301, 99.5)
    assert entry[7] == b"https://example.com/1"  # the Location header, encoded once
    assert cache.get("nope") is None
    assert (cache.hits, cache.misses) == (3, 1)


def test_one_off_codes_do_not_evict_hot_ones():
    cache = LinkCache(100, probation=0.1)  # 90 protected, 10 on probation
    hot = [link(i) for i in range(50)]
    for item in hot:
        cache.put(item)
        assert cache.entry(item.code) is not None  # a second request: protected
    for i in range(1000, 11_000):  # a scan of codes each asked for once
        cache.put(link(i))
    assert all(item.code in cache for item in hot)
    assert len(cache) <= 100  # a plain LRU of 100 would now hold only one-off codes


def test_the_cache_never_holds_more_than_its_capacity():
    cache = LinkCache(20)
    for i in range(200):
        cache.put(link(i))
        cache.entry(link(i).code)  # promote every one
        cache.entry(link(i // 2).code)
        assert len(cache) <= 20
    # The most recently promoted codes are still there.
    assert link(199).code in cache


def test_a_cache_of_size_zero_holds_nothing():
    cache = LinkCache(0)
    cache.put(link(1))
    assert len(cache) == 0
    assert cache.get(link(1).code) is None


def test_cache_entries_are_not_walked_by_the_garbage_collector():
    cache = LinkCache(10)
    cache.put(link(1, expires_at=5.0))
    cache.put(link(2))
    gc.collect()
    for code in (link(1).code, link(2).code):
        entry = cache.entry(code)
        assert entry is not None
        assert not gc.is_tracked(entry)


class GroupedStore:
    def __init__(self, fail_first: bool = False) -> None:
        self.batches: list[dict[tuple[str, str, str, str], dict[int, int]]] = []
        self.fail_first = fail_first

    async def add_click_groups(self, groups):
        for counts in groups.values():
            assert not gc.is_tracked(counts)  # int -> int: nothing for the collector to walk
        if self.fail_first:
            self.fail_first = False
            raise StoreError("database is locked")
        self.batches.append({group: dict(counts) for group, counts in groups.items()})

    async def add_clicks(self, counts):  # pragma: no cover - the recorder prefers groups
        raise AssertionError("add_click_groups should have been used")


async def test_clicks_are_grouped_by_day_referrer_and_browser():
    store = GroupedStore()
    assert isinstance(store, GroupedClickStore)
    recorder = ClickRecorder(store)
    for link_id in range(3000):  # cold traffic: every click a different link
        recorder.record(link_id, 86400.0 * 3, "", "curl/8")
    recorder.record(5, 86400.0 * 3, "https://news.example/a", "curl/8")
    recorder.record(5, 86400.0 * 4 + 1, "", "curl/8")  # the next day
    assert recorder.pending == 3002
    await recorder.flush()
    assert recorder.pending == 0
    (batch,) = store.batches
    assert set(batch) == {
        ("1970-01-04", "", "curl", "other"),
        ("1970-01-04", "news.example", "curl", "other"),
        ("1970-01-05", "", "curl", "other"),
    }
    assert batch["1970-01-04", "", "curl", "other"] == {i: 1 for i in range(3000)}
    assert batch["1970-01-04", "news.example", "curl", "other"] == {5: 1}
    await recorder.flush()  # nothing new: nothing written
    assert len(store.batches) == 1


async def test_a_failed_grouped_batch_is_kept_for_the_next_one():
    store = GroupedStore(fail_first=True)
    recorder = ClickRecorder(store)
    recorder.record(1, 0.0, "", "")
    recorder.record(2, 0.0, "", "")
    await recorder.flush()
    assert recorder.pending == 2
    recorder.record(1, 0.0, "", "")
    await recorder.flush()
    assert store.batches == [{("1970-01-01", "", "(none)", "other"): {1: 2, 2: 1}}]


async def test_a_full_backlog_drops_new_links_but_counts_known_ones():
    recorder = ClickRecorder(GroupedStore(), max_keys=3)
    for link_id in (1, 2, 3, 4, 5, 1, 1):
        recorder.record(link_id, 0.0, "", "")
    assert recorder.pending == 3
    assert recorder.dropped == 2


async def test_sqlite_writes_grouped_clicks_like_single_ones(tmp_path):
    store = await SqliteStore.open(str(tmp_path / "clicks.db"), durable=False)
    try:
        links = [
            (await store.create(NewLink(f"https://e.com/{i}", f"k{i}", Redirect.FOUND, 0.0))).link
            for i in range(3)
        ]
        many = _CLICK_CHUNK * 2 + 7  # more than one chunk; ids need not exist as links
        await store.add_click_groups(
            {
                ("2026-01-01", "", "curl", "Linux"): {links[0].id: 2, links[1].id: 1},
                ("2026-01-01", "news.example", "Chrome", "Windows"): {links[0].id: 1},
                ("2026-01-02", "", "curl", "Linux"): {10_000 + i: 1 for i in range(many)},
            }
        )
        await store.add_click_groups({("2026-01-01", "", "curl", "Linux"): {links[0].id: 3}})
        await store.add_clicks({ClickKey(links[0].id, "2026-01-02", "", "curl"): 4})
        await store.add_click_groups({})
        stats = await store.stats(links[0])
        assert stats.total == 10
        assert stats.by_day == (("2026-01-01", 6), ("2026-01-02", 4))
        assert stats.referrers == (("", 9), ("news.example", 1))
        assert stats.user_agents == (("curl", 9), ("Chrome", 1))
        assert stats.operating_systems == (("Linux", 5), ("(unknown)", 4), ("Windows", 1))
        assert (await store.stats(links[1])).total == 1
        rows = store._reader.execute(
            "SELECT COUNT(*), SUM(n) FROM clicks WHERE link_id >= 10000"
        ).fetchone()
        assert rows == (many, many)
    finally:
        await store.close()

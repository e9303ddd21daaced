"""UrlSeen: a Bloom filter in front of the UNIQUE index never loses a URL."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustless.store import NewURL, SQLiteStore, UrlSeen


def nu(identity: str) -> NewURL:
    return NewURL(identity, identity, "a.test", 1)


class _AlwaysMaybe:
    """A Bloom filter that answers "maybe" for everything: the worst false-positive rate."""

    def __contains__(self, item: object) -> bool:
        return True

    def update(self, items: object) -> None:
        pass


def _store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path)
    s.start_batch("{}", 1.0)
    return s


def test_new_and_repeated_identities(tmp_path: Path) -> None:
    seen = UrlSeen(_store(tmp_path), capacity=1000)
    assert seen.add_urls([nu("a"), nu("b"), nu("a")]) == [True, True, False]
    assert seen.add_urls([nu("b"), nu("c")]) == [False, True]
    assert seen.seen(["a", "c", "zz"]) == [True, True, False]
    assert seen.maybe_seen("a")


def test_forced_false_positives_never_lose_a_url(tmp_path: Path) -> None:
    store = _store(tmp_path)
    seen = UrlSeen(store, capacity=1000)
    seen._bloom = _AlwaysMaybe()  # every new identity now looks "maybe seen"
    ids = [f"http://a.test/{i}" for i in range(500)]
    assert seen.add_urls([nu(i) for i in ids]) == [True] * 500
    assert seen.false_positives == 500
    assert store.contains_identities(ids) == set(ids)
    assert seen.add_urls([nu(i) for i in ids[:10]]) == [False] * 10


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batches=st.lists(st.lists(st.integers(0, 300), max_size=40), max_size=8),
    recent=st.sampled_from([1, 50, 100_000]),
)
def test_tiny_filter_matches_a_set(
    tmp_path_factory: object, batches: list[list[int]], recent: int
) -> None:
    """A filter far over capacity (many false positives) still agrees with an exact set,
    whatever the size of the cache of recently confirmed identities."""
    d = tmp_path_factory.mktemp("seen")  # type: ignore[attr-defined]
    seen = UrlSeen(_store(d), capacity=8, error_rate=0.3, recent_size=recent)
    model: set[str] = set()
    for batch in batches:
        items = [f"u{n}" for n in batch]
        got = seen.add_urls([nu(i) for i in items])
        want = []
        for i in items:
            want.append(i not in model)
            model.add(i)
        assert got == want


def test_rebuild_from_store_on_resume(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add_urls([nu(f"x{i}") for i in range(1234)])
    store.commit()
    seen = UrlSeen(store, capacity=10_000)
    assert seen.rebuild(chunk=100) == 1234
    assert all(seen.maybe_seen(f"x{i}") for i in range(1234))
    assert seen.add_urls([nu("x5"), nu("new")]) == [False, True]

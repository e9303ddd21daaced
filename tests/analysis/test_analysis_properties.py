"""Properties of the seed 000 metrics on arbitrary small crawls (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.analysis import (
    CrawlIndex,
    Factor,
    MethodSpec,
    Observation,
    candidate_sets,
    evaluate_factor,
)


def lower(url: str) -> str:
    return url.lower()


def upper(url: str) -> str:
    return "http://h.test/" + url.removeprefix("http://h.test/").upper()


def strip_slash(url: str) -> str:
    return url.rstrip("/") or url


def identity(url: str) -> str:
    return url


@st.composite
def observations(draw: st.DrawFn) -> list[Observation]:
    paths = draw(st.lists(st.text(alphabet="aAbB/", max_size=4), max_size=25, unique=True))
    out = []
    for p in paths:
        requested = draw(st.booleans())
        success = requested and draw(st.booleans())
        digest = draw(st.sampled_from(["h1", "h2", "h3"])) if success else None
        out.append(Observation("http://h.test/" + p, requested, success, digest))
    return out


FACTOR = Factor(
    "path-case",
    (
        MethodSpec("none", None),
        MethodSpec("lowercase", lower),
        MethodSpec("uppercase", upper),
        MethodSpec("strip-slash", strip_slash),
        MethodSpec("identity", identity),
    ),
)


@settings(max_examples=150, deadline=None)
@given(observations())
def test_rates_are_rates_and_counts_are_consistent(obs: list[Observation]) -> None:
    rows = evaluate_factor(CrawlIndex.build(obs), FACTOR)
    for row in rows:
        assert 0.0 <= row.redundancy_rate <= 1.0
        assert 0.0 <= row.coverage_loss_rate <= 1.0
        assert 0.0 <= row.set_redundancy_rate <= 1.0
        assert 0 <= row.unique_documents <= row.downloads <= row.requests
        assert 0 <= row.normal_documents <= row.set_unique_documents <= row.set_downloads
        assert row.set_downloads <= row.candidate_urls
        assert 2 * row.sets <= row.candidate_urls
        assert row.coverage_loss_measured == (row.unmeasured_sets == 0)


@settings(max_examples=150, deadline=None)
@given(observations())
def test_leaving_urls_alone_loses_nothing_and_keeps_the_sets_redundancy(
    obs: list[Observation],
) -> None:
    none, lowered, *_ = evaluate_factor(CrawlIndex.build(obs), FACTOR)
    assert none.coverage_loss_rate == 0.0
    assert none.coverage_loss_measured
    assert none.redundancy_rate == none.set_redundancy_rate
    assert none.requests == none.candidate_urls
    assert none.duplicates_removed == 0
    # The key method merges every set into one URL: one request per set, no redundancy.
    assert lowered.requests == lowered.sets
    assert lowered.redundancy_rate == 0.0


@settings(max_examples=150, deadline=None)
@given(observations())
def test_an_identity_method_has_no_candidate_sets_and_no_redundancy(
    obs: list[Observation],
) -> None:
    index = CrawlIndex.build(obs)
    (row,) = evaluate_factor(index, Factor("identity", (MethodSpec("identity", identity),)))
    assert row.sets == 0
    assert row.redundancy_rate == 0.0
    assert row.coverage_loss_rate == 0.0
    assert candidate_sets(index.urls, identity) == ()


@settings(max_examples=150, deadline=None)
@given(observations())
def test_candidate_sets_partition_the_non_singletons(obs: list[Observation]) -> None:
    urls = list(dict.fromkeys(o.url for o in obs))
    sets = candidate_sets(urls, lower)
    members = [u for s in sets for u in s.urls]
    assert len(members) == len(set(members))  # disjoint
    sizes = Counter(map(lower, urls))
    assert set(members) == {u for u in urls if sizes[lower(u)] > 1}
    for s in sets:
        assert len(s.urls) > 1
        assert {lower(u) for u in s.urls} == {s.key}


@settings(max_examples=100, deadline=None)
@given(observations(), st.randoms(use_true_random=False))
def test_rows_do_not_depend_on_observation_order(obs: list[Observation], rnd: object) -> None:
    import random

    assert isinstance(rnd, random.Random)
    shuffled = list(obs)
    rnd.shuffle(shuffled)
    # Merging keeps a URL's download whatever the order, so the counts cannot move.
    a = evaluate_factor(CrawlIndex.build(obs), FACTOR)
    b = evaluate_factor(CrawlIndex.build(shuffled), FACTOR)
    key = [(r.sets, r.requests, r.downloads, r.unique_documents, r.normal_documents) for r in a]
    assert key == [
        (r.sets, r.requests, r.downloads, r.unique_documents, r.normal_documents) for r in b
    ]

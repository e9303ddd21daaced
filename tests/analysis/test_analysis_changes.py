"""Seed 004 §4: batch summaries, SS / FF, change intervals and the grouping tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustless.analysis import (
    LINK_KIND_CLASSES,
    BatchSummary,
    ChangeSummary,
    Visit,
    domain_suffix,
    download_histogram,
    ff,
    group_changes,
    link_kind_class,
    ss,
    summarize_batches,
    summarize_changes,
)
from dustless.errors import InvalidOption

DAY = 86_400.0

# Seed 004 Table 8: seeds by number of successful downloads in N = 9 batches (S = 1,424).
TABLE_8 = {9: 953, 8: 93, 7: 12, 6: 9, 5: 7, 4: 6, 3: 3, 2: 7, 1: 6, 0: 328}


def test_table_8_gives_the_papers_ss_and_ff() -> None:
    assert sum(TABLE_8.values()) == 1_424
    # The text writes (S − |S(0)|) = 1428 − 328 = 1096: "1428" is a typo for S = 1,424,
    # as its own result shows (1,424 − 328 = 1,096).
    assert sum(TABLE_8.values()) - TABLE_8[0] == 1_096
    result_ss = ss(TABLE_8, 9)
    result_ff = ff(TABLE_8, 9)
    assert result_ss is not None
    assert result_ff is not None
    assert round(result_ss, 4) == 0.9638  # 8451 / (1096 · 8)
    assert round(result_ff, 4) == 0.7426  # 2798 / (471 · 8)
    assert result_ss == pytest.approx(8451 / (1096 * 8))
    assert result_ff == pytest.approx(2798 / (471 * 8))


def test_table_8_from_per_seed_histories() -> None:
    # Build 1,424 seeds whose download counts follow Table 8, then count them back.
    summaries = []
    for n, count in TABLE_8.items():
        visits = [Visit(b, b * 2 * DAY, b < n, "h" if b < n else None) for b in range(9)]
        summaries += [summarize_changes(visits)] * count
    hist = download_histogram(summaries)
    assert hist == dict(sorted(TABLE_8.items()))
    assert ss(hist, 9) == ss(TABLE_8, 9)
    assert sum(s.always_successful for s in summaries) == 953


def test_ss_ff_edge_cases() -> None:
    assert ss({0: 5}, 9) is None  # never downloaded: SS undefined
    assert ff({9: 5}, 9) is None  # never failed: FF undefined
    assert ss({9: 5}, 9) == 1.0
    assert ff({0: 5}, 9) == 1.0
    with pytest.raises(InvalidOption, match="at least 2 batches"):
        ss({1: 1}, 1)
    with pytest.raises(InvalidOption, match=r"0\.\.9"):
        ff({10: 1}, 9)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n)))))
def test_ss_and_ff_are_probabilities(case: tuple[int, list[int]]) -> None:
    n, downloads = case
    counts: dict[int, int] = {}
    for d in downloads:
        counts[d] = counts.get(d, 0) + 1
    for value in (ss(counts, n), ff(counts, n)):
        assert value is None or 0.0 <= value <= 1.0


def test_change_interval_is_observed_period_over_changes() -> None:
    # Seed 004 §4: observed 10 days with 5 changes → a change interval of 10/5 = 2 days.
    hashes = ["a", "b", "b", "c", "d", "d", "e", "f", "f", "f", "f"]
    visits = [Visit(i, i * DAY, True, h) for i, h in enumerate(hashes)]
    s = summarize_changes(visits)
    assert (s.downloads, s.intervals, s.changes) == (11, 10, 5)
    assert s.observed_days == 10.0
    assert s.change_interval_days == 2.0
    assert s.always_successful
    assert s.changed


def test_failed_batches_and_unchanged_pages() -> None:
    visits = [
        Visit(3, 6 * DAY, True, "x"),
        Visit(1, 2 * DAY, False),
        Visit(2, 4 * DAY, True, "x"),
        Visit(4, 8 * DAY, False),
    ]
    s = summarize_changes(visits, total_batches=5)
    assert (s.batches, s.downloads, s.intervals, s.changes) == (5, 2, 1, 0)
    assert s.change_interval_days is None
    assert s.observed_days == 2.0  # from the first to the last successful download
    assert not s.always_successful
    assert s.mean_interval_days == 2.0
    never = summarize_changes([Visit(1, 0.0, False)])
    assert (never.downloads, never.observed_days, never.mean_interval_days) == (0, 0.0, None)


def test_bad_histories_are_refused() -> None:
    with pytest.raises(InvalidOption, match="twice"):
        summarize_changes([Visit(1, 0.0, False), Visit(1, 1.0, False)])
    with pytest.raises(InvalidOption, match="dated before"):
        summarize_changes([Visit(1, 5.0, False), Visit(2, 1.0, False)])
    with pytest.raises(InvalidOption, match="content hash"):
        Visit(1, 0.0, True)
    with pytest.raises(InvalidOption, match="batches"):
        summarize_changes([Visit(1, 0.0, False), Visit(2, 1.0, False)], total_batches=1)


def _seed(always: bool, changes: int, days: float = 16.0) -> ChangeSummary:
    if not always:
        return ChangeSummary(9, 5, 4, 0, days, False)
    return ChangeSummary(9, 9, 8, changes, days, True)


def test_table_9_net_row() -> None:
    # Seed 004 Table 9, "net": 116 seeds, 70 downloaded in every batch (60.3 %), of which
    # 45 unchanged (64.3 %) and 25 changed (35.7 %).
    seeds = [_seed(False, 0)] * 46 + [_seed(True, 0)] * 45 + [_seed(True, 2)] * 25
    (net,) = group_changes([("net", s) for s in seeds], observed="all-batches")
    assert (net.pages, net.observed, net.unchanged, net.changed) == (116, 70, 45, 25)
    assert round(net.observed_ratio * 100, 1) == 60.3
    assert round(net.unchanged_ratio * 100, 1) == 64.3
    assert round(net.changed_ratio * 100, 1) == 35.7
    assert net.change_interval_days == 8.0  # 16 days / 2 changes, averaged over changed seeds


def test_grouping_by_depth_counts_pages_downloaded_twice() -> None:
    # Tables 12–13 judge documents downloaded at least twice, not in every batch.
    docs = [
        (0, ChangeSummary(9, 1, 0, 0, 0.0, False)),
        (0, ChangeSummary(9, 2, 1, 1, 4.0, False)),
        (1, ChangeSummary(9, 9, 8, 0, 16.0, True)),
        (1, ChangeSummary(9, 3, 2, 2, 4.0, False)),
    ]
    d0, d1 = group_changes(docs, observed="twice")
    assert (d0.key, d0.pages, d0.observed, d0.changed, d0.change_interval_days) == (0, 2, 1, 1, 4.0)
    assert (d1.key, d1.observed, d1.unchanged, d1.changed, d1.change_interval_days) == (
        1,
        2,
        1,
        1,
        2.0,
    )
    with pytest.raises(InvalidOption):
        group_changes(docs, observed="sometimes")  # type: ignore[arg-type]


def test_link_kind_classes() -> None:
    # Seed 004 Table 13's classes: h = other URLs (scripts …), a = <a href>, f = <frame>.
    assert link_kind_class(0, 0, 0) == "000"
    assert link_kind_class(0, 3, 0) == "0a0"
    assert link_kind_class(2, 5, 1) == "haf"
    assert link_kind_class(1, 0, 1) == "h0f"
    produced = {link_kind_class(h, a, f) for h in (0, 1) for a in (0, 1) for f in (0, 1)}
    assert set(LINK_KIND_CLASSES) <= produced
    assert produced - set(LINK_KIND_CLASSES) == {"0af"}  # possible; the paper found none


def test_domain_suffixes() -> None:
    assert domain_suffix("www.snu.ac.kr") == "kr"  # Table 9
    assert domain_suffix("www.snu.ac.kr", 2) == "ac.kr"  # Table 10
    assert domain_suffix("WWW.Example.COM.") == "com"
    assert domain_suffix("127.0.0.1") == "ip"
    assert domain_suffix("[::1]") == "ip"
    assert domain_suffix("localhost", 2) == "localhost"


def test_table_7_batch_summary() -> None:
    rows = [
        (1, True, True),
        (1, True, False),
        (1, False, True),
        (1, False, False),
        (2, True, True),
        (2, False, True),
    ]
    assert summarize_batches(rows) == (
        BatchSummary(1, 2, 1, 4, 2),
        BatchSummary(2, 1, 1, 2, 2),
    )

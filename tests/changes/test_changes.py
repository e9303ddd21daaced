"""``dustless changes``: seed 004 §4 Tables 7–13, SS/FF and per-page rates from multi-batch DBs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from changes.history_builder import DAY, T0, Fetch, build_batches
from dustless.analysis._changes_db import crawl_change_report, read_histories
from dustless.cli.main import main
from dustless.store import open_crawl

# Seed 004 Table 8: seeds by number of successful downloads in 9 batches.
TABLE_8 = {9: 953, 8: 93, 7: 12, 6: 9, 5: 7, 4: 6, 3: 3, 2: 7, 1: 6, 0: 328}


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["changes", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def table8_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,424 seeds over 9 batches two days apart, each downloaded as often as Table 8 says."""
    downloads = [n for n, c in TABLE_8.items() for _ in range(c)]
    assert len(downloads) == 1424  # S = 1,424 (the text's "1428" is a typo)
    batches = []
    for b in range(9):
        fetches = [
            Fetch(f"http://s{i}.co.kr/", depth=0, doc="same")
            if b < n
            else Fetch(f"http://s{i}.co.kr/", depth=0, state="cTim", status=None)
            for i, n in enumerate(downloads)
        ]
        batches.append((2.0 * b, fetches))
    return build_batches(tmp_path_factory.mktemp("t8") / "crawl", batches)


def test_ss_ff_reproduce_table_8(table8_crawl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, str(table8_crawl))
    assert round(data["ss"], 4) == 0.9638
    assert round(data["ff"], 4) == 0.7426
    assert {r["downloads"]: r["seeds"] for r in data["seeds_by_downloads"]} == TABLE_8
    assert len(data["batches"]) == 9
    first = data["batches"][0]
    assert first["seeds_requested"] == 1424
    assert first["seeds_downloaded"] == 1424 - 328


def test_json_has_the_documented_keys(
    table8_crawl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, str(table8_crawl))
    for key in (
        "batches",
        "ss",
        "ff",
        "by_domain",
        "by_depth",
        "by_link_kind",
        "documents_by_downloads",
    ):
        assert key in data
    # Nothing changed: the change interval is null, not 0 or infinity.
    (kr,) = data["by_domain"]
    assert kr["key"] == "kr"
    assert kr["observed"] == 953  # Table 8's |S(9)|: downloaded in every batch
    assert kr["changed"] == 0
    assert kr["change_interval_days"] is None
    assert all(p["change_interval_days"] is None for p in data["pages"])


def _mixed(tmp: Path) -> Path:
    """Four batches, days 0, 2, 4, 6 (seed 004 crawled every two days)."""
    plan = []
    for b, day in enumerate((0.0, 2.0, 4.0, 6.0)):
        plan.append(
            (
                day,
                [
                    # changes in every batch: 3 changes in 6 days -> interval 2 days
                    Fetch("http://a.co.kr/", depth=0, doc=f"a{b}", links=(1, 3, 0)),
                    # never changes
                    Fetch("http://b.com/", depth=0, doc="b", links=(0, 0, 1)),
                    # changes once (between batches 2 and 3) -> 6 days / 1
                    Fetch("http://b.com/x", depth=1, doc="x1" if b < 2 else "x2", links=(1, 3, 0)),
                    # a 304 after the first batch: unchanged, no download needed
                    Fetch(
                        "http://b.com/y",
                        depth=2,
                        doc="y",
                        state="OK" if b == 0 else "code",
                        status=200 if b == 0 else 304,
                        links=(0, 0, 0),
                    ),
                    # failed twice before succeeding in each batch: the last fetch counts
                    Fetch("http://c.net/", depth=0, doc="c", retries=2, links=(0, 2, 0)),
                    *([Fetch("http://c.net/new", depth=1, doc="n")] if b == 3 else []),
                ],
            )
        )
    return build_batches(tmp / "crawl", plan, probe_after=2)


def test_tables_on_a_small_collection(tmp_path: Path) -> None:
    out = _mixed(tmp_path)
    with open_crawl(out) as db:
        assert db.probe_batches() == (3,)
        rep = crawl_change_report(db)
    assert [b.batch for b in rep.batches] == [1, 2, 4, 5]  # the probe batch is left out
    assert [(b.batch_time - T0) / DAY for b in rep.batches] == [0, 2, 4, 6]
    assert rep.batches[-1].documents_requested == 6
    assert rep.batches[-1].documents_downloaded == 6
    assert rep.seeds == 3
    assert dict(rep.seeds_by_downloads)[4] == 3
    assert rep.ss == 1.0
    assert rep.ff is None  # no seed ever failed: FF is undefined
    by_domain = {g.key: g for g in rep.by_domain}
    assert by_domain["kr"].changed == 1
    assert by_domain["kr"].change_interval_days == pytest.approx(2.0)
    assert by_domain["com"].changed == 0
    assert by_domain["com"].change_interval_days is None
    assert {g.key for g in rep.by_domain_kr} == {"co.kr", "b.com", "c.net"}
    pages = {p.url: p for p in rep.pages}
    assert pages["http://b.com/x"].changes == 1
    assert pages["http://b.com/x"].change_interval_days == pytest.approx(6.0)
    assert pages["http://b.com/y"].downloads == 4  # three 304s confirmed the content
    assert pages["http://b.com/y"].changes == 0
    assert pages["http://c.net/"].downloads == 4
    new = pages["http://c.net/new"]
    assert (new.downloads, new.naive_rate, new.poisson_rate) == (1, None, None)
    assert dict((n, c) for n, c, _ in rep.documents_by_downloads) == {1: 1, 4: 5}
    depth = {g.key: g for g in rep.by_depth}
    assert (depth[0].observed, depth[0].changed) == (3, 1)
    assert (depth[1].pages, depth[1].observed, depth[1].changed) == (2, 1, 1)
    kinds = {g.key: g for g in rep.by_link_kind}
    assert set(kinds) == {"ha0", "00f", "000", "0a0"}
    assert kinds["ha0"].changed == 2
    assert kinds["000"].unchanged == 1


def test_rates_naive_and_corrected(tmp_path: Path) -> None:
    out = _mixed(tmp_path)
    with open_crawl(out) as db:
        rep = crawl_change_report(db)
    a = next(p for p in rep.pages if p.url == "http://a.co.kr/")
    # 3 of 3 two-day intervals changed: naive 3/6 per day; corrected −ln(0.5/3.5)/2.
    assert a.naive_rate == pytest.approx(0.5)
    assert a.poisson_rate == pytest.approx(math.log(7) / 2)
    assert a.poisson_rate > a.naive_rate
    b = next(p for p in rep.pages if p.url == "http://b.com/")
    assert b.naive_rate == 0.0
    assert b.poisson_rate == 0.0
    # The feature model predicts a rate for the page seen only once.
    new = next(p for p in rep.pages if p.url == "http://c.net/new")
    assert new.predicted_rate is not None
    assert new.predicted_rate >= 0


def test_histories_keep_each_batch_apart(tmp_path: Path) -> None:
    out = _mixed(tmp_path)
    with open_crawl(out) as db:
        hist = {h.url: h for h in read_histories(db)}
    c = hist["http://c.net/"]
    assert [v.batch for v in c.visits] == [1, 2, 4, 5]
    assert all(v.success for v in c.visits)
    y = hist["http://b.com/y"]
    assert len({v.content_hash for v in y.visits}) == 1


def test_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _mixed(tmp_path)
    assert main(["changes", str(out)]) == 0
    text = capsys.readouterr().out
    for title in (
        "Table 7",
        "Table 8",
        "SS (formula 1) = 1.0000",
        "Table 9",
        "Table 10",
        "Table 11",
        "Table 12",
        "Table 13",
        "bias-corrected",
    ):
        assert title in text
    assert "http://a.co.kr/" in text


def test_bad_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["changes", str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["changes", str(tmp_path), "--pages", "-1"]) == 2


def test_one_batch_has_no_ss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = build_batches(tmp_path / "c", [(0.0, [Fetch("http://a.kr/", depth=0)])])
    data = _json(capsys, str(out))
    assert data["ss"] is None
    assert data["ff"] is None
    assert data["documents_by_downloads"] == [{"downloads": 1, "documents": 1, "share": 1.0}]


def test_link_kind_ignores_revisits(tmp_path: Path) -> None:
    # The engine does not extract links from a revisit (payload seen before): its zero
    # counts must not turn an "0a0" page into "000".
    out = build_batches(
        tmp_path / "c",
        [
            (0.0, [Fetch("http://a.kr/", depth=0, doc="v", links=(0, 3, 0))]),
            (1.0, [Fetch("http://a.kr/", depth=0, doc="v", links=(0, 0, 0), revisit=True)]),
        ],
    )
    with open_crawl(out) as db:
        (h,) = read_histories(db)
    assert h.link_kind == "0a0"


def test_domain_suffix_ignores_the_port(tmp_path: Path) -> None:
    out = build_batches(
        tmp_path / "c",
        [
            (0.0, [Fetch("http://a.co.kr:8080/", depth=0)]),
            (1.0, [Fetch("http://a.co.kr:8080/", depth=0)]),
        ],
    )
    with open_crawl(out) as db:
        rep = crawl_change_report(db)
    assert [g.key for g in rep.by_domain] == ["kr"]
    assert [g.key for g in rep.by_domain_kr] == ["co.kr"]

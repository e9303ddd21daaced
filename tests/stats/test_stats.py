"""``dustless stats``: seed 004 §3's tables from a crawl DB built through the store's API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dustless.analysis._jsonio import from_jsonable, to_jsonable
from dustless.analysis._stats import (
    CrawlStats,
    StateCount,
    crawl_stats,
    seed_form,
    seed_string,
    size_histogram,
)
from dustless.analysis._text import format_stats
from dustless.cli.main import main
from dustless.errors import InvalidOption
from dustless.store import open_crawl
from stats.crawl_builder import Page, build_crawl

KIB = 1024

PAGES = [
    # Seeds (depth 0): Table 1 counts them apart.
    Page("http://a.test/", depth=0, links=(1, 3, 0), internal=3, size=10 * KIB),
    Page("http://www.b.co.kr/", depth=0, state="noIP", status=None),
    Page("http://c.d.test:8080/", depth=0, links=(0, 0, 2), internal=2, at=1),
    # Documents.
    Page("http://a.test/x", doc="X", size=300 * KIB, at=1.5),
    Page("http://a.test/X", doc="X", size=300 * KIB, at=2),
    Page("http://a.test/y", state="code", status=404, at=3, extra_fetches=["cTim", "cErr"]),
    Page("http://a.test/r", state="robots", status=None, at=3),
    Page("http://a.test/big", size=600 * KIB, at=4, links=(2, 5, 1), internal=4),
    Page("http://a.test/z/", depth=2, links=(0, 0, 0), internal=0, at=70),
    Page("http://c.d.test:8080/f", links=(1, 0, 0), internal=0, at=5),
]


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_crawl(tmp_path_factory.mktemp("stats") / "crawl", PAGES)


@pytest.fixture(scope="module")
def stats(crawl: Path) -> CrawlStats:
    with open_crawl(crawl) as db:
        return crawl_stats(db)


def _counts(rows: tuple[StateCount, ...]) -> dict[str, int]:
    return {r.state: r.count for r in rows}


def test_tables_1_and_2_count_each_urls_last_fetch(stats: CrawlStats) -> None:
    assert _counts(stats.seed_states) == {"OK": 2, "noIP": 1}
    # /y was tried three times (cTim, cErr, then 404): it counts once, as it ended.
    assert _counts(stats.document_states) == {"OK": 7, "code": 1, "noIP": 1, "robots": 1}
    assert stats.fetches == 10
    assert stats.requested == 9  # the robots.txt refusal was never a request
    assert stats.downloaded == 7
    assert [r.state for r in stats.document_states] == ["OK", "code", "noIP", "robots"]
    assert sum(r.share for r in stats.document_states) == pytest.approx(1.0)


def test_table_3_url_lengths(stats: CrawlStats) -> None:
    seed, doc = stats.url_lengths
    # Seed strings omit the scheme and keep the port: "a.test" (6), "c.d.test:8080" (13).
    assert (seed.kind, seed.count, seed.min, seed.max) == ("seed", 2, 6, 13)
    assert seed.mean == pytest.approx(9.5)
    # Document strings omit their seed's: the seeds themselves are 0, "/big" is "big" (3).
    assert (doc.kind, doc.count, doc.min, doc.max) == ("document", 7, 0, 3)


def test_table_4_seed_forms() -> None:
    assert seed_string("http://www.b.co.kr/") == "www.b.co.kr"
    assert seed_form("http://www.b.co.kr/") == "xxx.xxx.xxx.xxx"
    assert seed_form("http://a.test:8080/") == "xxx.xxx"
    assert seed_form("http://localhost/") == "xxx"
    assert seed_form("http://a.test/some/path") == "other"
    assert seed_form("http://[::1]/") == "other"


def test_table_4_from_the_crawl(stats: CrawlStats) -> None:
    forms = {f.form: f.count for f in stats.seed_forms}
    assert forms == {
        "xxx": 0,
        "xxx.xxx": 1,
        "xxx.xxx.xxx": 1,
        "xxx.xxx.xxx.xxx": 1,
        "xxx.xxx.xxx.xxx.xxx": 0,
        "other": 0,
    }


def test_table_5_sizes_in_256k_buckets(stats: CrawlStats) -> None:
    by_label = {b.label: b.count for b in stats.sizes}
    assert by_label["~256K"] == 4
    assert by_label["~512K"] == 2
    assert by_label["~768K"] == 1
    assert len(stats.sizes) == 8
    assert stats.sizes[-1].label == "~2048K"
    assert stats.max_size == 600 * KIB
    assert stats.mean_size > 0


def test_fig_4_storage(stats: CrawlStats, crawl: Path) -> None:
    assert stats.storage, "the builder writes real WARC records"
    assert stats.raw_bytes >= 1200 * KIB
    assert 0 < stats.stored_bytes < stats.raw_bytes  # padding compresses
    assert {r.file for r in stats.storage} <= {p.name for p in (crawl / "warc").iterdir()}


def test_table_6_by_depth(stats: CrawlStats) -> None:
    rows = {d.depth: (d.requested, d.downloaded, d.internal_links) for d in stats.depths}
    assert rows == {0: (3, 2, 5), 1: (5, 4, 6), 2: (1, 1, 0)}
    assert stats.depths[0].links_per_document == 2.5


def test_table_13_link_kinds(stats: CrawlStats) -> None:
    kinds = {k.kind: k.documents for k in stats.link_kinds}
    assert kinds["ha0"] == 1
    assert kinds["00f"] == 1
    assert kinds["0a0"] == 2
    assert kinds["haf"] == 1
    assert kinds["h00"] == 1
    assert kinds["000"] == 1
    assert sum(kinds.values()) == stats.downloaded


def test_time_line_and_hosts(stats: CrawlStats) -> None:
    assert sum(c for b in stats.timeline for _, c in b.states) == stats.fetches
    assert stats.bucket_seconds == 2.0  # 70 s of crawl in at most 60 intervals
    assert stats.top_hosts[0].host == "a.test"
    assert stats.top_hosts[0].requested == 6
    assert stats.pages_per_second == pytest.approx(7 / 70)


def test_json_round_trip(stats: CrawlStats) -> None:
    data = json.loads(json.dumps(to_jsonable(stats)))
    assert from_jsonable(CrawlStats, data) == stats
    with pytest.raises(InvalidOption, match="depths"):
        from_jsonable(CrawlStats, {**data, "depths": "x"})


def test_probe_batches_are_left_out(tmp_path: Path) -> None:
    out = build_crawl(tmp_path / "c", PAGES[:4])
    with open_crawl(out) as db:
        before = crawl_stats(db)
    build_crawl(
        out,
        [Page("http://a.test/probe-form", at=100)],
        batch_config=json.dumps({"kind": "evaluate-fetch"}),
    )
    with open_crawl(out) as db:
        after = crawl_stats(db)
        assert db.probe_batches() == (2,)
    assert after.document_states == before.document_states
    assert after.urls_known == before.urls_known


def test_cli_text_and_json(crawl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(crawl)]) == 0
    text = capsys.readouterr().out
    for title in (
        "Table 1.",
        "Table 2.",
        "Table 3.",
        "Table 4.",
        "Table 5.",
        "Fig. 4.",
        "Table 6.",
    ):
        assert title in text
    assert main(["stats", str(crawl), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["downloaded"] == 7
    assert {"seed_states", "document_states", "url_lengths", "seed_forms", "sizes"} <= set(data)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "no such directory"),
        (lambda p: p, "not a crawl directory"),
        (lambda p: (p / "f.txt").write_text("x") and p / "f.txt", "not a directory"),
        (lambda p: (p / "crawl.db").write_text("not sqlite") and p, "not a"),
    ],
)
def test_cli_rejects_what_is_not_a_crawl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, message: str
) -> None:
    target = make(tmp_path)  # type: ignore[operator]
    assert main(["stats", str(target)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_cli_unknown_batch(crawl: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(crawl), "--batch", "9"]) == 2
    assert "no crawl batch 9" in capsys.readouterr().err


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["stats", "--help"])
    assert "examples:" in capsys.readouterr().out


def test_state_order_lists_every_network_state_once() -> None:
    # The statistics repeat the fetcher's states (so they need not import aiohttp): this is
    # what keeps the two from drifting apart.
    from dustless.analysis._stats import STATE_ORDER
    from dustless.fetch import NetState

    assert sorted(STATE_ORDER) == sorted(s.value for s in NetState)


def test_code_by_http_status_in_tables_1_and_2(tmp_path: Path) -> None:
    # The state "code" lumps redirects with errors; stats breaks it down by status.
    pages = [
        Page("http://a.test/", depth=0),
        Page("http://b.test/", depth=0, state="code", status=301, location="http://b.test/x"),
        *(
            Page(f"http://a.test/m{i}", state="code", status=301, location="http://a.test/")
            for i in range(5)
        ),
        Page("http://a.test/gone", state="code", status=404),
        Page("http://a.test/oops", state="code", status=500),
        Page("http://a.test/img", state="code", status=200, mime="image/png"),
    ]
    crawl = build_crawl(tmp_path / "c", pages)
    with open_crawl(crawl) as db:
        st = crawl_stats(db)
    assert [(c.status, c.count) for c in st.document_codes] == [
        (200, 1),
        (301, 6),
        (404, 1),
        (500, 1),
    ]
    assert [(c.status, c.count) for c in st.seed_codes] == [(301, 1)]
    assert st.document_codes[1].share == pytest.approx(6 / 10)
    text = format_stats(st)
    table2 = text.split("Table 2.")[1].split("Table 3.")[0]
    for row in (
        "code",
        "  200 not HTML",
        "  301 redirect",
        "  404 client error",
        "  500 server error",
    ):
        assert row in table2
    again = from_jsonable(CrawlStats, json.loads(json.dumps(to_jsonable(st))))
    assert again.document_codes == st.document_codes


def test_size_histogram_buckets_come_from_the_data() -> None:
    # A thousand pages of about 1 KB and one of 2 MB: 256 KiB buckets make that one bar.
    sizes = [800 + (i * 37) % 500 for i in range(1000)] + [2_000_000]
    buckets = size_histogram(sizes)
    assert 8 <= len(buckets) <= 18
    assert sum(b.count for b in buckets) == len(sizes)
    inner = [b for b in buckets if b.upper is not None]
    assert inner[0].lower < 800 <= inner[1].upper  # type: ignore[operator]
    assert max(b.count for b in inner) < 200  # spread over several bars
    assert buckets[-1].upper is None
    assert buckets[-1].count == 1  # the outlier, in an open bucket of its own
    assert buckets[-1].label == "> 1.3k"
    assert size_histogram([]) == ()
    assert size_histogram([0, 0, 10])[0].count == 2  # empty bodies shown apart


def test_the_crawls_histogram(stats: CrawlStats) -> None:
    assert sum(b.count for b in stats.size_histogram) == stats.downloaded


def test_text_counts_have_the_right_plural(tmp_path: Path) -> None:
    one = build_crawl(tmp_path / "one", [Page("http://a.test/", depth=0, links=(0, 0, 0))])
    with open_crawl(one) as db:
        text = format_stats(crawl_stats(db))
    head = text.splitlines()[0]
    assert ": batch 1; 1 URL known, 1 seed, 1 host; 1 requested, 1 downloaded;" in head, head
    assert "Documents: 1 complete 2xx download, 1 distinct" in text
    assert "; 0 duplicates" in text


def test_text_counts_have_thousands_separators_and_plurals(stats: CrawlStats) -> None:
    import dataclasses

    big = dataclasses.replace(stats, urls_known=12_345, seeds_known=2, hosts=1_001)
    head = format_stats(big).splitlines()[0]
    assert ": batch 1; 12,345 URLs known, 2 seeds, 1,001 hosts;" in head, head

"""One table model for the statistics (``stat_tables``): ``stats`` prints it as text, the
report renders the same tables as HTML; and the statistics are a pure function of the
store's rows (``stats_from_reads``)."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest

from dustless.analysis import (
    HTML_STYLE,
    STATE_MEANINGS,
    TEXT_STYLE,
    CrawlStats,
    Table,
    crawl_stats,
    format_stats,
    render_text,
    stat_tables,
)
from dustless.analysis._stats import stats_from_reads
from dustless.report import render_report
from dustless.store import BatchInfo, StatReads, StatTotals, open_crawl
from stats.crawl_builder import Page, build_crawl

PAGES = [
    Page("http://a.test/", depth=0, links=(1, 3, 0), internal=3, size=10_000),
    Page("http://a.test/x", doc="X", size=300_000, at=1.5),
    Page("http://a.test/y", state="code", status=404, at=3),
    Page("http://a.test/r", state="robots", status=None, at=3),
]


@pytest.fixture(scope="module")
def stats(tmp_path_factory: pytest.TempPathFactory) -> CrawlStats:
    out = build_crawl(tmp_path_factory.mktemp("tables") / "crawl", PAGES)
    with open_crawl(out) as db:
        return crawl_stats(db)


def test_text_and_html_render_the_same_tables(stats: CrawlStats) -> None:
    text = format_stats(stats)
    html = render_report(stats, None)
    plain, rich = stat_tables(stats, TEXT_STYLE), stat_tables(stats, HTML_STYLE)
    for table in (plain.seed_states, plain.states, plain.lengths, plain.depths, plain.hosts):
        assert render_text(table) in text
    for table in (rich.seed_states, rich.states, rich.lengths, rich.depths, rich.hosts):
        assert f"<caption>{escape(table.title)}</caption>" in html
        for cell in table.rows[0]:
            assert f">{escape(cell)}</td>" in html
    # The same figures in both: the media differ in wording, not in what they count.
    assert plain.lengths.rows == rich.lengths.rows
    assert plain.link_kinds.rows == rich.link_kinds.rows
    assert [r[-2:] for r in plain.states.rows] == [r[-2:] for r in rich.states.rows]
    assert rich.states.rows[0][:2] == ("OK", STATE_MEANINGS["OK"])
    assert plain.states.columns == ("state", "count", "share")
    assert "  404 client error" in [r[0] for r in plain.states.rows]
    assert (plain.filtering, plain.canonicals, plain.learned) == (None, None, None)


def test_a_tables_notes_are_rendered_in_both_media() -> None:
    t = Table("T", ("a", "n"), (("x", "1"),), (False, True), notes=("why it counts so",))
    assert render_text(t) == "T\na  n\n-  -\nx  1\nwhy it counts so"


def _reads(**kw: object) -> StatReads:
    base: dict[str, object] = {
        "totals": StatTotals(3, 1, 3, 2, 2, 100.0, 125.0, 1),
        "seed_states": {"OK": 1},
        "document_states": {"OK": 2, "robots": 1},
        "seed_codes": (),
        "document_codes": (),
        "truncations": (("tooBig", None, 2), ("dTim", "stalled", 1)),
        "seeds": (("http://a.test/", "OK"),),
        "document_lengths": (1, 0, 0, 0.0),
        "size_buckets": {0: 2},
        "download_sizes": (10, 20),
        "mean_size": 15.0,
        "max_size": 20,
        "storage": (("a.warc.gz", 2, 30, 20),),
        "depths": ((0, 1, 1, 3), (1, 1, 1, 0)),
        "link_kinds": ((False, True, False, 2),),
        "filtering": (),
        "timeline": ((0, "OK", 1), (2, "OK", 1), (2, "robots", 1)),
        "bucket_seconds": 10.0,
        "documents": 2,
        "distinct_documents": 1,
        "documents_by_host": {"a.test": 1},
        "top_hosts": (("a.test", 2, 2, 30),),
        "canonicals": None,
    }
    return StatReads(**{**base, **kw})  # type: ignore[arg-type]


def test_the_statistics_are_a_pure_function_of_the_stores_rows() -> None:
    batches = (BatchInfo(1, 100.0, 130.0, 100.0, "{}", False),)
    st = stats_from_reads(_reads(), "somewhere", batches)
    assert (st.directory, st.batches, st.started_at, st.ended_at) == (
        "somewhere",
        (1,),
        100.0,
        130.0,
    )
    # An interval without fetches is still a bar of the timeline.
    assert [(b.start, dict(b.states)) for b in st.timeline] == [
        (0.0, {"OK": 1}),
        (10.0, {}),
        (20.0, {"OK": 1, "robots": 1}),
    ]
    assert st.pages_per_second == 2 / 25.0
    assert {t.reason: t.count for t in st.truncated}["length"] == 2
    assert st.top_hosts[0].distinct == 1
    assert [(k.kind, k.documents, k.share) for k in st.link_kinds if k.documents] == [
        ("0a0", 2, 1.0)
    ]
    assert st.depths[0].links_per_document == 3.0
    assert (st.raw_bytes, st.stored_bytes) == (30, 20)
    assert (st.seed_forms[0].form, st.seed_forms[0].count) == ("xxx", 0)
    assert st.seed_forms[1].count == 1  # "a.test" has the form xxx.xxx


def test_no_fetch_no_timeline(tmp_path: Path) -> None:
    reads = _reads(totals=StatTotals(0, 0, 0, 0, 0, None, None, 0), timeline=())
    st = stats_from_reads(reads, str(tmp_path), ())
    assert st.timeline == ()
    assert st.pages_per_second == 0.0

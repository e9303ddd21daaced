"""The report's charts and explanations: axes that can be read, small counts that can be
seen, buckets from the data, the page's width used, abbreviations and odd figures explained.
The layout is checked where it is drawn: in Debian's headless Chromium."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from html import unescape as html_unescape
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

import support
from dustless.analysis._stats import CrawlStats, crawl_stats
from dustless.fetch import NetState
from dustless.report import BarChart, Chart, Section, Series, render_page, render_report
from dustless.report._sections import STATE_MEANINGS
from dustless.report._svg import format_bytes, render_bar_chart
from dustless.store import open_crawl
from stats.crawl_builder import Page, build_crawl

PAGES = [
    Page("http://a.test/", depth=0, size=900),
    Page("http://b.test/", depth=0, state="cErr", status=None),
    *(Page(f"http://a.test/p{i}", size=700 + 13 * i, doc=f"p{i}") for i in range(40)),
    Page("http://a.test/huge", size=400_000, doc="huge"),
    Page("http://a.test/old", state="code", status=301, location="http://a.test/"),
    Page("http://a.test/gone", state="code", status=404),
    Page("http://a.test/slow", state="dTim", status=200),
]


@pytest.fixture(scope="module")
def stats(tmp_path_factory: pytest.TempPathFactory) -> CrawlStats:
    out = build_crawl(tmp_path_factory.mktemp("charts") / "crawl", PAGES)
    with open_crawl(out) as db:
        return crawl_stats(db)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=support.chromium(), args=list(support.CHROMIUM_ARGS))
        try:
            yield b
        finally:
            b.close()


# Every <text> of every chart, with its box and its role, and the page's content width.
_LAYOUT = """() => {
    const main = document.querySelector('main');
    const style = getComputedStyle(main);
    const content = main.clientWidth - parseFloat(style.paddingLeft)
        - parseFloat(style.paddingRight);
    return {content: content, charts: [...document.querySelectorAll('svg.chart')].map(svg => {
        const s = svg.getBoundingClientRect();
        return {id: svg.id, box: [s.left, s.top, s.right, s.bottom],
            texts: [...svg.querySelectorAll('text')].map(t => {
                const b = t.getBoundingClientRect();
                return {text: t.textContent, rotated: t.hasAttribute('transform'),
                        anchor: t.getAttribute('text-anchor'),
                        box: [b.left, b.top, b.right, b.bottom]};
            })};
    })};
}"""


def _inside(inner: list[float], outer: list[float]) -> bool:
    return (
        inner[0] >= outer[0] - 0.5
        and inner[1] >= outer[1] - 0.5
        and inner[2] <= outer[2] + 0.5
        and inner[3] <= outer[3] + 0.5
    )


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def test_axis_labels_and_titles_are_whole_and_apart_in_chromium(browser: Any, tmp_path: Path):
    # Fig. 4 of a crawl over 10 MB: the tick labels lost their first digit (".2,500,000")
    # and the axis title was drawn over them.
    storage = BarChart(
        "Storage per WARC file: compressed vs uncompressed (Fig. 4)",
        ("dustless-00001.warc.gz", "dustless-00002.warc.gz"),
        (Series("uncompressed", (12_400_000.0, 9_000_000.0)), Series("stored", (3e6, 2e6))),
        y_label="bytes",
        unit="bytes",
    )
    counts = BarChart(
        "Fetches by network state",
        ("OK", "code 301", "hErr", "dTim"),
        (Series("all documents", (12_000.0, 1_052.0, 1.0, 1.0)),),
        y_label="fetches",
        value_labels=True,
    )
    many = BarChart(
        "Network states over time (600 s intervals)",
        tuple(f"{600 * i}s" for i in range(60)),
        (Series("OK", tuple(float(i % 7) for i in range(60))),),
        y_label="fetches",
        x_label="time since the first fetch",
    )
    html = render_page(
        "t", "s", [Section("c", "charts", tuple(Chart(c) for c in (storage, counts, many)))]
    )
    path = tmp_path / "charts.html"
    path.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(path.as_uri(), wait_until="load")
    layout = page.evaluate(_LAYOUT)
    page.close()
    charts = layout["charts"]
    assert len(charts) == 3
    for chart in charts:
        # The charts use the page's width (they used 650 of 1,100 px).
        width = chart["box"][2] - chart["box"][0]
        assert width >= 0.95 * layout["content"] - 20, (chart["id"], width, layout["content"])
        texts = chart["texts"]
        for t in texts:
            assert _inside(t["box"], chart["box"]), (chart["id"], t)
        ticks = [t for t in texts if t["anchor"] == "end" and not t["rotated"]]
        title = [t for t in texts if t["rotated"] and t["anchor"] == "middle"]
        assert len(title) == 1
        for tick in ticks:
            assert not _overlap(tick["box"], title[0]["box"]), (chart["id"], tick)
        labels = [t for t in texts if t not in ticks and t not in title and not t["rotated"]]
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                assert not _overlap(a["box"], b["box"]), (chart["id"], a, b)
        # Turned labels (35°) are parallel: 11 px text needs their ends 11 / sin 35° apart.
        turned = sorted(t["box"][2] for t in texts if t["rotated"] and t["anchor"] == "end")
        assert all(b - a >= 11 / 0.5736 for a, b in pairwise(turned))
    storage_ticks = [t["text"] for t in charts[0]["texts"]]
    assert "12.5 MB" in storage_ticks
    assert not any(re.fullmatch(r"[\d,]{9,}", t) for t in storage_ticks)
    # A count of 1 next to 12,000 is written on its bar.
    assert [t["text"] for t in charts[1]["texts"]].count("1") >= 2


def test_byte_axis_units() -> None:
    assert [format_bytes(v) for v in (0, 512, 2_500, 12_500_000, 1.5e9)] == [
        "0",
        "512 B",
        "2.5 kB",
        "12.5 MB",
        "1.5 GB",
    ]
    svg = render_bar_chart(
        BarChart("s", ("a",), (Series("x", (25_000_000.0,)),), unit="bytes"), "c1"
    )
    assert ">25 MB<" in svg
    assert "25,000,000<" not in svg


def test_every_network_state_is_explained() -> None:
    assert set(STATE_MEANINGS) == {s.value for s in NetState}


def test_state_tables_explain_states_and_break_code_down(stats: CrawlStats) -> None:
    html = render_report(stats, None)
    table2 = html.split("Table 2: all documents")[1].split("</table>")[0]
    for cells in (
        ("cErr", STATE_MEANINGS["cErr"]),
        ("dTim", STATE_MEANINGS["dTim"]),
        ("code", STATE_MEANINGS["code"]),
        ("  301", "redirect"),
        ("  404", "client error"),
    ):
        assert "<td>{}</td><td>{}</td>".format(*cells) in table2, cells
    chart = html.split("Fetches by network state")[2].split("</svg>")[0]
    assert ">code 301<" in chart
    assert ">code 404<" in chart


def test_size_chart_buckets_come_from_the_data(stats: CrawlStats) -> None:
    html = render_report(stats, None)
    chart = html.split('<title id="chart-2-t">')[1].split("</svg>")[0]
    assert chart.startswith("Downloaded documents by size")
    labels = [
        html_unescape(x)
        for x in re.findall(r'font-size="11"(?: transform="[^"]*")?>([^<]+)</text>', chart)
    ]
    buckets = [b.label for b in stats.size_histogram]
    assert [label for label in labels if label in buckets] == buckets
    assert len(buckets) >= 5  # not one bar of "~256K"
    assert buckets[-1].startswith(">")  # the 400 kB page has an open bucket of its own


def test_surprising_figures_are_explained(stats: CrawlStats) -> None:
    html = render_report(stats, None)
    # Three different seed counts, each said what it counts.
    assert "Seeds: 2 known" in html
    assert "2 seed documents recorded (Table 1" in html
    assert "1 downloaded (Table 3)" in html
    # The shortest document URL is 0 long: the seed's own document.
    assert "the seed&#x27;s own document has length 0" in html
    # A stored size larger than the payloads.
    bigger = dataclasses.replace(stats, raw_bytes=1_000, stored_bytes=1_130)
    page = render_report(bigger, None)
    assert "(113.0%). More than 100 %: the stored size counts every record" in page
    assert "More than 100 %" not in html or stats.stored_bytes > stats.raw_bytes

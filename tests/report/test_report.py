"""``dustless report``: one self-contained HTML file, checked in a real headless Chromium.

One browser for the module (Debian's ``/usr/bin/chromium``, never ``playwright install``):
the file opens from disk, the console stays silent (a CSP violation would be an error), every
chart has a non-empty bounding box with visible bars, and a screenshot is saved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import support
from dustless.analysis._evaluate import Evaluation, evaluate_crawl
from dustless.analysis._jsonio import from_jsonable, to_jsonable
from dustless.analysis._stats import CrawlStats, crawl_stats
from dustless.cli.main import main
from dustless.report import (
    BarChart,
    Chart,
    Paragraph,
    Section,
    Series,
    Table,
    content_security_policy,
    render_report,
)
from dustless.store import open_crawl
from stats.crawl_builder import Page, build_crawl

# A host name no DNS would hold, but a DB can: it reaches the report's host table.
HOSTILE = 'evil"><img src=x onerror=alert(1)><svg onload=alert(2)>.test'

PAGES = [
    Page("http://a.test/", depth=0, links=(1, 4, 0), internal=4),
    Page("http://www.a.test/", depth=0, links=(1, 4, 0), internal=4, at=0.5),
    Page("http://a.test/Docs/x", doc="X", at=1),
    Page("http://a.test/docs/x", doc="X", at=2, size=300_000),
    Page("http://a.test/pubs", state="code", status=301, location="http://a.test/pubs/", at=3),
    Page("http://a.test/pubs/", doc="P", at=4, links=(0, 0, 2)),
    Page("http://a.test/s/", doc="S", depth=2, at=30),
    Page("http://a.test/s/index.html", doc="S", depth=2, at=31),
    Page("http://a.test/gone", state="code", status=404, at=40),
    Page("http://a.test/slow", state="dTim", status=200, at=50),
    Page(f"http://{HOSTILE}/", doc="H", at=60),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlStats, Evaluation, Path]:
    out = build_crawl(tmp_path_factory.mktemp("report") / "crawl", PAGES)
    with open_crawl(out) as db:
        return crawl_stats(db), evaluate_crawl(db), out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=support.chromium(), args=list(support.CHROMIUM_ARGS))
        try:
            yield b
        finally:
            b.close()


def _open(browser: Any, path: Path, shot: Path) -> dict[str, Any]:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    charts = page.eval_on_selector_all(
        "svg.chart",
        """els => els.map(e => {
            const r = e.getBoundingClientRect();
            const bars = [...e.querySelectorAll('rect')].filter(x => {
                const b = x.getBoundingClientRect(); return b.width > 0 && b.height > 0;
            }).length;
            return {id: e.id, width: r.width, height: r.height, bars: bars};
        })""",
    )
    alerts = page.evaluate(
        "() => document.querySelectorAll('script, img, iframe, [onload], [onerror]').length"
    )
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    return {"messages": messages, "charts": charts, "requests": requests, "elements": alerts}


def test_report_renders_in_chromium(
    results: tuple[CrawlStats, Evaluation, Path], browser: Any, tmp_path: Path
) -> None:
    stats, ev, _ = results
    extra = Section(
        "changes",
        "Hook for the change charts",
        (Chart(BarChart("changes", ("a", "b"), (Series("n", (1.0, 3.0)),))),),
    )
    html = render_report(stats, ev, extra_sections=[extra], generated="test run")
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    shot = tmp_path / "report.png"
    seen = _open(browser, path, shot)
    assert seen["messages"] == []
    # Figs. 2–5 for the factors with sets, states, sizes, storage, depth, link kinds,
    # states over time, pages/s, and the extra section's chart.
    assert len(seen["charts"]) >= 10
    for chart in seen["charts"]:
        assert chart["width"] > 100, chart
        assert chart["height"] > 50, chart
        assert chart["bars"] >= 1, chart
    # Nothing but the file itself was requested: no CDN, no fonts, no images.
    assert seen["requests"] == [path.as_uri()]
    assert seen["elements"] == 0  # the hostile URL stayed text
    assert shot.stat().st_size > 10_000


def test_report_is_self_contained_and_escaped(
    results: tuple[CrawlStats, Evaluation, Path],
) -> None:
    stats, ev, _ = results
    html = render_report(stats, ev)
    assert "<script" not in html.lower()
    assert "<img" not in html.lower()
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert f'content="{content_security_policy()}"'.replace("'", "&#x27;") in html
    assert "default-src 'none'" in content_security_policy()
    assert "unsafe-inline" not in content_security_policy()


def test_sections_from_json_round_trip(results: tuple[CrawlStats, Evaluation, Path]) -> None:
    stats, ev, _ = results
    stats2 = from_jsonable(CrawlStats, json.loads(json.dumps(to_jsonable(stats))))
    ev2 = from_jsonable(Evaluation, json.loads(json.dumps(to_jsonable(ev))))
    assert render_report(stats2, ev2) == render_report(stats, ev)


def test_only_one_input_and_extra_blocks() -> None:
    html = render_report(
        None,
        None,
        extra_sections=[
            Section(
                "x<y",
                "A & B",
                (
                    Paragraph("1 < 2"),
                    Table("t", ("h",), (("<b>",),)),
                ),
            )
        ],
    )
    assert "A &amp; B" in html
    assert "1 &lt; 2" in html
    assert "&lt;b&gt;" in html
    assert 'id="x-y"' in html


def test_chart_rejects_mismatched_series() -> None:
    with pytest.raises(ValueError, match="2 values for 3 categories"):
        BarChart("t", ("a", "b", "c"), (Series("s", (1.0, 2.0)),))


def test_cli_writes_the_file(
    results: tuple[CrawlStats, Evaluation, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dustless.cli import report as report_cli

    _, _, crawl = results
    seen: list[Path | None] = []

    def provider(db: Any) -> list[Section]:
        seen.append(db.path)  # the crawl the report has open
        return [Section("later", "A section from dustless changes", (Paragraph("changes here"),))]

    monkeypatch.setattr(report_cli, "SECTION_PROVIDERS", [provider])
    out = tmp_path / "r.html"
    assert main(["report", str(crawl), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "seed 000 Table 1" in text
    assert "A section from dustless changes" in text
    assert seen == [crawl / "crawl.db"]
    assert main(["report", str(tmp_path / "none"), "-o", str(out)]) == 2
    assert "no such directory" in capsys.readouterr().err

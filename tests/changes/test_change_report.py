"""The change charts of ``dustless report`` (seed 004 §4), checked in headless Chromium.

The browser and page helpers are the report tests' own (``tests/report/test_report.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from changes.history_builder import Fetch, build_batches
from dustless.analysis._changes_db import crawl_change_report
from dustless.cli.main import main
from dustless.report import render_report
from dustless.report._changes_section import change_sections
from dustless.store import open_crawl
from report.test_report import _open, browser  # noqa: F401  (browser is a fixture)


def _collection(out: Path) -> Path:
    plan = []
    for b in range(5):
        plan.append(
            (
                3.0 * b,
                [
                    Fetch("http://a.co.kr/", depth=0, doc=f"a{b}", links=(1, 4, 0)),
                    Fetch("http://a.co.kr/x", doc=f"x{b // 2}", links=(0, 3, 0)),
                    Fetch("http://a.co.kr/f", doc="f", links=(0, 0, 2)),
                    Fetch("http://b.com/", depth=0, doc="b", links=(1, 0, 0)),
                    Fetch(
                        "http://b.com/gone",
                        state="OK" if b % 2 else "code",
                        status=200 if b % 2 else 500,
                        doc="g",
                    ),
                ],
            )
        )
    return build_batches(out, plan)


def test_change_charts_render_in_chromium(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    out = _collection(tmp_path / "crawl")
    with open_crawl(out) as db:
        sections = change_sections(crawl_change_report(db))
    html = render_report(None, None, extra_sections=sections, generated="test run")
    path = tmp_path / "changes.html"
    path.write_text(html, encoding="utf-8")
    seen = _open(browser, path, tmp_path / "changes.png")
    assert seen["messages"] == []
    assert seen["requests"] == [path.as_uri()]
    # Table 7, Table 8, Table 11, depth and link kind (Tables 12-13), naive vs corrected.
    assert len(seen["charts"]) == 6
    for chart in seen["charts"]:
        assert chart["width"] > 100, chart
        assert chart["height"] > 50, chart
        assert chart["bars"] >= 1, chart
    for caption in ("Table 7", "Table 8", "Table 9", "Table 11", "Table 12", "Table 13"):
        assert caption in html


def test_one_batch_section_has_no_chart(tmp_path: Path) -> None:
    out = build_batches(tmp_path / "c", [(0.0, [Fetch("http://a.kr/", depth=0)])])
    with open_crawl(out) as db:
        (section,) = change_sections(crawl_change_report(db))
    assert section.id == "changes"
    assert "dustless recrawl" in section.blocks[0].text  # type: ignore[union-attr]
    assert len(section.blocks) == 1


def test_report_cli_includes_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _collection(tmp_path / "crawl")
    html = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(html)]) == 0
    capsys.readouterr()
    text = html.read_text(encoding="utf-8")
    assert "How pages change (seed 004 §4)" in text
    assert "SS = " in text

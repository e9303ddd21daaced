"""The report's change-rate chart on a real crawl and recrawls of the test web: pages
downloaded twice that did not change are said to be so (not a chart of zeros reading "no
data"), and pages that changed (the test web's next day) are charted, with how far apart
the downloads were."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from testweb_fixture import start_testweb


def _dustless(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "dustless", *args], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _changes_section(html: str) -> str:
    start = html.index('id="changes"')
    return html[start:]


def test_change_rate_chart_says_what_it_lacks_then_shows_the_changes(tmp_path: Path) -> None:
    web = start_testweb(tmp_path / "web", sites=2, pages_per_site=12)
    try:
        crawl = tmp_path / "crawl"
        _dustless(
            "crawl", str(crawl), *web.seeds, *web.resolve_args,
            "--delay", "0", "--delay-factor", "0", "--quiet",
        )  # fmt: skip
        same = tmp_path / "same-day"
        shutil.copytree(crawl, same)
        _dustless("recrawl", str(same), "--quiet")
        web.set_day(1)  # the test web's pages that change do so from one day to the next
        _dustless("recrawl", str(crawl), "--quiet")
    finally:
        web.stop()

    unchanged = _changes_section(_dustless("report", str(same), "-o", "-", "--quiet"))
    assert "no data" not in unchanged
    m = re.search(r"No change rate chart: ([\d,]+) pages downloaded at least twice", unchanged)
    assert m, unchanged[:2000]
    assert int(m.group(1).replace(",", "")) > 50
    assert "none changed between two downloads, so every estimated rate is 0" in unchanged
    assert "no document changed between two downloads" in unchanged
    assert "Mean estimated change rate per day" not in unchanged

    changed = _changes_section(_dustless("report", str(crawl), "-o", "-", "--quiet"))
    assert "no data" not in changed
    assert "Mean estimated change rate per day, naive vs bias-corrected" in changed
    m = re.search(
        r"([\d,]+) pages downloaded at least twice, ([\d,]+) of them changed; downloads "
        r"[\d.,]+ (?:seconds?|minutes?|hours?) apart on average: rates per day measured over "
        r"less than a day are large\.",
        changed,
    )
    # The "changed" text sits past the charts of the section's start: show it on failure.
    assert m, changed[changed.find("downloaded at least twice") - 200 :][:1000]
    twice, moved = (int(g.replace(",", "")) for g in m.groups()[:2])
    assert 0 < moved < twice
    assert "-0.000" not in _dustless("changes", str(crawl))

"""1,000,000 sitemap URLs over 25 files are admitted with peak RSS under 300 MB: through the
crawl's own path (the engine's sitemap reader fed gzip chunks as the fetcher hands them on,
the filter, the normalizer, URL-seen and ``Admission`` into a crawl DB on disk), measured in
a subprocess so the peak is that work's alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("admission_worker.py")


@pytest.mark.slow
def test_a_million_sitemap_urls_in_25_files_are_admitted_under_300_mb(tmp_path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, str(WORKER), str(tmp_path / "crawl"), "25", "40000"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=280,
    )
    parsed, queued, seconds, peak_kib = done.stdout.split()
    assert int(parsed) == 1_000_000
    assert int(queued) == 1_000_000  # every one a new URL row, queued by the crawl DB
    peak = int(peak_kib) * 1024
    print(
        f"\n1,000,000 sitemap URLs admitted in {float(seconds):.1f} s, peak RSS {peak / 1e6:.0f} MB"
    )
    assert peak < 300 * 1000 * 1000, f"peak RSS {peak_kib} KiB"

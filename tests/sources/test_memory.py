"""1,000,000 sitemap URLs over 25 files are parsed, normalized and admitted through a Bloom
URL-seen filter with peak RSS under 300 MB (measured in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("memory_worker.py")


@pytest.mark.slow
def test_a_million_sitemap_urls_in_25_files_under_300_mb() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, str(WORKER), "25", "40000"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=280,
    )
    parsed, admitted, peak_kib = (int(x) for x in done.stdout.split())
    assert parsed == 1_000_000
    assert admitted > 0.998 * parsed  # the rest: Bloom "maybe"s the DB would settle
    assert peak_kib * 1024 < 300 * 1000 * 1000, f"peak RSS {peak_kib} KiB"

"""``crawl`` → ``evaluate`` (``--fetch``, ``--truth``) → ``stats`` → ``report`` on the test web.

The dirty profile serves the spellings seed 000 measures (case-insensitive and case-sensitive
servers, trailing-slash redirects, ``www`` aliases, default documents, tracking parameters);
the server's own counters witness that ``--fetch`` stays polite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dustless.cli.main import main
from dustless.crawl import run_crawl
from dustless.crawl.config import CrawlConfig
from dustless.store import open_crawl


def _resolve(web: Any) -> tuple[str, ...]:
    args = web.resolve_args
    return tuple(args[i + 1] for i in range(0, len(args), 2) if args[i] == "--resolve")


def _evaluate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["evaluate", *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _rows(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["factor"], r["method"]): r for r in data["rows"]}


@pytest.mark.slow
def test_evaluate_fetch_and_truth_on_the_dirty_test_web(
    testweb_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    web = testweb_factory(profile="dirty", sites=4, pages_per_site=15)
    out = tmp_path / "crawl"
    config = CrawlConfig(
        seeds=tuple(web.seeds),
        resolve=_resolve(web),
        policy="standard",
        delay=0.0,
        delay_factor=0.0,
        concurrency=16,
        progress=False,
    )
    assert run_crawl(config, out).finished
    truth = str(web.truth_path)

    before = _evaluate(capsys, str(out), "--truth", truth, "--reading", "paper")
    rows = _rows(before)
    assert rows["path-case", "none"]["sets"] > 0
    assert rows["path-case", "none"]["redundancy_rate"] > 0
    assert rows["www", "none"]["sets"] > 0
    assert any(not r["coverage_loss_measured"] for r in before["rows"])
    assert all(r["true_fp_rate"] is not None for r in before["rows"])
    assert before["recommended_policy"].startswith("standard")

    web.reset()
    assert (
        main(["evaluate", str(out), "--truth", truth, "--fetch", "--delay", "0.05", "--json"]) == 0
    )
    captured = capsys.readouterr()
    after = json.loads(captured.out)
    assert "normalized forms" in captured.err
    server = web.stats()
    assert server["requests"] > 0
    for host, s in server["hosts"].items():
        assert s["max_concurrent"] == 1, host  # one request at a time per host
        if s["requests"] > 2:
            assert s["min_gap_s"] >= 0.05 - 0.005, (host, s)
    with open_crawl(out) as db:
        assert len(db.probe_batches()) == 1
    measured_before = sum(r["coverage_loss_measured"] for r in before["rows"])
    measured_after = sum(r["coverage_loss_measured"] for r in after["rows"])
    assert measured_after > measured_before
    for key, row in _rows(after).items():
        if key[1] == "none":  # the probes never join the crawl's own sets
            assert row == rows[key]

    assert main(["stats", str(out)]) == 0
    assert "Table 6." in capsys.readouterr().out
    report = tmp_path / "report.html"
    assert main(["report", str(out), "-o", str(report), "--truth", truth]) == 0
    assert "seed 000 Table 1" in report.read_text(encoding="utf-8")

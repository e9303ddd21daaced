"""``dustless recrawl``: batches of a crawled test web over simulated days."""

from __future__ import annotations

import datetime as dt
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dustless.cli.main import main
from dustless.store import open_crawl

WEB = {"profile": "clean", "sites": 3, "pages_per_site": 20, "seed": 5}


def _when(out: Path, day: int) -> str:
    """Day ``day`` after the first crawl's batch time (the wall clock when it ran)."""
    with open_crawl(out) as db:
        t0 = db.batches[0].batch_time
    return dt.datetime.fromtimestamp(t0 + day * 86_400, dt.UTC).isoformat()


def _crawl(web: Any, out: Path) -> None:
    args = ["crawl", *web.seeds, "--out", str(out), *web.resolve_args, "--delay", "0"]
    args += ["--delay-factor", "0", "--quiet", "--max-depth", "9"]
    assert main(args) == 0


def test_full_recrawls_record_batches(
    testweb_factory: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    web = testweb_factory(**WEB)
    out = tmp_path / "c"
    _crawl(web, out)
    for day in (3, 6):
        web.set_day(day)
        assert main(["recrawl", str(out), "--batch-time", _when(out, day), "--quiet"]) == 0
    with open_crawl(out) as db:
        batches = db.batches
        per_batch = dict(db.query("SELECT batch, count(*) FROM fetches GROUP BY batch"))
    assert [b.number for b in batches] == [1, 2, 3]
    assert all(b.ended_at is not None for b in batches)
    assert batches[2].batch_time - batches[1].batch_time == 3 * 86_400
    assert per_batch[2] >= per_batch[1] - 3  # robots.txt again; every page again
    with sqlite3.connect(out / "crawl.db") as db:
        not_modified = db.execute(
            "SELECT f.url_id, f.batch, f.content_sha1, f.size_raw, f.revisit_of, "
            "(SELECT p.content_sha1 FROM fetches p WHERE p.url_id = f.url_id "
            " AND p.batch < f.batch ORDER BY p.id DESC LIMIT 1) "
            "FROM fetches f WHERE f.status = 304"
        ).fetchall()
    # Unchanged pages answered If-None-Match with 304: no download, the held copy's hash.
    assert {b for _, b, *_ in not_modified} == {2, 3}
    for _url_id, _batch, sha1, size, revisit_of, previous in not_modified:
        assert sha1 == previous
        assert size == 0
        assert revisit_of is not None
    capsys.readouterr()
    assert main(["changes", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["batches"]) == 3
    assert data["ss"] == 1.0
    assert any(p["changes"] > 0 for p in data["pages"])
    assert any(p["change_interval_days"] is None for p in data["pages"])


def test_a_full_recrawl_leaves_evaluate_probes_alone(
    testweb_factory: Callable[..., Any], tmp_path: Path
) -> None:
    from dustless.store import PROBE_PREFIX, NewURL, SQLiteStore, URLState

    web = testweb_factory(**WEB)
    out = tmp_path / "c"
    _crawl(web, out)
    # A normalized form `evaluate --fetch` requested: its row as the prober leaves it.
    probe = web.seeds[0] + "probe-only-form/"
    with SQLiteStore(out) as store:
        [inserted] = store.add_urls([NewURL(probe, PROBE_PREFIX + probe, "x.test", 0, "r")])
        assert inserted
        [(probe_id,)] = store.query("SELECT id FROM urls WHERE url = ?", (probe,))
        store.set_url_state([probe_id], URLState.DONE)
    web.set_day(2)
    assert main(["recrawl", str(out), "--batch-time", _when(out, 2), "--quiet"]) == 0
    with sqlite3.connect(out / "crawl.db") as db:
        refetched = db.execute(
            "SELECT count(*) FROM fetches WHERE batch = 2 AND url_id = ?", (probe_id,)
        ).fetchone()[0]
        pages = db.execute("SELECT count(*) FROM fetches WHERE batch = 2").fetchone()[0]
    assert pages > 20  # the collection itself was recrawled
    assert refetched == 0


def test_refuses_bad_times_and_unfinished(
    testweb_factory: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recrawl", str(tmp_path / "none")]) == 2
    assert "no crawl" in capsys.readouterr().err
    web = testweb_factory(**WEB)
    out = tmp_path / "c"
    _crawl(web, out)
    assert main(["recrawl", str(out), "--batch-time", "2001-01-01T00:00:00Z"]) == 2
    assert "is not after batch 1" in capsys.readouterr().err
    assert main(["recrawl", str(out), "--batch-time", "yesterday"]) == 2
    assert "ISO 8601" in capsys.readouterr().err
    assert main(["recrawl", str(out), "--budget", "0"]) == 2
    assert main(["recrawl", str(out), "--concurrency", "0", "--quiet"]) == 2
    # A crawl stores its WARC bodies one way: revisits and changes compare payload digests.
    assert main(["recrawl", str(out), "--warc-bodies", "decoded", "--quiet"]) == 2
    assert "cannot change --warc-bodies" in capsys.readouterr().err
    with open_crawl(out) as db:
        assert len(db.batches) == 1  # nothing was written by the refused runs


def _batch_fetches(out: Path) -> dict[int, set[str]]:
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT f.batch, u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE u.url NOT LIKE '%/robots.txt'"
        ).fetchall()
    got: dict[int, set[str]] = {}
    for b, url in rows:
        got.setdefault(b, set()).add(url)
    return got


def _count(out: Path, batch: int) -> int:
    try:
        with sqlite3.connect(out / "crawl.db", timeout=0.1) as db:
            return db.execute("SELECT count(*) FROM fetches WHERE batch = ?", (batch,)).fetchone()[
                0
            ]
    except sqlite3.Error:
        return 0


def test_kill_9_during_a_recrawl_then_resume(
    testweb_factory: Callable[..., Any], tmp_path: Path
) -> None:
    web = testweb_factory(**WEB)
    out = tmp_path / "c"
    _crawl(web, out)
    before = _batch_fetches(out)
    with sqlite3.connect(out / "crawl.db") as db:
        batch1_rows = db.execute("SELECT * FROM fetches WHERE batch = 1 ORDER BY id").fetchall()
    web.set_day(4)
    cmd = [sys.executable, "-m", "dustless", "recrawl", str(out), "--batch-time"]
    cmd += [_when(out, 4), "--delay", "0.2", "--concurrency", "4", "--quiet"]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    # The kill waits on an event (8 fetches of batch 2 committed), not on a random time.
    deadline = time.monotonic() + 60
    while _count(out, 2) < 8 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the recrawl ended before the kill"
    with open_crawl(out) as db:
        assert db.batches[-1].ended_at is None
    # Another recrawl would mix two batches: refused until this one is finished.
    assert main(["recrawl", str(out), "--quiet"]) == 2
    assert main(["recrawl", str(out), "--resume", "--quiet"]) == 0
    after = _batch_fetches(out)
    assert set(after) == {1, 2}
    assert after[2] >= before[1]  # every page of the collection again, none lost
    with sqlite3.connect(out / "crawl.db") as db:
        assert db.execute("SELECT * FROM fetches WHERE batch = 1 ORDER BY id").fetchall() == (
            batch1_rows
        )  # batch 1 untouched
        started = db.execute("SELECT started_at FROM crawls WHERE batch = 2").fetchone()[0]
        early = db.execute(
            "SELECT count(*) FROM fetches WHERE batch = 2 AND fetched_at < ?", (started,)
        ).fetchone()[0]
        assert early == 0
        assert db.execute("SELECT count(*) FROM urls WHERE state != 'done'").fetchone()[0] == 0
    with open_crawl(out) as db:
        assert all(b.ended_at is not None for b in db.batches)


def test_budget_batch_fetches_the_planned_pages(
    testweb_factory: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    web = testweb_factory(**WEB)
    out = tmp_path / "c"
    _crawl(web, out)
    for day in (2, 4):
        web.set_day(day)
        assert main(["recrawl", str(out), "--batch-time", _when(out, day), "--quiet"]) == 0
    pages = len(_batch_fetches(out)[1])
    capsys.readouterr()
    web.set_day(5)
    args = ["recrawl", str(out), "--batch-time", _when(out, 5), "--budget", "7"]
    assert main([*args, "--schedule", "proportional"]) == 0
    assert "7 pages chosen by the proportional schedule" in capsys.readouterr().err
    got = _batch_fetches(out)
    assert len(got[4]) == 7 < pages  # the planned pages; no new page on this web
    with open_crawl(out) as db:
        (config,) = [b.config for b in db.batches if b.number == 4]
    assert json.loads(config)["recrawl"] == {
        "of_batch": 3,
        "budget": 7,
        "schedule": "proportional",
        "conditional": True,
    }


def test_a_budget_is_spent_on_documents_not_redirects_or_errors(
    testweb_factory: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The dirty web's trailing-slash and www redirects and its 404s: URLs that never download.
    web = testweb_factory(profile="dirty", sites=2, pages_per_site=20)
    out = tmp_path / "c"
    _crawl(web, out)
    with sqlite3.connect(out / "crawl.db") as db:
        answers = dict(
            db.execute(
                "SELECT status / 100, count(*) FROM fetches WHERE batch = 1 GROUP BY 1"
            ).fetchall()
        )
    # The trap is there: more URLs that never download than the budget below.
    assert answers.get(3, 0) > 0
    assert answers.get(4, 0) > 0
    assert answers[3] + answers[4] > 10
    capsys.readouterr()
    chosen = []
    for day in (1, 2):
        web.set_day(day)
        args = ["recrawl", str(out), "--batch-time", _when(out, day), "--budget", "10"]
        assert main(args) == 0
        err = capsys.readouterr().err
        assert "URLs left out" in err
        # One download per document so far: no rate to tell the freshness (it said 1.000).
        assert "expected freshness 1.000" not in err
        with sqlite3.connect(out / "crawl.db") as db:
            # The batch's chosen URLs: those the first crawl knew (a changed page may
            # reveal new ones, and the recrawl follows them: they are no choice of the plan).
            rows = db.execute(
                "SELECT u.url, f.status FROM fetches f JOIN urls u ON u.id = f.url_id "
                "WHERE f.batch = ? AND u.url NOT LIKE '%/robots.txt' "
                "AND u.id IN (SELECT url_id FROM fetches WHERE batch = 1)",
                (day + 1,),
            ).fetchall()
        assert {status for _, status in rows} <= {200, 304}, rows
        chosen.append({url for url, _ in rows})
    assert len(chosen[0]) == len(chosen[1]) == 10
    assert not chosen[0] & chosen[1]  # the next batch refreshes other documents

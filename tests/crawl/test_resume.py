"""Crash safety (docs/storage.md): kill -9 at a random point, --resume, compare with a crawl that
was never interrupted. Nothing lost, at most the in-flight fetches and the last second
repeated, and every WARC pointer in the DB reads back."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time

import pytest

from dustless.store import WarcRef, read_record


def done_urls(out):
    with sqlite3.connect(out / "crawl.db") as db:
        return {
            r[0]
            for r in db.execute(
                "SELECT DISTINCT u.url FROM fetches f JOIN urls u ON u.id = f.url_id"
            )
        }


def fetch_count(out) -> int:
    try:
        with sqlite3.connect(out / "crawl.db", timeout=0.1) as db:
            return db.execute("SELECT count(*) FROM fetches").fetchone()[0]
    except sqlite3.Error:
        return 0


def check_warc_pointers(out) -> int:
    with sqlite3.connect(out / "crawl.db") as db:
        rows = db.execute(
            "SELECT u.url, f.warc_file, f.warc_offset, f.warc_length FROM fetches f "
            "JOIN urls u ON u.id = f.url_id WHERE f.warc_file IS NOT NULL"
        ).fetchall()
    for url, name, offset, length in rows:
        rec = read_record(out / "warc", WarcRef(name, offset, length))
        assert rec.target_uri == url
    return len(rows)


@pytest.mark.parametrize("kill_after", [10, 60])
def test_kill_9_then_resume_loses_nothing(clean_web, tmp_path, ch, kill_after):
    opts = ("--delay", "0.1", "--delay-factor", "0", "--concurrency", "16")
    ref = tmp_path / "ref"
    proc = ch.run_cli(*ch.crawl_cmd(clean_web, ref, *opts)[3:])
    assert proc.returncode == 0, proc.stderr
    expected = done_urls(ref)
    assert len(expected) >= 100

    clean_web.reset()
    out = tmp_path / "killed"
    crawler = subprocess.Popen(ch.crawl_cmd(clean_web, out, *opts), stderr=subprocess.DEVNULL)
    # The kill waits on an event — so many fetches committed — not on a random time:
    # SIGKILL, no chance to flush.
    deadline = time.monotonic() + 60
    while fetch_count(out) < kill_after and crawler.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    crawler.send_signal(signal.SIGKILL)
    crawler.wait()
    assert crawler.returncode == -signal.SIGKILL, "the crawl ended before the kill"
    committed = done_urls(out)  # what the DB holds: never fetched again

    resumed = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert done_urls(out) == expected  # nothing lost, nothing extra
    # Repeated work is only what was in flight or not yet committed: no URL whose fetch the
    # DB held at the kill is fetched again (robots.txt neither: its rules are reused).
    with sqlite3.connect(out / "crawl.db") as db:
        twice = {
            url
            for (url,) in db.execute(
                "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
                "GROUP BY f.url_id HAVING count(*) > 1"
            )
        }
    assert not twice & committed
    assert check_warc_pointers(out) >= len(expected)
    assert (out / "seeds.out.txt").exists()
    with sqlite3.connect(out / "crawl.db") as db:
        assert db.execute("SELECT count(*) FROM urls WHERE state != 'done'").fetchone()[0] == 0


def test_ctrl_c_finishes_in_flight_then_resume_completes(clean_web, tmp_path, ch):
    out = tmp_path / "int"
    # 25 pages a host at 0.2 s take 5 s: the signal (after the first commit, about 1 s in)
    # lands mid-crawl, not in a race with the crawl's own end.
    opts = ("--delay", "0.2", "--delay-factor", "0")
    crawler = subprocess.Popen(ch.crawl_cmd(clean_web, out, *opts), stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while fetch_count(out) < 10 and crawler.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    crawler.send_signal(signal.SIGINT)
    _, err = crawler.communicate(timeout=60)
    assert crawler.returncode == 130, err
    assert b"Traceback" not in err
    with sqlite3.connect(out / "crawl.db") as db:
        in_flight = db.execute("SELECT count(*) FROM urls WHERE state = 'in-flight'").fetchone()
    assert in_flight[0] == 0  # every started fetch finished and was recorded
    check_warc_pointers(out)
    resumed = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert clean_web.stats()["duplicate_fetches"] <= len(clean_web.stats()["hosts"])

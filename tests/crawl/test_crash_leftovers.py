"""What a kill -9 at the worst moment leaves behind, and how ``--resume`` cleans it up."""

from __future__ import annotations

import re

# crawl/soft404.py's probe_url: a random, surely missing path asked once per host
_PROBE = re.compile(r"/dustless-[0-9a-f]{16}\.html$")


def test_resume_of_a_finished_crawl_writes_a_lost_seeds_file(clean_web, tmp_path, ch):
    out = tmp_path / "c"
    assert ch.crawl(clean_web, out, max_pages=20).finished
    expected = (out / "seeds.out.txt").read_text()
    # A kill -9 just after the final commit (before the file was renamed into place).
    (out / "seeds.out.txt").unlink()
    done = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "wrote its missing seeds.out.txt" in done.stderr
    assert (out / "seeds.out.txt").read_text() == expected
    again = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert again.returncode == 2
    assert "nothing to resume" in again.stderr


def _records(out):
    """``(type, target, file, offset)`` of every WARC record in the crawl."""
    from warcio.archiveiterator import ArchiveIterator

    got = []
    for path in sorted((out / "warc").glob("*.warc.gz")):
        with open(path, "rb") as f:
            it = ArchiveIterator(f)
            for rec in it:
                got.append(
                    (rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"), path.name,
                     it.get_record_offset())
                )  # fmt: skip
    return got


def test_kill_9_leaves_no_orphan_record_and_no_robots_refetch(clean_web, tmp_path, ch):
    import signal
    import sqlite3
    import subprocess
    import time

    out = tmp_path / "k"
    opts = ("--delay", "0.05", "--delay-factor", "0", "--concurrency", "8")
    crawler = subprocess.Popen(ch.crawl_cmd(clean_web, out, *opts), stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    db = out / "crawl.db"
    while crawler.poll() is None and time.monotonic() < deadline:
        try:
            with sqlite3.connect(db, timeout=0.1) as c:
                if c.execute("SELECT count(*) FROM fetches").fetchone()[0] >= 20:
                    break
        except sqlite3.Error:
            pass
        time.sleep(0.02)
    crawler.send_signal(signal.SIGKILL)
    crawler.wait()
    assert crawler.returncode == -signal.SIGKILL, "the crawl ended before the kill"
    resumed = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert resumed.returncode == 0, resumed.stderr

    records = _records(out)
    with sqlite3.connect(db) as c:
        pointed = set(
            c.execute("SELECT warc_file, warc_offset FROM fetches WHERE warc_file IS NOT NULL")
        )
        hosts = c.execute("SELECT count(*) FROM hosts").fetchone()[0]
    pages = {
        (name, offset)
        for kind, target, name, offset in records
        if kind in ("response", "revisit")
        and not target.endswith("/robots.txt")
        and not _PROBE.search(target)  # a soft-404 probe: archived, no page of the crawl
    }
    # Every page record a row points to, and no other (the crash's tail was cut).
    assert pages == pointed
    # Each origin's robots.txt was fetched once in all: the resume reused what was stored.
    robots = [t for kind, t, *_ in records if kind == "response" and t.endswith("/robots.txt")]
    assert len(robots) == len(set(robots)) == hosts

"""What the commands say: the same host names everywhere, URL arguments checked, a
byte-order mark accepted, counts for people."""

from __future__ import annotations

import json
import sqlite3


def test_evaluate_names_hosts_as_the_crawl_does_with_their_port(crawled, cli, small_web):
    db = sqlite3.connect(crawled / "crawl.db")
    names = {name for (name,) in db.execute("SELECT name FROM hosts")}
    db.close()
    assert all(name.endswith(f":{small_web.port}") for name in names)
    proc = cli("evaluate", str(crawled), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    hosts = {row["host"] for row in data["host_rows"]} | {p["host"] for p in data["site_policy"]}
    assert hosts
    assert hosts <= names  # site1.test:PORT, never site1.test


def test_robots_refuses_a_url_that_does_not_parse(cli, tmp_path):
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: *\nDisallow: /x\n")
    proc = cli("robots", str(robots), "http://a.test/x", "http://[bad")
    assert proc.returncode == 2
    assert proc.stdout == b""  # no verdict for any: the command line is wrong
    assert proc.stderr == "dustless robots: error: URL 'http://[bad': unclosed IPv6 literal at 7\n"
    ok = cli("robots", str(robots), "/x?a=://b", "http://a.test/y")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == b"disallowed /x?a=://b\nallowed http://a.test/y\n"


def test_normalize_accepts_a_byte_order_mark_as_crawl_seeds_does(cli, tmp_path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "dustless", "normalize"],
        input=b"\xef\xbb\xbfHTTP://A.test:80/x\r\nhttp://b.test/\n",
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == b"http://a.test/x"


def test_the_reports_true_fp_fn_columns_have_a_legend(crawled, cli):
    proc = cli("report", str(crawled), "-o", "-")
    assert proc.returncode == 0, proc.stderr
    html = proc.stdout.decode("utf-8")
    assert "<th>true FP</th>" in html or "true FP</th>" in html
    assert "true FP: of the pairs of URLs of different resources" in html
    assert "true FN: of the pairs of URLs of one resource, the share it keeps apart" in html


def test_the_crawl_summary_says_1_page_not_1_pages(small_web, cli, tmp_path):
    proc = cli(
        "crawl", str(tmp_path / "one"), small_web.seeds[0], *small_web.resolve_args,
        "--delay", "0", "--max-pages", "1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = next(line for line in proc.stderr.splitlines() if line.startswith("finished: "))
    assert summary.startswith("finished: 1 page, 0 revisits, "), summary


def test_plural_and_thousands():
    from dustless.words import plural

    assert plural(1, "page") == "1 page"
    assert plural(0, "page") == "0 pages"
    assert plural(12345, "seed directory", "seed directories") == "12,345 seed directories"


def test_crawl_status_lines_have_separators_and_the_right_plural():
    from dustless.cli._status import status_lines
    from dustless.store import Batch, CrawlStatus, URLState
    from dustless.store._pg_read import WorkerStatus

    now = 1_000_000.0
    worker = WorkerStatus("w1", "m1", 7, "/crawl/w1", now - 60, now - 1, 1, 0, 1)
    status = CrawlStatus(
        now, Batch(1, now - 60, now - 60, "{}"), [worker], 1, 1, 1, 1,
        {URLState.DONE: 12_345, URLState.QUEUED: 1, URLState.SKIPPED: 0,
         URLState.IN_FLIGHT: 1, URLState.MERGED: 0},
        1,
    )  # fmt: skip
    text = "\n".join(status_lines(status, "postgresql://db/crawl", 30.0))
    assert "  1 fetch " in text, text
    assert " 1 host leased " in text, text
    assert "queue: 1 URL queued on 1 host; 1 host leased, 1 lease run out" in text, text
    assert "; 1 URL claimed" in text
    assert "urls: 12,345 done, 1 queued" in text
    worker = WorkerStatus("w1", "m1", 7, "/crawl/w1", now - 60, now - 1, 12_000, 600, 2)
    status = CrawlStatus(now, status.batch, [worker], 3, 2_500, 0, 0, status.urls, 600)
    text = "\n".join(status_lines(status, "postgresql://db/crawl", 30.0))
    assert " 12,000 fetches " in text, text
    assert " 2 hosts leased " in text, text
    assert "queue: 2,500 URLs queued on 3 hosts; 0 hosts leased, 0 leases run out" in text


def test_changes_text_has_the_right_plural(crawled, cli):
    out = cli("changes", str(crawled)).stdout.decode()
    head = out.splitlines()[0]
    assert ": 1 batch, " in head, head

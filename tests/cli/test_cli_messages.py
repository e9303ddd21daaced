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
    from dustless.cli._text import plural

    assert plural(1, "page") == "1 page"
    assert plural(0, "page") == "0 pages"
    assert plural(12345, "seed directory", "seed directories") == "12,345 seed directories"

"""``--json`` of crawl, crawl --status, recrawl, export and rules show: stdout parses, and its
keys are exactly those of the command's table in docs/*.md (read from the doc, so the test
fails when the output and its documentation disagree)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_ROW = re.compile(r"^\| `([a-z0-9_\[\].]+)` \|")


def documented(doc: str, heading: str) -> list[str]:
    """The keys in the first table after the line ``heading`` of docs/DOC."""
    lines = (DOCS / doc).read_text(encoding="utf-8").splitlines()
    at = lines.index(heading)
    keys: list[str] = []
    for line in lines[at + 1 :]:
        if line.startswith("#"):
            break
        match = _ROW.match(line)
        if match:
            keys.append(match.group(1))
        elif keys and not line.startswith("|"):
            break  # the end of the table
    assert keys, f"no table of keys after {heading!r} in docs/{doc}"
    return keys


def assert_schema(data: dict, keys: list[str]) -> None:
    """Top-level keys exactly; ``x[].y`` rows: every element of list ``x`` has exactly those."""
    assert set(data) == {k for k in keys if "." not in k}
    lists = {k.split("[].")[0] for k in keys if "[]." in k}
    for name in lists:
        inner = {k.split("[].")[1] for k in keys if k.startswith(f"{name}[].")}
        assert data[name], f"{name} is empty: its keys are not checked"
        for item in data[name]:
            assert set(item) == inner, name


def test_crawl_json_matches_its_documented_keys(small_web, cli, tmp_path):
    out = tmp_path / "c"
    proc = cli(
        "crawl", str(out), *small_web.seeds, *small_web.resolve_args,
        "--delay", "0", "--delay-factor", "0", "--quiet", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # --quiet: no progress, and --json: no summary lines
    data = json.loads(proc.stdout)
    assert_schema(data, documented("crawling.md", "### The summary as JSON: `crawl --json`"))
    assert data["finished"] is True
    assert data["batch"] == 1
    assert data["fetched"] == sum(data["states"].values()) > 0
    assert data["crawl_db"] == str(out / "crawl.db")


def test_crawl_log_file_gets_the_summary_and_quiet_stderr_stays_empty(small_web, cli, tmp_path):
    log = tmp_path / "crawl.log"
    log.write_text("an earlier run\n")
    proc = cli(
        "crawl", str(tmp_path / "c"), small_web.seeds[0], *small_web.resolve_args,
        "--delay", "0", "--delay-factor", "0", "--quiet", "--log-file", str(log),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    text = log.read_text()
    assert text.startswith("an earlier run\n")  # appended to, never truncated
    assert re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S* INFO finished: \d+ pages", text, re.M)
    assert f"INFO crawl DB: {tmp_path / 'c' / 'crawl.db'}" in text


def test_crawl_log_level_warning_keeps_the_warnings_alone(small_web, cli, tmp_path):
    # A loopback seed read from a file (not typed) is refused by the address policy: a
    # warning at the end of the crawl.
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://127.0.0.1:9/x\n")
    log = tmp_path / "crawl.log"
    proc = cli(
        "crawl", str(tmp_path / "c"), small_web.seeds[0], "--seeds", str(seeds),
        *small_web.resolve_args,
        "--delay", "0", "--quiet", "--log-file", str(log), "--log-level", "warning",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    text = log.read_text()
    assert " INFO " not in text
    assert " WARNING refused by the address policy: 1 host " in text, (proc.stderr, text)


def test_crawl_log_file_that_cannot_be_opened_is_one_line(small_web, cli, tmp_path):
    proc = cli(
        "crawl", str(tmp_path / "c"), small_web.seeds[0], *small_web.resolve_args,
        "--log-file", str(tmp_path / "no" / "such" / "dir.log"),
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("dustless crawl: ")
    assert "No such file or directory" in proc.stderr
    assert not (tmp_path / "c").exists()


def test_recrawl_json_matches_its_documented_keys(crawled, cli, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(crawled, copy)
    proc = cli("recrawl", str(copy), "--budget", "3", "--quiet", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)
    assert_schema(data, documented("recrawl.md", "### The summary as JSON: `recrawl --json`"))
    assert data["batch"] == 2
    assert data["queued"] == 3
    assert data["plan"]["schedule"] == "optimal"
    assert data["plan"]["budget"] == 3


@pytest.mark.parametrize(
    ("fmt", "heading_table"),
    [("wacz", 0), ("files", 1)],
)
def test_export_json_matches_its_documented_keys(crawled, cli, tmp_path, fmt, heading_table):
    out = tmp_path / ("x.wacz" if fmt == "wacz" else "files")
    proc = cli("export", str(crawled), "--format", fmt, "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    heading = (
        "### The summary as JSON: `export --json`"
        if fmt == "wacz"
        else '`--format files` (docs/pattern-scripts.md, "Exporting documents"):'
    )
    assert_schema(data, documented("archives.md", heading))
    assert data["format"] == fmt
    assert data["output"] == str(out)


def test_export_json_with_the_archive_on_stdout_goes_to_stderr(crawled, cli, tmp_path):
    proc = cli("export", str(crawled), "--format", "wacz", "-o", "-", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"PK")  # the ZIP alone
    data = json.loads(proc.stderr)
    assert data["output"] is None
    assert data["bytes"] == len(proc.stdout)


def test_export_quiet_prints_nothing(crawled, cli, tmp_path):
    proc = cli("export", str(crawled), "-o", str(tmp_path / "f"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == (b"", "")
    assert any((tmp_path / "f").rglob("*.xml"))


def test_rules_show_file_json_matches_its_documented_keys(cli, tmp_path):
    rules = tmp_path / "rules.xml"
    rules.write_text(
        '<crawlscript>\n<site title="a">\n<identity value="a.test"/>\n'
        '<dropParam name="ref" support="4" fp_rate="0"/>\n</site>\n</crawlscript>\n'
    )
    proc = cli("rules", "show", str(rules), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    keys = documented("pattern-scripts.md", "#### `rules show FILE --json`")
    assert_schema(data, keys)
    site = data["sites"][0]
    assert site["identities"] == ["a.test"]
    assert site["rules"] == [
        {"element": "dropParam", "rule": "drop parameter 'ref'", "support": 4, "fp_rate": 0.0}
    ]


def test_rules_show_crawl_json_matches_its_documented_keys(small_web, cli, tmp_path):
    out = tmp_path / "c"
    proc = cli(
        "crawl", str(out), *small_web.seeds, *small_web.resolve_args,
        "--delay", "0", "--delay-factor", "0", "--quiet", "--learn",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = cli("rules", "show", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert_schema(data, documented("pattern-scripts.md", "#### `rules show DIR --json`"))
    assert data["active"] + data["retracted"] == len(data["rules"])


def test_crawl_status_json_matches_its_documented_keys(small_web, pg_db, cli, tmp_path):
    proc = cli(
        "crawl", str(tmp_path / "w1"), small_web.seeds[0], *small_web.resolve_args,
        "--db", pg_db, "--worker", "w1", "--delay", "0", "--delay-factor", "0", "--quiet",
        "--max-pages", "5",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = cli("crawl", "--db", pg_db, "--status", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert_schema(data, documented("crawling.md", "#### `crawl --status --json`"))
    (worker,) = data["workers"]
    assert (worker["name"], worker["state"], worker["fetches"]) == ("w1", "ended", 5)
    assert data["batch"]["number"] == 1
    assert data["batch"]["ended_at"] is not None
    assert set(data["urls"]) == {"queued", "in_flight", "done", "skipped", "merged"}


def test_evaluate_and_report_quiet_leave_stderr_empty(crawled, cli, tmp_path):
    policy = tmp_path / "policy.xml"
    loud = cli("evaluate", str(crawled), "--rules-out", str(policy))
    assert loud.returncode == 0, loud.stderr
    assert loud.stderr.startswith(f"wrote {policy}")
    for argv in (
        ["evaluate", str(crawled), "--rules-out", str(policy), "--quiet"],
        ["report", str(crawled), "-o", str(tmp_path / "r.html"), "--quiet"],
    ):
        proc = cli(*argv)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "", argv
    assert (tmp_path / "r.html").stat().st_size > 0

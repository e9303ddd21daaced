"""``dustless rules learn|show`` as a user runs them (subprocess), on a crawl built with the
store's public API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dustless.rules import DropParam, HostRedirect, Substitute, load_script
from learn.learn_crawldb import build_crawl

FIG6 = Path(__file__).parents[1] / "rules" / "data" / "fig6.xml"


def dustless(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dustless", *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = []
    for s in ("news", "sport", "world"):
        body = f"<p>{s}</p>".encode()
        pages += [
            (f"http://a.test:8080/{s}/", 200, body, None),
            (f"http://a.test:8080/{s}/index.html", 200, body, None),
            (f"http://a.test:8080/{s}/index.html?sid=1{s}", 200, body, None),
            (f"http://www.a.test:8080/{s}/", 200, body, None),
            (f"http://a.test:8080/{s}/x.html?sid=2{s}", 200, body + b"x", None),
            (f"http://a.test:8080/{s}/x.html", 200, body + b"x", None),
        ]
    pages.append(("http://a.test:8080/dir", 301, None, "http://a.test:8080/dir/"))
    return build_crawl(tmp_path_factory.mktemp("crawl"), pages)


def test_learn_writes_a_rules_file_that_show_prints(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "rules.xml"
    r = dustless("rules", "learn", str(crawl), "-o", str(out), "--max-fp", "0.01")
    assert r.returncode == 0, r.stderr
    assert "rules for" in r.stdout
    assert f"wrote {out}" in r.stdout
    rules = load_script(out).rules
    learned = {type(x): x for s in rules.sites for x in s.rules}
    assert learned[Substitute].find == "/index.html"
    assert learned[DropParam].name == "sid"
    assert learned[HostRedirect].to == "a.test"
    assert rules.apply("http://www.a.test:8080/news/index.html?sid=9") == (
        "http://a.test:8080/news/"
    )
    shown = dustless("rules", "show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "substitute '/index.html' → '/'" in shown.stdout
    assert "drop parameter 'sid'" in shown.stdout
    assert "add trailing slash to /dir" in shown.stdout
    assert "support" in shown.stdout
    assert "fp   0.00%" in shown.stdout


def test_learn_to_stdout_and_verbose(crawl: Path) -> None:
    r = dustless("rules", "learn", str(crawl), "-o", "-", "--min-support", "100", "-v")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert "<substitute" not in r.stdout  # support 100 is more than this crawl shows
    assert "<addSlash" in r.stdout  # the server's word needs no support
    assert "rejected www.a.test: host → a.test — support 3 < 100" in r.stderr


def test_show_reads_the_papers_script() -> None:
    r = dustless("rules", "show", str(FIG6))
    assert r.returncode == 0, r.stderr
    assert "detail" in r.stdout
    assert "http://www.web.com/detail.aspx?per_id={0}" in r.stdout
    assert "warning: " in r.stderr  # Fig. 6's bare '&'


def test_a_broken_file_is_one_line_with_its_line_number(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<crawlscript>\n<site title="x">\n<identity value="a.test"/>\n'
        '<dropParam name="sid" support="many"/>\n</site>\n</crawlscript>\n'
    )
    r = dustless("rules", "show", str(bad))
    assert r.returncode == 2
    assert r.stdout == ""
    [line] = r.stderr.splitlines()
    assert line.startswith(f"dustless rules show: error: {bad}:4: ")
    assert "support" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("rules", "learn", "{tmp}", "-o", "{tmp}/r.xml"), "holds no crawl"),
        (("rules", "learn", "{crawl}", "-o", "{tmp}/r.xml", "--max-fp", "7"), "--max-fp"),
        (("rules", "learn", "{crawl}", "-o", "{tmp}/r.xml", "--min-support", "0"), "support"),
        (("rules", "learn", "{crawl}", "-o", "{tmp}/no/such/dir/r.xml"), "cannot write"),
        (("rules", "show", "{tmp}/missing.xml"), "cannot read"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(crawl: Path, tmp_path: Path, args, message) -> None:
    argv = [a.format(tmp=tmp_path, crawl=crawl) for a in args]
    r = dustless(*argv)
    assert r.returncode == 2
    [line] = r.stderr.splitlines()
    assert line.startswith(f"dustless {argv[0]} {argv[1]}: error: ")
    assert message in line


def test_help_has_examples() -> None:
    for args in (("rules", "--help"), ("rules", "learn", "--help"), ("export", "--help")):
        r = dustless(*args)
        assert r.returncode == 0
        assert "examples:" in r.stdout
    top = dustless("--help")
    assert "rules" in top.stdout
    assert "export" in top.stdout

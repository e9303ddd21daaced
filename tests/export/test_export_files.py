"""``dustless export DIR --format files -o OUT``: 004 §2 layout, 002 Fig. 11 crawl-info XML."""

from __future__ import annotations

import gzip
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dustless.export import (
    FILES_PER_DIR,
    DocInfo,
    crawl_info_xml,
    doc_paths,
    export_files,
    extension,
    java_date,
)
from dustless.rules import load_script
from learn.learn_crawldb import build_crawl

FIG6 = Path(__file__).parents[1] / "rules" / "data" / "fig6.xml"


def dustless(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dustless", *args], capture_output=True, text=True, timeout=60
    )


def test_paths_are_numbers_10000_per_subdirectory() -> None:
    assert FILES_PER_DIR == 10_000
    assert doc_paths(1, 0, "text/html") == (
        "00001/0000/00000000.html.gz",
        "00001/0000/00000000.xml",
    )
    assert doc_paths(1, 9_999, "text/html")[0] == "00001/0000/00009999.html.gz"
    assert doc_paths(1, 10_000, "text/html")[0] == "00001/0001/00010000.html.gz"
    assert doc_paths(12, 123_456, "application/pdf")[0] == "00012/0012/00123456.pdf.gz"
    assert extension("text/html; charset=euc-kr") == "html"
    assert extension(None) == "bin"
    with pytest.raises(ValueError, match="negative"):
        doc_paths(-1, 0, None)


def test_crawl_info_xml_is_fig_11() -> None:
    info = DocInfo(
        "http://newprice.empas.com/pd/pd_list.php?cid=010370010&a=<b>",
        "00001/0000/00000000.html.gz",
        "엠포스",
        "제품",
        "노트북",
        java_date(1_186_912_532.0),
        "text/html",
    )
    root = ET.fromstring(crawl_info_xml(info))
    assert root.tag == "doc"
    assert root.get("type") == "struct"
    [source] = list(root)
    assert [e.tag for e in source] == [
        "url", "file", "site", "domain", "category", "date", "type",
    ]  # fmt: skip
    assert source.findtext("url") == info.url  # escaped and read back
    assert source.findtext("file") == "./00001/0000/00000000.html.gz"
    assert source.findtext("site") == "엠포스"
    assert source.findtext("date") == "Sun Aug 12 09:55:32 UTC 2007"


@pytest.fixture
def crawl(tmp_path: Path) -> Path:
    home = b"<html>home</html>"
    return build_crawl(
        tmp_path / "crawl",
        [
            ("http://www.web.com:8080/", 200, home, None),
            ("http://www.web.com:8080/list.aspx?cate_id=467&page=1", 200, b"list 467", None),
            ("http://www.web.com:8080/detail.aspx?per_id=1003", 200, b"person 1003", None),
            ("http://www.web.com:8080/default.aspx", 200, home, None),  # a WARC revisit
            ("http://www.web.com:8080/old", 301, None, "http://www.web.com:8080/old/"),
            ("http://www.web.com:8080/gone", 404, b"not found", None),
        ],
    )


def test_export_layout_payloads_and_xml(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = export_files(crawl, out, load_script(FIG6).rules)
    assert (summary.documents, summary.seed_dirs, summary.missing) == (4, 1, 0)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [f"00001/0000/{n:08d}.{ext}" for n in range(4) for ext in ("html.gz", "xml")]
    infos = {}
    for n in range(4):
        source = ET.parse(out / f"00001/0000/{n:08d}.xml").getroot().find("source")
        assert source is not None
        url = source.findtext("url")
        infos[url] = source
        file = source.findtext("file")
        assert file == f"./00001/0000/{n:08d}.html.gz"
        payload = gzip.decompress((out / file).read_bytes())
        assert payload  # the revisit's payload comes from the record it refers to
    home = gzip.decompress((out / "00001/0000/00000003.html.gz").read_bytes())
    assert home == b"<html>home</html>"
    lst = infos["http://www.web.com:8080/list.aspx?cate_id=467&page=1"]
    # The script's host has no port; it matches :8080 all the same (the port fix).
    assert lst.findtext("site") == "사이트 이름"
    assert lst.findtext("domain") == "인물"
    assert lst.findtext("category") == "467"
    assert lst.findtext("page") == "list"
    assert lst.findtext("type") == "text/html"
    assert lst.findtext("date", "").endswith("UTC 2023")
    assert infos["http://www.web.com:8080/detail.aspx?per_id=1003"].findtext("page") == "detail"


def test_cli_export_and_its_errors(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "files"
    r = dustless("export", str(crawl), "--format", "files", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "exported 4 documents" in r.stdout
    site = ET.parse(out / "00001/0000/00000000.xml").getroot().findtext("source/site")
    assert site == "www.web.com"  # no script: the host
    again = dustless("export", str(crawl), "--format", "files", "-o", str(out))
    assert again.returncode == 2
    assert again.stderr.startswith("dustless export: error: ")
    assert "not an empty directory" in again.stderr
    none = dustless("export", str(tmp_path), "--format", "files", "-o", str(tmp_path / "x"))
    assert none.returncode == 2
    assert "holds no crawl" in none.stderr
    fmt = dustless("export", str(crawl), "--format", "warc", "-o", str(tmp_path / "y"))
    assert fmt.returncode == 2

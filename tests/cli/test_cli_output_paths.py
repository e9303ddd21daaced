"""``-o -`` is standard output, as for wget, curl and tar: ``export`` and ``report``."""

from __future__ import annotations

import io
import zipfile

from dustless.export import check_wacz


def test_report_to_stdout_writes_no_file_named_dash(crawled, cli, tmp_path):
    proc = cli("report", str(crawled), "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []  # no file named "-"
    assert proc.stdout.startswith(b"<!DOCTYPE html>")
    assert proc.stdout.rstrip().endswith(b"</html>")
    assert proc.stderr == (f"wrote the report to standard output ({len(proc.stdout):,} bytes)\n")


def test_wacz_to_stdout_is_a_valid_wacz_and_the_summary_goes_to_stderr(crawled, cli, tmp_path):
    proc = cli("export", str(crawled), "--format", "wacz", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    wacz = tmp_path / "out.wacz"
    wacz.write_bytes(proc.stdout)
    assert check_wacz(wacz) == []
    with zipfile.ZipFile(io.BytesIO(proc.stdout)) as z:
        assert "datapackage.json" in z.namelist()
    assert proc.stderr.startswith("wrote the WACZ to standard output: ")
    assert f"{len(proc.stdout):,} bytes" in proc.stderr
    # The same crawl written to a file holds the same members.
    to_file = cli("export", str(crawled), "--format", "wacz", "-o", str(tmp_path / "f.wacz"))
    assert to_file.returncode == 0, to_file.stderr
    with zipfile.ZipFile(tmp_path / "f.wacz") as a, zipfile.ZipFile(wacz) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())


def test_files_to_stdout_is_refused_in_one_line(crawled, cli, tmp_path):
    proc = cli("export", str(crawled), "--format", "files", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        "dustless export: error: --format files writes a directory: "
        "-o - (standard output) is for --format wacz\n"
    )
    assert list(tmp_path.iterdir()) == []

"""``dustless robots``: one line per URL, in order, whatever the file holds."""

import subprocess
import sys

import pytest


def _run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "dustless", "robots", *args],
        capture_output=True,
        input=stdin,
        check=False,
    )


@pytest.fixture
def robots_file(tmp_path):
    path = tmp_path / "robots.txt"
    path.write_bytes(
        b"User-agent: *\nDisallow: /private\n\nUser-agent: FooBot\nDisallow: /\nAllow: /$\n"
    )
    return path


def test_one_line_per_url_in_order(robots_file):
    urls = ["https://h.test/private/x", "/public", "", "https://h.test/", "/private"]
    proc = _run(str(robots_file), *urls)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().split("\n")
    assert lines[-1] == ""
    assert lines[:-1] == [
        "disallowed https://h.test/private/x",
        "allowed /public",
        "allowed ",
        "allowed https://h.test/",
        "disallowed /private",
    ]
    assert proc.stderr == b""


def test_agent_selects_its_group(robots_file):
    proc = _run("--agent", "FooBot/2.1", str(robots_file), "/", "/public", "")
    assert proc.stdout.decode().splitlines() == ["allowed /", "disallowed /public", "allowed "]


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\xff\xfe garbage \x80\x81\n:::\n\r\r\n", b"User-agent: *\nDisallow: /" * 3],
)
def test_any_content_gives_one_line_per_url(tmp_path, content):
    path = tmp_path / "robots.txt"
    path.write_bytes(content)
    urls = ["/a", "", "http://h.test/b?c#d", "not a url at all", "/robots.txt"]
    proc = _run(str(path), *urls)
    assert proc.returncode == 0
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == len(urls)
    for line, url in zip(lines, urls, strict=True):
        verdict, shown = line.split(" ", 1)
        assert verdict in ("allowed", "disallowed")
        assert shown == url


def test_stdin(robots_file):
    proc = _run("-", "/private/1", stdin=robots_file.read_bytes())
    assert proc.stdout == b"disallowed /private/1\n"


def test_unreadable_file_is_one_error_line(tmp_path):
    proc = _run(str(tmp_path / "missing.txt"), "/a")
    assert proc.returncode != 0
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert "missing.txt" in err
    proc = _run(str(tmp_path), "/a")  # a directory
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr.decode()


def test_oversized_file_warns_and_still_answers(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /x\n" + b"#" * (600 * 1024) + b"\nDisallow: /y\n")
    proc = _run(str(path), "/x", "/y")
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines() == ["disallowed /x", "allowed /y"]
    assert b"500 KiB" in proc.stderr


def test_help_has_an_example():
    proc = _run("--help")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "examples:" in out
    assert "dustless robots" in out
    assert "--agent" in out


def test_missing_urls_is_a_usage_error(robots_file):
    proc = _run(str(robots_file))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr.decode()

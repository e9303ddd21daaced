import http.server
import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "{tmp}/x"], "no seeds"),
        (["ftp://a.test/", "--out", "{tmp}/x"], "only http and https"),
        (["{tmp}/x", "mailto:a@a.test"], "only http and https"),
        (["http://a.test/", "--out", "{tmp}/x", "--resolve", "nocolon"], "NAME:IP"),
        (["http://a.test/", "--out", "{tmp}/x", "--policy", "nonesuch"], "nonesuch"),
        (["http://a.test/", "--out", "{tmp}/x", "--max-pages", "0"], "--max-pages"),
        (["--out", "{tmp}/empty", "--resume"], "no crawl to resume"),
        (["--seeds", "{tmp}/missing.txt", "--out", "{tmp}/x"], "missing.txt: cannot read"),
        (["http://a.test/", "--out", "{tmp}/x", "--allow-ip", "10.0.0.0/33"], "CIDR"),
        (["http://a.test/", "--out", "{tmp}/x", "--resolve", "a.test:999.1.1.1"], "999.1.1.1"),
        # The scheme is missing: say so, and what was probably meant.
        (
            ["{tmp}/x", "example.com"],
            "'example.com' has no scheme: did you mean http://example.com?",
        ),
        (["example.com", "--out", "{tmp}/x"], "did you mean http://example.com?"),
        (["{tmp}/x", "localhost:8080/a"], "did you mean http://localhost:8080/a?"),
        # A seed without a host names the seed.
        (["{tmp}/x", "http://"], "seed 'http://': missing host"),
        # The directory first, as for every command that reads a crawl.
        (["http://a.test/"], "the directory comes first: dustless crawl DIR http://a.test/"),
        (["example.com"], "to crawl that site, dustless crawl DIR http://example.com/"),
        (["{tmp}/x", "http://a.test/", "--stall-timeout", "0"], "--stall-timeout: must be > 0"),
        (["{tmp}/x", "http://a.test/", "--progress-interval", "-1"], "--progress-interval"),
        (["{tmp}/x", "--resume", "http://a.test/"], "no crawl to resume"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(args, message, tmp_path, ch):
    proc = ch.run_cli("crawl", *[a.format(tmp=tmp_path) for a in args])
    assert not (tmp_path / "x" / "crawl.db").exists()  # nothing written for bad settings
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert message in lines[0]
    assert "Traceback" not in proc.stderr


def test_out_naming_a_file_says_so(tmp_path, ch):
    a_file = tmp_path / "plain-file"
    a_file.write_text("x")
    for args in (["http://a.test/", "--out", str(a_file)], [str(a_file), "http://a.test/"]):
        proc = ch.run_cli("crawl", *args)
        assert proc.returncode == 2
        assert proc.stderr == (
            f"dustless crawl: error: {a_file} is a file: the crawl directory must be a directory\n"
        )


_PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (_PNG, "seeds.txt:1: not UTF-8 text (byte 0x89 at column 1)"),
        (b"http://a.test/\n#\nhttp://b.test/caf\xe9\n", "seeds.txt:3: not UTF-8 text (byte 0xe9"),
        (b"http://a.test/\x00\x01\x02", "seeds.txt:1: a NUL byte at column 15: not a text file"),
        (b"http://a.test/\n\nwww.b.test/\n", "seeds.txt:3: seed 'www.b.test/' has no scheme"),
    ],
)
def test_a_bad_seeds_file_is_one_line_naming_file_and_line(content, message, tmp_path, ch):
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes(content)
    proc = ch.run_cli("crawl", str(tmp_path / "x"), "--seeds", str(seeds))
    assert proc.returncode == 2
    [line] = proc.stderr.splitlines()
    assert line.startswith("dustless crawl: error: ")
    assert message in line
    assert not (tmp_path / "x").exists()


def test_bad_arguments_are_refused_before_the_engine_is_imported(tmp_path):
    # `crawl` took 1.4-1.9 s to reject a bad argument: it imported aiohttp and the store first.
    code = (
        "import sys\n"
        "from dustless.cli.main import main\n"
        f"assert main(['crawl', {str(tmp_path)!r}, 'example.com']) == 2\n"
        "heavy = [m for m in ('aiohttp', 'httptools', 'dustless.fetch', "
        "'dustless.crawl.engine', 'dustless.store') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]", proc.stdout
    assert "did you mean http://example.com?" in proc.stderr


def test_help_has_examples(ch):
    proc = ch.run_cli("crawl", "--help")
    assert proc.returncode == 0
    for option in (
        "--seeds",
        "--scope",
        "--max-depth",
        "--delay-factor",
        "--resume",
        "examples",
        "--connect-timeout",
        "--stall-timeout",
        "--total-timeout",
        "--progress-interval",
        "dustless crawl DIR [URL ...]",
    ):
        assert option in proc.stdout
    assert "the User-Agent header sent" in proc.stdout


class _DisallowAll(http.server.BaseHTTPRequestHandler):
    """A server whose robots.txt refuses every robot: a seed there cannot be fetched."""

    def do_GET(self) -> None:
        body = b"User-agent: *\nDisallow: /\n" if self.path == "/robots.txt" else b"<p>hi</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain" if "robots" in self.path else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def disallowing_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DisallowAll)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_crawl_whose_only_seed_fails_exits_nonzero_saying_why(disallowing_server, tmp_path, ch):
    out = tmp_path / "c"
    proc = ch.run_cli("crawl", str(out), disallowing_server, "--stall-timeout", "3")
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line == (
        f"dustless crawl: the seed could not be fetched: {disallowing_server} "
        "(robots: robots.txt disallows the URL; not requested)"
    )
    with sqlite3.connect(out / "crawl.db") as db:
        (config,) = db.execute("SELECT config FROM crawls").fetchone()
    assert json.loads(config)["stall_timeout"] == 3.0  # the crawl's timeout options arrive


def test_a_crawl_with_one_good_seed_succeeds(disallowing_server, tmp_path, ch, testweb_factory):
    web = testweb_factory(profile="clean", sites=1, pages_per_site=3)
    out = tmp_path / "c"
    proc = ch.run_cli(
        "crawl", str(out), web.seeds[0], disallowing_server, *web.resolve_args,
        "--delay", "0", "--delay-factor", "0",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "finished:" in proc.stderr


def test_progress_lines_off_a_terminal(tmp_path, ch, testweb_factory):
    # One host, 0.2 s between requests, 8 pages: politeness makes the crawl last > 1.4 s,
    # so a report every 0.5 s must appear in the log (stderr is a pipe here).
    web = testweb_factory(profile="clean", sites=1, pages_per_site=8)
    proc = ch.run_cli(
        "crawl", str(tmp_path / "c"), web.seeds[0], *web.resolve_args,
        "--delay", "0.2", "--delay-factor", "0", "--max-pages", "8",
        "--progress-interval", "0.5",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    reports = [line for line in proc.stderr.splitlines() if "elapsed" in line]
    assert reports, proc.stderr
    assert "pages/s now" in reports[0]
    assert all(len(line) <= 80 for line in proc.stderr.splitlines() if "pages/s" in line)
    assert "finished: 8 pages" in proc.stderr


def _one_page(body: bytes) -> type[http.server.BaseHTTPRequestHandler]:
    """A handler that serves ``body`` as HTML at / and 404 elsewhere, quietly."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/" else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


class _V6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


def test_resolve_to_a_bracketed_ipv6_address(tmp_path, ch):
    # `--resolve NAME:[IPv6]` was split at its last colon by the CLI ("'1]' is not an IP
    # address"); one parser (the fetcher's) reads it everywhere.
    Handler = _one_page(b"<html><body>over IPv6</body></html>")
    server = _V6Server(("::1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        out = tmp_path / "c"
        proc = ch.run_cli(
            "crawl", str(out), f"http://h.test:{port}/", "--resolve", "h.test:[::1]",
            "--quiet", "--delay", "0",
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(out / "crawl.db") as db:
        got = db.execute(
            "SELECT f.state FROM fetches f JOIN urls u ON u.id = f.url_id WHERE u.url = ?",
            (f"http://h.test:{port}/",),
        ).fetchall()
    assert got == [("OK",)]


def test_a_seed_refusing_connections_is_reported_within_seconds(tmp_path, ch):
    # Nothing listens on the port: every connection is refused. The crawl used to back off
    # 5 s, 10 s, 20 s, 40 s (~77 s) before its one-line error; a given seed's host that
    # never answered is tried a few times quickly instead.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: refused from now on
    started = time.monotonic()
    proc = ch.run_cli("crawl", str(tmp_path / "c"), f"http://127.0.0.1:{port}/", "--quiet")
    took = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("dustless crawl: the seed could not be fetched")
    assert took < 30, took  # ~2 s; generous for a loaded machine, far from 77 s


def test_a_rerun_after_a_failed_first_crawl_starts_over(tmp_path, ch):
    # No seed of the first crawl could be fetched (a server not started yet): the rerun
    # neither asks for --resume (the crawl has finished) nor is refused: it starts over.
    Handler = _one_page(b"<html><body>up now</body></html>")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out, seed = tmp_path / "c", f"http://127.0.0.1:{port}/"
    first = ch.run_cli("crawl", str(out), seed, "--quiet", "--delay", "0")
    assert first.returncode == 1, first.stderr  # the seed could not be fetched
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        again = ch.run_cli("crawl", str(out), seed, "--quiet", "--delay", "0")
    finally:
        server.shutdown()
        server.server_close()
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(out / "crawl.db") as db:
        assert db.execute("SELECT count(*) FROM crawls").fetchone() == (1,)
        rows = db.execute("SELECT f.state FROM fetches f JOIN urls u ON u.id = f.url_id")
        assert [state for (state,) in rows] == ["OK"]
    # A crawl that did fetch something is still never overwritten.
    third = ch.run_cli("crawl", str(out), seed, "--quiet")
    assert third.returncode == 2
    assert "add --resume" in third.stderr

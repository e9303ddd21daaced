"""``crawl --store none`` (issue 28): the crawl reaches what the default reaches and keeps
nothing but seeds.out.txt; what cannot be done without a store is refused in one line."""

import http.server
import json
import subprocess
import threading

import pytest


def _summary(cmd: list[str]) -> dict:
    proc = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def _files(root) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_store_none_reaches_every_page_the_default_does_and_writes_only_seeds_out(
    testweb_factory, tmp_path, ch
):
    # The dirty web has duplicate pages: content-seen (revisits) works without WARC files.
    web = testweb_factory(profile="dirty", sites=3, pages_per_site=30)
    extra = ("--delay", "0", "--delay-factor", "0")
    stored = _summary(ch.crawl_cmd(web, tmp_path / "stored", *extra))
    unstored = _summary(ch.crawl_cmd(web, tmp_path / "none", *extra, "--store", "none"))

    for key in ("fetched", "revisits", "discovered", "states", "codes", "finished"):
        assert unstored[key] == stored[key], key
    assert stored["fetched"] > 50  # a crawl worth comparing
    assert stored["revisits"] > 0
    assert unstored["crawl_db"] is None
    assert unstored["warc"] is None
    # Nothing but the next crawl's seeds: no crawl.db (nor -wal/-shm), no warc/, no indexes/.
    assert _files(tmp_path / "none") == {"seeds.out.txt"}
    assert (tmp_path / "none" / "seeds.out.txt").read_text() == (
        tmp_path / "stored" / "seeds.out.txt"
    ).read_text()
    assert {"crawl.db", "warc", "indexes"} <= _files(tmp_path / "stored")


@pytest.mark.parametrize("option", [["--resume"], ["--db", "postgresql://u@h.test/crawl"]])
def test_what_store_none_cannot_do_is_one_line(option, tmp_path, ch):
    proc = ch.run_cli("crawl", str(tmp_path / "x"), "http://a.test/", "--store", "none", *option)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.splitlines()
    assert f"{option[0]} is impossible with --store none" in line
    assert not (tmp_path / "x").exists()


def test_store_none_has_help(ch):
    proc = ch.run_cli("crawl", "--help")
    assert proc.returncode == 0
    assert "--store {warc,none}" in proc.stdout
    assert "--store none" in proc.stdout


class _DisallowAll(http.server.BaseHTTPRequestHandler):
    """robots.txt refuses every robot: the one seed cannot be fetched."""

    def do_GET(self) -> None:
        body = b"User-agent: *\nDisallow: /\n"
        self.send_response(200 if self.path == "/robots.txt" else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_store_none_crawl_whose_seed_fails_exits_nonzero_saying_why(tmp_path, ch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DisallowAll)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        seed = f"http://127.0.0.1:{server.server_address[1]}/"
        proc = ch.run_cli("crawl", str(tmp_path / "c"), seed, "--store", "none")
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line == "dustless crawl: no page could be fetched: robots 1"
    assert _files(tmp_path / "c") == {"seeds.out.txt"}

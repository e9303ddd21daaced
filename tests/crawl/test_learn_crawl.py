"""``dustless crawl --learn``: a rule learned then retracted leaves no URL unreached, and a
``kill -9`` keeps the rules learned so far (``crawl/learn.py``, docs/learning.md)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from dustless.crawl import CrawlConfig, run_crawl
from dustless.rules import RuleSet, SiteScript, rule_from_spec
from dustless.url import Normalizer

PAIRS = 8  # pages whose parameter v does not matter: DropParam(v) is learned from them


def site() -> dict[str, bytes]:
    """``/p{i}?v=1`` and ``?v=2`` are one page; ``/c{i}?v=1`` and ``?v=2`` are not, and each
    links a leaf no other page links to: merging them would lose the leaves."""
    pages: dict[str, bytes] = {}
    home = "".join(f'<a href="/p{i}?v={v}">p</a>' for i in range(PAIRS) for v in (1, 2))
    pages["/"] = f"<p>home page of the test</p>{home}".encode()
    for i in range(PAIRS):
        links = "".join(f'<a href="/c{i}?v={v}">c</a>' for v in (1, 2))
        text = " ".join(["section", "page", "number", "word" * (i + 1)] * 20)
        for v in (1, 2):
            pages[f"/p{i}?v={v}"] = f"<p>{text}</p>{links}".encode()
            other = " ".join(["catalog", "entry", "variant" * v, "item" * (i + 1)] * 20)
            pages[f"/c{i}?v={v}"] = f'<p>{other}</p><a href="/leaf{i}-{v}">leaf</a>'.encode()
            leaf = " ".join(["leaf", "document", "alpha" * v, "beta" * (i + 1)] * 20)
            pages[f"/leaf{i}-{v}"] = f"<p>{leaf}</p>".encode()
    return pages


class Handler(BaseHTTPRequestHandler):
    pages: ClassVar[dict[str, bytes]] = {}
    requested: ClassVar[set[str]] = set()
    #: the crawl's DB: /p2 is answered once the rule is learned (see do_GET)
    db: ClassVar[Path | None] = None

    def do_GET(self) -> None:
        type(self).requested.add(self.path)
        if self.path.startswith("/p2?") and self.db is not None:
            # The engine handles a page some time after its fetch (pages are held to be
            # handled together). /p2 answers once the /p0 and /p1 pairs have been handled
            # and DropParam(v) learned from them (an event, not a time: a loaded machine
            # may take any time to get there), so that the links of /p2 onwards are
            # admitted under the rule: otherwise a fast client can fetch every /p page
            # first, and nothing is merged that the retraction could admit again.
            _until_learned(self.db)
        body = self.pages.get(self.path)
        self.send_response(404 if body is None else 200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args: object) -> None:
        pass


def _until_learned(db_path: Path, timeout: float = 60.0) -> None:
    """Wait (in the server's thread) until the crawl's DB holds the DropParam(v) rule."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1) as db:
                if db.execute(
                    "SELECT 1 FROM learned_rules WHERE spec LIKE '%dropParam%'"
                ).fetchone():
                    return
        except sqlite3.Error:
            pass  # not created yet, or no learned_rules table yet
        time.sleep(0.02)  # the crawl commits to its DB file: nothing here to await


@pytest.fixture
def server():
    Handler.pages = site()
    Handler.requested = set()
    Handler.db = None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_a_rule_learned_then_retracted_leaves_no_url_unreached(server, tmp_path):
    out = tmp_path / "c"
    Handler.db = out / "crawl.db"
    config = CrawlConfig(seeds=(server + "/",), delay=0, delay_factor=0, progress=False, learn=True)
    result = run_crawl(config, out)
    assert result.finished
    with sqlite3.connect(out / "crawl.db") as db:
        rules = db.execute(
            "SELECT spec, support, retracted_at, reason FROM learned_rules"
        ).fetchall()
        states = dict(db.execute("SELECT state, count(*) FROM urls GROUP BY state").fetchall())
    drop = [r for r in rules if r[0] == '{"element":"dropParam","name":"v"}']
    assert len(drop) == 1, rules
    _, support, retracted_at, reason = drop[0]
    assert support >= 2
    assert retracted_at is not None  # the /c pages contradicted it
    assert "differ" in reason
    # Every page of the site was requested: what the rule merged was admitted again.
    assert set(Handler.pages) <= Handler.requested
    assert states.get("merged", 0) == 0
    assert result.stats.rules_retracted == 1
    assert result.stats.readmitted >= 1
    # The file of rules in force no longer holds it.
    assert "dropParam" not in (out / "learned-rules.xml").read_text()


def test_learning_is_on_by_default_with_the_aggressive_policy(server, tmp_path, ch):
    for policy, flag, learns in (
        ("aggressive", (), True),
        ("standard", (), False),
        ("aggressive", ("--no-learn",), False),
        ("standard", ("--learn",), True),
    ):
        out = tmp_path / f"{policy}{''.join(flag)}"
        proc = ch.run_cli("crawl", out.as_posix(), server + "/", "--policy", policy, *flag,
                          "--delay", "0", "--quiet", "--max-depth", "1")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        with sqlite3.connect(out / "crawl.db") as db:
            (config,) = db.execute("SELECT config FROM crawls").fetchone()
        assert CrawlConfig.from_json(config).learn is learns
        assert (out / "learned-rules.xml").exists() is learns


def _rows(db_path: Path) -> list[tuple[int, str, str, float | None]]:
    try:
        with sqlite3.connect(db_path, timeout=0.1) as db:
            return db.execute(
                "SELECT id, host, spec, retracted_at FROM learned_rules ORDER BY id"
            ).fetchall()
    except sqlite3.Error:
        return []


def test_resume_after_kill_9_keeps_the_rules_learned_so_far(testweb_factory, tmp_path, ch):
    web = testweb_factory(profile="canonical", sites=6, pages_per_site=30)
    out = tmp_path / "killed"
    opts = ("--learn", "--delay", "0.1", "--delay-factor", "0", "--concurrency", "16")
    crawler = subprocess.Popen(ch.crawl_cmd(web, out, *opts), stderr=subprocess.DEVNULL)
    # The kill waits on an event — rules committed — not on a random time: SIGKILL, no flush.
    deadline = time.monotonic() + 60
    while len(_rows(out / "crawl.db")) < 4 and crawler.poll() is None:
        assert time.monotonic() < deadline, "no rule learned"
        time.sleep(0.02)
    crawler.send_signal(signal.SIGKILL)
    crawler.wait()
    assert crawler.returncode == -signal.SIGKILL, "the crawl ended before the kill"
    before = [r for r in _rows(out / "crawl.db") if r[3] is None]
    assert len(before) >= 4
    with sqlite3.connect(out / "crawl.db") as db:
        (last_url,) = db.execute("SELECT max(id) FROM urls").fetchone()

    resumed = ch.run_cli("crawl", "--out", str(out), "--resume", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    after = {r[0]: r for r in _rows(out / "crawl.db")}
    for rid, host, spec, _ in before:
        assert after[rid][1:3] == (host, spec)  # kept, under the same id
    # The resumed crawl applied them: every URL it admitted has the identity they give —
    # those still in force at its end (new evidence may retract a kept rule: a URL admitted
    # after that keeps its own identity, as it should).
    kept = RuleSet(
        tuple(
            SiteScript(f"kept: {host}", (host,), rules=(rule_from_spec(spec),))
            for rid, host, spec, _ in before
            if after[rid][3] is None
        )
    )
    std = Normalizer("standard").normalize
    with sqlite3.connect(out / "crawl.db") as db:
        admitted = db.execute(
            "SELECT url, identity FROM urls WHERE id > ? AND identity NOT LIKE '% %'",
            (last_url,),
        ).fetchall()
        merges = db.execute("SELECT count(*) FROM learned_merges WHERE NOT checked").fetchone()[0]
        checks = {u for (u,) in db.execute("SELECT url FROM learned_merges WHERE checked")}
    assert admitted
    changed = [(u, i) for u, i in admitted if kept.apply(std(u)) != std(u)]
    assert changed  # spellings the kept rules rewrite were met after the resume …
    # … and stored under the identity the rules give them, but for the few merges fetched
    # under their own identity to check a rule.
    assert [u for u, i in changed if kept.apply(i) != i and u not in checks] == []
    assert merges > 0
    text = (out / "learned-rules.xml").read_text()
    assert all(host in text for _, host, _, _ in before)

"""The learner gets all the evidence (``crawl/learn.py``, ``rules/_learn_live.py``): a
revisit (a payload repeated byte for byte) hands over its canonical declaration as a first
capture does, and parameters that never matter *together* (``?a=1&b=2`` beside the bare
URL, in either order) are learned from a site that declares correct canonicals.

The crawls run against a site served on 127.0.0.1 inside the test.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from dustless.crawl import CrawlConfig, run_crawl
from dustless.crawl.learn import Learning
from dustless.crawl.progress import RunCounters
from dustless.fetch import FetchResult
from dustless.frontier import QueuedURL
from dustless.rules import (
    HostRedirect,
    LiveEvidence,
    LiveLearner,
    LiveOptions,
    LiveRules,
    PageFacts,
    dump_script,
    load_script,
    rule_spec,
)
from dustless.states import NetState
from dustless.store import FetchRecord

PAGES = 150


def _page(i: int, host: str) -> bytes:
    """Page ``i``: the same bytes whatever the query; links add ``?a=1&b=2`` (either order)."""
    n = PAGES
    links = "".join(
        f'<a href="/p{(i + d) % n}.html{q}">next</a>'
        for d, q in ((1, ""), (2, "?a=1&b=2"), (3, "?b=2&a=1"), (7, "?a=1&b=2"), (11, ""))
    )
    text = " ".join(f"paragraph {i} of page p{i} word{i * 7} thing{i * 13}" for _ in range(30))
    return (
        f'<html><head><link rel="canonical" href="http://{host}/p{i}.html"></head>'
        f"<body><p>{text}</p>{links}</body></html>"
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        body = None
        if path == "/":
            path = "/p0.html"
        if path.startswith("/p") and path.endswith(".html") and path[2:-5].isdigit():
            i = int(path[2:-5])
            body = _page(i, self.headers["Host"]) if i < PAGES else None
        self.send_response(404 if body is None else 200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def noisy_site() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.mark.parametrize("policy", ["aggressive", "standard"])
def test_parameters_irrelevant_together_are_learned_within_50_pages(noisy_site, tmp_path, policy):
    out = tmp_path / "c"
    config = CrawlConfig(
        seeds=(noisy_site,), delay=0, delay_factor=0, progress=False, learn=True,
        policy=policy, max_depth=60,
    )  # fmt: skip
    assert run_crawl(config, out).finished
    with sqlite3.connect(out / "crawl.db") as db:
        rules = db.execute(
            "SELECT spec, learned_fetches FROM learned_rules WHERE retracted_at IS NULL"
        ).fetchall()
        fetched = [u for (u,) in db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.status = 200"
        )]  # fmt: skip
    learned = dict(rules)
    for name in ("a", "b"):
        spec = f'{{"element":"dropParam","name":"{name}"}}'
        assert spec in learned, rules
        assert learned[spec] <= 50  # within the host's first 50 pages
    # Nothing lost: every page fetched; the noisy spellings mostly merged, not fetched.
    bare = {u.partition("?")[0] for u in fetched}
    assert len(bare) >= PAGES  # the 150 pages and the home page
    noisy = [u for u in fetched if "?" in u]
    assert len(noisy) <= 60, len(noisy)


def test_a_revisit_hands_its_canonical_to_the_learner():
    store = SimpleNamespace(
        fetch_state_counts=dict, merge_counts=dict, learned_rules=list, shared=False
    )
    learning = Learning(
        store,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        lambda u: u,
        LiveRules(),
        RunCounters(),
        LiveOptions(),
        wall=time.time,
        path=None,
    )
    url = "http://h.test/p?a=1&b=2"
    body = b'<html><head><link rel="canonical" href="/p"></head><body>x</body></html>'
    r = FetchResult(url, NetState.OK, 200, (("Content-Type", "text/html"),), body, "text/html")
    # As the engine records a revisit: the first capture's payload hash, no links parsed.
    fetch = FetchRecord(7, 0.0, NetState.OK, status=200, mime="text/html",
                        content_sha1="ab" * 20, revisit_of=3)  # fmt: skip
    learning.page(QueuedURL(url, "h.test", 1, url_id=7, identity=url), r, fetch)
    (facts,) = learning._facts
    assert facts.canonical == "http://h.test/p"
    assert facts.sha1 == "ab" * 20
    assert facts.document


def test_a_group_is_learned_only_if_each_parameter_alone_keeps_the_budget():
    learner = LiveLearner(LiveOptions(min_support=2))
    facts = []
    for i in range(4):
        facts += [
            PageFacts(f"http://h.test/p{i}", 2 * i, True, False, f"s{i}"),
            PageFacts(f"http://h.test/p{i}?a=1&b=2", 2 * i + 1, True, False, f"s{i}"),
        ]
    # ``a`` alone selects the page where ``b`` is missing: dropping ``a`` merges documents.
    for i in range(4):
        facts += [
            PageFacts(f"http://h.test/q{i}?a=1", 100 + 2 * i, True, False, f"qa{i}"),
            PageFacts(f"http://h.test/q{i}?a=2", 101 + 2 * i, True, False, f"qb{i}"),
        ]
    learner.observe(facts)
    assert not learner.learn().learned
    ok = LiveLearner(LiveOptions(min_support=2))
    ok.observe(facts[:8])
    assert {r.spec for r in ok.learn().learned} == {
        '{"element":"dropParam","name":"a"}',
        '{"element":"dropParam","name":"b"}',
    }


def _doc(key: str, content: str, url_id: int) -> PageFacts:
    return PageFacts(key, url_id, True, False, content)


def test_an_alias_is_never_learned_both_ways_and_its_file_applies_the_one(tmp_path):
    bare, www = "http://docs.test", "http://www.docs.test"
    learner = LiveLearner(LiveOptions(min_support=2))
    learner.observe([_doc(h + f"/x{i}", f"X{i}", n) for n, (h, i) in enumerate(
        (h, i) for i in range(3) for h in (bare, www))])  # fmt: skip
    first = {(r.host, r.spec) for r in learner.learn().learned}
    assert first == {("www.docs.test", rule_spec(HostRedirect("docs.test")))}
    # Later the www host shows more pages (checks of the alias fetch its spellings), and both
    # hosts more equal pairs: the reverse alias would now pass on its own.
    more = [_doc(www + f"/w{i}", f"W{i}", 100 + i) for i in range(20)]
    more += [_doc(h + f"/y{i}", f"Y{i}", 200 + 2 * i + (h == www)) for i in range(6)
             for h in (bare, www)]  # fmt: skip
    learner.observe(more)
    assert not learner.learn().learned
    assert {(h, s) for h, s, _ in learner.active()} == first
    # The rules file written from them applies the one direction.
    path = tmp_path / "learned-rules.xml"
    path.write_text(dump_script(learner.ruleset))
    rules = load_script(path).rules
    assert rules.apply(www + "/x1") == bare + "/x1"
    assert rules.apply(bare + "/x1") == bare + "/x1"
    # A worker that learned the reverse (or an older crawl's DB) cannot put it in force.
    assert not learner.adopt("docs.test", rule_spec(HostRedirect("www.docs.test")),
                             HostRedirect("www.docs.test"), LiveEvidence(9, 9, 9, 9))  # fmt: skip
    assert learner.ruleset.apply(www + "/x1") == bare + "/x1"

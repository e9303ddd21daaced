"""Issue 25: the learner's within-host vocabulary on small sites of our own (127.0.0.1).

For each kind — a path parameter of any name (``;sess=…``), a query parameter of any name
(``?layout=…``), a template under a path prefix (``/amp/…``, its own boilerplate, the same
main content) and a query form of the path (``/index.php?page=…``) — a site where every
page declares its correct canonical and links spell other pages that way: the rule is
learned within the host's first 50 pages, written to ``learned-rules.xml``, and a crawl with
``--rules`` that file applies it from the first page (the duplicates fall to none) and
reaches every page. A section that declares the home page canonical for every page is
never merged into it.
"""

from __future__ import annotations

import sqlite3
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dustless.crawl import CrawlConfig, run_crawl
from dustless.rules import DropParam, LiveLearner, LiveOptions, PageFacts, load_script, rule_spec
from support import words

PAGES, WRONG = 70, 6
KINDS = {
    # kind: (element learned, attribute text in the file)
    "pathparam": ('"element":"dropParam"', 'name="sess"'),
    "param": ('"element":"dropParam"', 'name="layout"'),
    "prefix": ('"element":"stripPrefix"', 'prefix="/amp/"'),
    "query": ('"element":"queryToPath"', 'to="/{x}"'),
}


def _variant(kind: str, path: str, on: str) -> str:
    """How page ``on`` spells a link to ``path`` in the site's other form."""
    tag = format(zlib.crc32(on.encode()), "X")
    if kind == "pathparam":
        return f"{path};sess={tag}"
    if kind == "param":
        return f"{path}?layout={tag}"
    if kind == "prefix":
        return "/amp" + path
    return "/index.php?page=" + path.lstrip("/")


def _html(kind: str, host: str, path: str, amp: bool) -> bytes | None:
    """The page at ``path`` (the primary spelling): ``/sN/pI.html`` or ``/w/qK.html``."""
    if path.startswith("/s/p") and path.endswith(".html") and path[4:-5].isdigit():
        i = int(path[4:-5])
        if i >= PAGES:
            return None
        canonical = f"http://{host}{path}"
        links = [f"/s/p{(i + d) % PAGES}.html" for d in (1, 2)]
        links += [_variant(kind, f"/s/p{(i + d) % PAGES}.html", path) for d in (3, 5, 8)]
        if i % 10 == 0:
            links.append(f"/w/q{i // 10 % WRONG}.html")
        text = words(path, 150)
    elif path.startswith("/w/q") and path.endswith(".html") and path[4:-5].isdigit():
        k = int(path[4:-5])
        if k >= WRONG:
            return None
        canonical = f"http://{host}/"  # a misconfigured section: every page says "home"
        links = [f"/w/q{(k + 1) % WRONG}.html", _variant(kind, f"/w/q{(k + 2) % WRONG}.html", path)]
        text = words(path, 150)
    elif path == "/":
        canonical = f"http://{host}/"
        links = ["/s/p0.html", "/w/q0.html"]
        text = words("home", 150)
    else:
        return None
    # The AMP template: other boilerplate around the same main content.
    chrome = "<nav>" + words("amp-nav" if amp else "nav", 40) + "</nav>"
    anchors = "".join(f'<li><a href="{u}">link</a></li>' for u in links)
    return (
        f'<html><head><title>{path}</title><link rel="canonical" href="{canonical}"></head>'
        f"<body>{chrome}<main><p>{text}</p></main><ul>{anchors}</ul>"
        f"<footer>{'amp' if amp else 'site'} footer</footer></body></html>"
    ).encode()


def _route(kind: str, raw: str) -> tuple[str, bool] | None:
    """The primary path a request asks for, and whether in the AMP template."""
    path, _, query = raw.partition("?")
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    if kind == "pathparam":
        path = "/".join(seg.split(";sess=", 1)[0] for seg in path.split("/"))
    if kind == "query" and path == "/index.php":
        page = params.pop("page", "")
        path = "/" + page if page else "/"
    params.pop("layout", None) if kind == "param" else None
    if params or ";" in path:
        return None
    amp = kind == "prefix" and path.startswith("/amp/")
    return (path[4:] if amp else path), amp


def _serve(kind: str) -> tuple[ThreadingHTTPServer, threading.Thread]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = _route(kind, self.path)
            body = _html(kind, self.headers["Host"], *found) if found else None
            self.send_response(404 if body is None else 200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    return httpd, thread


@pytest.fixture(params=sorted(KINDS))
def site(request) -> Iterator[tuple[str, str]]:
    httpd, thread = _serve(request.param)
    try:
        yield request.param, f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _crawl(seed: str, out: Path, **extra: object) -> list[str]:
    config = CrawlConfig(
        seeds=(seed,), delay=0, delay_factor=0, progress=False, policy="standard",
        max_depth=200, **extra,  # type: ignore[arg-type]
    )  # fmt: skip
    assert run_crawl(config, out).finished
    with sqlite3.connect(out / "crawl.db") as db:
        return [u for (u,) in db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.status = 200"
        )]  # fmt: skip


def _primary(kind: str, url: str) -> str | None:
    rest = "/" + url.partition("://")[2].partition("/")[2]
    found = _route(kind, rest)
    return found[0] if found else None


def test_each_kind_is_learned_early_written_and_reused(site, tmp_path):
    kind, seed = site
    element, attribute = KINDS[kind]
    fetched = _crawl(seed, tmp_path / "learn", learn=True)
    with sqlite3.connect(tmp_path / "learn" / "crawl.db") as db:
        rules = db.execute(
            "SELECT spec, learned_fetches FROM learned_rules WHERE retracted_at IS NULL"
        ).fetchall()
        canonical = db.execute(
            "SELECT count(*) FROM fetches WHERE status = 200 AND canonical IS NOT NULL"
        ).fetchone()[0]
    learned = [(spec, n) for spec, n in rules if element in spec]
    assert learned, rules
    assert min(n for _, n in learned) <= 50, learned  # within the host's first 50 pages
    written = (tmp_path / "learn" / "learned-rules.xml").read_text()
    assert attribute in written, written
    # Every page reached; the variants mostly merged, not fetched.
    primaries = [_primary(kind, u) for u in fetched]
    assert set(primaries) >= {f"/s/p{i}.html" for i in range(PAGES)} | {"/"}
    assert {f"/w/q{k}.html" for k in range(WRONG)} <= set(primaries)  # none merged into "/"
    duplicates = len(primaries) - len(set(primaries))
    assert duplicates <= 30, duplicates
    assert canonical == len(fetched)  # every fetch kept its declaration, revisits included
    # The file, reused: the rule applies from the first page, no duplicate is fetched.
    rules_file = tmp_path / "learned-rules.xml"
    rules_file.write_text(written)
    assert load_script(rules_file).rules.sites
    again = [_primary(kind, u) for u in _crawl(seed, tmp_path / "reuse", rules=(str(rules_file),))]
    assert set(again) >= {f"/s/p{i}.html" for i in range(PAGES)} | {"/"}
    assert {f"/w/q{k}.html" for k in range(WRONG)} <= set(again)
    assert len(again) == len(set(again)), sorted(again)


def test_a_rule_merging_only_with_an_older_one_is_the_one_blamed():
    """A session id learned first, a sort parameter after: the sort parameter merges two
    orders of a list (different documents). Only together do the two rules merge that pair;
    the newcomer is retracted, the session id stays (it held on every page it merged)."""
    h = "http://shop.test"
    ids = iter(range(1, 1000))

    def page(key: str, content: str) -> PageFacts:
        return PageFacts(key, next(ids), True, False, sha1=content)

    learner = LiveLearner(LiveOptions(min_support=2))
    learner.observe([page(f"{h}/p{i};jsessionid={s}", f"P{i}") for i in range(3) for s in "AB"])
    assert {r.spec for r in learner.learn().learned} == {rule_spec(DropParam("jsessionid"))}
    learner.observe([page(f"{h}/s{i};jsessionid=C", f"S{i}") for i in range(3)])
    learner.observe([page(f"{h}/s{i};jsessionid=D?order=title", f"S{i}") for i in range(3)])
    assert {r.spec for r in learner.learn().learned} == {rule_spec(DropParam("order"))}
    # The reversed list meets two spellings of the list: the first pair retracts the sort
    # parameter; the second is then merged by no rule and blames none.
    learner.observe([page(f"{h}/m/;jsessionid=E", "M"), page(f"{h}/m/;jsessionid=G", "M")])
    changes = learner.observe([page(f"{h}/m/;jsessionid=F?order=-title", "M-rev")])
    assert [r.spec for r in changes.retracted] == [rule_spec(DropParam("order"))]
    assert learner.ruleset.apply(f"{h}/x;jsessionid=Z") == f"{h}/x"


@pytest.mark.parametrize(
    ("variant", "spec"),
    [
        ("/amp/t{i}.html", '{"element":"stripPrefix","prefix":"/amp/"}'),
        (
            "/index.php?page=t{i}.html",
            '{"element":"queryToPath","param":"page","path":"/index.php","to":"/{x}"}',
        ),
    ],
)
def test_a_trusted_hosts_canonicals_yield_the_template_kinds(variant, spec):
    """Variants fetched, each declaring its primary URL (not fetched yet) canonical: with
    one pair fetched on both sides, the declarations are the rule's support."""
    h = "http://cms.test"
    ids = iter(range(1, 1000))

    def page(key: str, content: str, canonical: str) -> PageFacts:
        return PageFacts(key, next(ids), True, False, sha1=content, canonical=canonical)

    learner = LiveLearner(LiveOptions(min_support=2))
    facts = [page(f"{h}/d{i}.html", f"D{i}", f"{h}/d{i}.html") for i in range(3)]
    facts += [page(h + variant.format(i=i), f"T{i}", f"{h}/t{i}.html") for i in range(4)]
    learner.observe(facts)
    assert not learner.learn()  # declarations alone never merge anything
    learner.observe([page(f"{h}/t0.html", "T0", f"{h}/t0.html")])
    learned = learner.learn().learned
    assert [r.spec for r in learned] == [spec]
    assert learned[0].evidence.support >= 4
    assert "declared canonical" in learned[0].sources


def test_a_host_that_is_an_alias_in_force_learns_no_rule_of_its_own():
    """Its URLs go to the other host before any rule of its own applies: the rules it would
    learn would never apply (a rules file full of dead rules)."""
    bare, www = "http://docs.test", "http://www.docs.test"
    ids = iter(range(1, 1000))

    def page(key: str, content: str) -> PageFacts:
        return PageFacts(key, next(ids), True, False, sha1=content)

    learner = LiveLearner(LiveOptions(min_support=2))
    learner.observe([page(h + f"/x{i}", f"X{i}") for i in range(3) for h in (bare, www)])
    first = learner.learn().learned
    assert [(r.host, r.rule.element) for r in first] == [("www.docs.test", "hostRedirect")]
    learner.observe([page(www + f"/amp/y{i}", f"Y{i}") for i in range(3)])
    learner.observe([page(www + f"/y{i}", f"Y{i}") for i in range(3)])
    assert all(r.host != "www.docs.test" for r in learner.learn().learned)
    assert learner.ruleset.apply(www + "/amp/y1") in (bare + "/amp/y1", bare + "/y1")

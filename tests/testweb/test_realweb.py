"""The ``real`` test web: real documents, behaviours drawn from a seed, a truth that knows each.

Pure tests walk the generated web through ``route`` (every URL any page links, breadth-first,
traps cut short); one test crawls a small web with ``dustless crawl``. A failing seed is named
in the assertion message so it can be replayed (``dustless testweb --profile real --seed N``).
"""

from __future__ import annotations

import functools
import html
import sqlite3
import subprocess
import sys
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest

from dustless.testweb import Profile, WebConfig, build_web
from dustless.testweb._corpus import load_corpus
from dustless.testweb._realpages import Where
from dustless.testweb._web import truth_kind
from support import require
from testweb_fixture import start_testweb

pytestmark = pytest.mark.slow  # 2½ minutes: first under xdist (conftest)

SEEDS = (1, 2, 3)
PORT = 8080


@pytest.fixture(scope="module")
def corpus():
    found = load_corpus()
    require(
        not found.missing,
        f"Debian documentation packages missing: {', '.join(found.missing)} "
        "(apt-get update; the test web downloads them with apt-get download)",
    )
    return found


def _web(seed, sites=6, pages=20):
    return build_web(
        WebConfig(seed=seed, sites=sites, pages_per_site=pages, profile=Profile.REAL, port=PORT)
    )


@functools.cache
def _built(seed):
    """The web of ``seed``, built once for the tests that only read it (a build takes seconds;
    the determinism test compares this one with a build of its own)."""
    return _web(seed)


class _Hrefs(HTMLParser):
    """Every href and src, as a browser's parser reads them (not the server's regex)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None and tag in ("a", "link", "area"):
                self.refs.append(value)


def _get(web, url):
    parts = urlsplit(url)
    out = web.route(parts.hostname or "", parts.path or "/", parts.query)
    body = b""
    if out is not None and out.render is not None:
        body = out.render(0)
    elif out is not None:
        body = out.body
    return out, body


@functools.cache
def _walked(seed):
    """``_walk`` of ``_built(seed)``, done once: the link test reads it, and the determinism
    test renders each of its URLs again from a second build."""
    return _walk(_built(seed))


def _walk(web, trap_pages=10, limit=20_000):
    """url -> (outcome, body) for every URL reachable from the seeds."""
    seen = {}
    queue = deque(web.seeds)
    traps = 0
    while queue and len(seen) < limit:
        url = queue.popleft()
        if url in seen:
            continue
        out, body = _get(web, url)
        seen[url] = (out, body)
        if out is None or not body or "html" not in (out.content_type or ""):
            if out is not None and out.location:
                queue.append(urljoin(url, out.location))
            continue
        if out.trap:
            traps += 1
            if traps > trap_pages:
                continue
        parser = _Hrefs()
        parser.feed(body.decode("utf-8", "replace"))
        for ref in parser.refs:
            target = urljoin(url, ref).split("#", 1)[0]
            if target.startswith("http") and target not in seen:
                queue.append(target)
    return seen


@pytest.mark.parametrize("seed", SEEDS)
def test_the_same_seed_gives_byte_identical_sites(corpus, seed):
    one, two = _built(seed), _web(seed)
    assert [s.plan for s in one.sites] == [s.plan for s in two.sites], f"seed {seed}"
    walked = _walked(seed)
    for url, (_, body) in walked.items():
        assert _get(two, url)[1] == body, f"seed {seed}: {url}"
    assert [s.plan for s in _web(seed + 100).sites] != [s.plan for s in one.sites]


@pytest.mark.parametrize("seed", SEEDS)
def test_every_link_resolves_to_a_url_the_truth_classifies(corpus, seed):
    web = _built(seed)
    walked = _walked(seed)
    kinds = {}
    for url, (out, _) in walked.items():
        assert out is not None, f"seed {seed}: {url} names no host of the web"
        kinds[url] = truth_kind(out)
        assert kinds[url].split(">")[0] in {"doc", "trap", "soft404", "notfound", "redirect"}, (
            f"seed {seed}: {url} is {kinds[url]}"
        )
        kind = kinds[url]
        for _ in range(3):  # www → moved → the page: a chain of two at most
            if not kind.startswith("redirect>"):
                break
            target, _ = _get(web, kind.split(">", 1)[1])
            assert target is not None, f"seed {seed}: {url} → {kind} leads nowhere"
            kind = truth_kind(target)
        # to a document or trap, or (a dead link respelled on a redirecting host) a 404
        assert kind in ("doc", "trap", "notfound", "soft404"), f"seed {seed}: {url} → {kind}"
    reached = {out.rid for out, _ in walked.values() if out is not None and out.resource}
    missing = set(web.pages_by_rid) - reached
    assert not missing, f"seed {seed}: documents no link reaches: {sorted(missing)[:5]}"
    # broken links: to documents of the package the site lacks (two a page at most), and the
    # raw pages' own links on an autoindex host; stylesheets are not pages
    broken = [u for u, k in kinds.items() if k in ("notfound", "soft404") and ".css" not in u]
    assert len(broken) < 0.25 * len(kinds), f"seed {seed}: {len(broken)} broken of {len(kinds)}"
    # the initial truth agrees with the server's answers
    for row in web.initial_truth():
        if row.url in walked:
            assert row.kind == kinds[row.url], f"seed {seed}: {row.url}"


def _doc_of(site):
    return next(d for d in site.plan.docs if d not in site.twin)


def _sites(seeds, test):
    """(seed, site) of every site of the seeds for which ``test(plan)`` holds."""
    out = [(seed, s) for seed in seeds for s in _built(seed).sites if test(s.plan)]
    assert out, "no seed drew this behaviour: add seeds"
    return out


def test_print_pages_show_the_same_main_content_in_another_template(corpus):
    for seed, site in _sites(SEEDS, lambda p: p.print_mode):
        doc = _doc_of(site)
        path = site.primary_path(doc)
        normal = site.route(site.host, path, "")
        host, query = site.host, ""
        if site.plan.print_mode == "param":
            query = site.plan.print_param
        elif site.plan.print_mode == "path":
            path = "/print" + path
        else:
            host = "print." + site.host
        printed = site.route(host, path, query)
        assert printed.rid == normal.rid, f"seed {seed} {site.name}"
        content = site.renderer.content(doc, Where(site.host, False, "normal", ()))
        one, two = normal.render(0).decode(), printed.render(0).decode()
        assert content in one, f"seed {seed} {site.name}"
        # a print host's links lead back to the site: absolute, the only difference
        assert content in two or site.plan.print_mode == "host", f"seed {seed} {site.name}"
        assert one != two
        assert 'class="print"' in two
        assert 'class="print"' not in one


def test_mobile_pages_of_one_section_declare_the_home_page_canonical(corpus):
    for seed, site in _sites(SEEDS, lambda p: p.mobile_mode == "host"):
        wrong = site.plan.mobile_wrong_section
        for doc in site.plan.docs:
            out = site.route("m." + site.host, site.primary_path(doc), "")
            page = out.render(0).decode()
            canonical = dict(out.headers).get("Link", "") + page
            home = f"http://{site.host}:{PORT}/"
            if site.section[doc] == wrong:
                assert f'<{home}>; rel="canonical"' in canonical or (
                    f'rel="canonical" href="{home}"' in canonical
                ), f"seed {seed} {site.name} {doc}"
            assert 'class="m"' in page
            assert out.rid == site.rid(site.primary_path(doc))


def test_the_www_twin_differs_in_one_subtree_only(corpus):
    for seed, site in _sites(SEEDS, lambda p: p.www == "alias"):
        www = "www." + site.host
        differ = 0
        for doc in site.plan.docs:
            path = site.primary_path(doc)
            main, twin = site.route(site.host, path, ""), site.route(www, path, "")
            if doc in site.twin:
                differ += 1
                assert twin.rid == f"www.{site.name}:{path}" != main.rid
                assert html.escape(site.twin[doc].title) in twin.render(0).decode()
            else:
                assert twin.rid == main.rid, f"seed {seed} {site.name} {path}"
                if not site.plan.dynamic:
                    assert twin.render(0) == main.render(0)
        assert 0 < differ <= 12, f"seed {seed} {site.name}"


def test_tomcat_session_ids_soft_404s_and_irrelevant_parameters(corpus):
    for seed, site in _sites(SEEDS, lambda p: p.jsessionid):
        home = site.route(site.host, "/", "").render(0).decode()
        hrefs = [h for h in _hrefs(home) if h.startswith("/") and not h.endswith(".css")]
        assert hrefs, f"seed {seed} {site.name}"
        assert all(";jsessionid=" in h for h in hrefs), f"seed {seed} {site.name}"
    for seed, site in _sites(SEEDS, lambda p: p.soft404):
        out = site.route(site.host, "/no/such/page.html", "")
        assert (out.status, truth_kind(out)) == (200, "soft404"), f"seed {seed} {site.name}"
        assert b"not found" in out.render(0)
    for seed, site in _sites(SEEDS, lambda p: p.noise):
        a, b = site.plan.noise
        path = site.primary_path(_doc_of(site))
        plain = site.route(site.host, path, "")
        for query in (f"{a}=1&{b}=2", f"{b}=2&{a}=1"):
            out = site.route(site.host, path, query)
            assert out.rid == plain.rid, f"seed {seed} {site.name}"
            if not site.plan.dynamic:
                assert out.render(0) == plain.render(0)


def test_autoindex_sort_links_list_one_resource(corpus):
    for seed, site in _sites(SEEDS, lambda p: p.autoindex):
        host = "files." + site.host
        listing = site.route(host, "/", "")
        for query in ("C=N;O=D", "C=M;O=A", "C=S;O=D"):
            out = site.route(host, "/", query)
            assert out.rid == listing.rid, f"seed {seed} {site.name}"
            assert out.body != listing.body
        raw = next(h for h in _hrefs(listing.body.decode()) if h.endswith(".html"))
        out = site.route(host, "/" + raw, "")
        assert out.rid.startswith(site.name + ":/"), f"seed {seed} {site.name}: {out.rid}"


def _hrefs(page):
    parser = _Hrefs()
    parser.feed(page)
    return parser.refs


def test_a_standard_crawl_fetches_every_truth_document(corpus, tmp_path):
    # A web of its own, not the pooled one: the truth logs every answer the server gave, so
    # another test's requests (tests/evaluate seeds the files.* listings no page links to)
    # would be documents this crawl is expected to reach.
    web = start_testweb(tmp_path / "web", profile="real", seed=3, sites=3, pages_per_site=15)
    try:
        out = tmp_path / "crawl"
        subprocess.run(
            [sys.executable, "-m", "dustless", "crawl", *web.seeds, "--out", str(out),
             "--policy", "standard", *web.resolve_args, "--delay", "0.01", "--delay-factor",
             "0", "--quiet"],
            check=True, timeout=600,
        )  # fmt: skip
        truth = {row.url: row for row in web.truth()}
    finally:
        web.stop()
    db = sqlite3.connect(out / "crawl.db")
    fetched = [
        url
        for (url,) in db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id "
            "WHERE f.status BETWEEN 200 AND 299 AND f.state IN ('OK', 'code')"
        )
    ]
    db.close()
    unknown = [u for u in fetched if u not in truth]
    assert not unknown, f"seed 3: fetched URLs the truth does not classify: {unknown[:5]}"
    docs = [truth[u].rid for u in fetched if truth[u].kind == "doc"]
    expected = {row.rid for row in truth.values() if row.kind == "doc"}
    assert expected <= set(docs), f"seed 3: not fetched: {sorted(expected - set(docs))[:5]}"
    assert len(docs) > len(set(docs)), "seed 3: the crawl fetched no duplicate document"

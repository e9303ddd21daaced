"""A query form of a path whose pairs are seen only on or across a host alias (the real web's
seed 1886): the ``www`` twin's path forms (``www.h/s0/p3.html``) hold the main host's
identities (``h/s0/p3.html`` by the alias) and the main host's own path forms are fetched only
where the alias's checks fetch them, while the query forms are linked on the main host or on
the twin (``h/index.php?page=s0/p3.html``). Each pair of a page's two forms is then a pair on
the twin or across the alias: counted for the main host, ``queryToPath`` is learned from the
first of them and the rest of the query forms are merged, not fetched. Counted only on the
host of both spellings, as before, a twin in force learned nothing from them, and a crossing
pair taught no host: every query form was a document of its own until, by chance, the main
host fetched both forms of two pages. The site is served on 127.0.0.1 inside the test; the
learner alone is given seed 1886's pairs below."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from dustless.rules import HostRedirect, LiveLearner, LiveRules, PageFacts, QueryToPath, rule_spec
from learn.test_learn_twin import crawl_twin
from support import send_html, serving, words

SECTIONS, PAGES, INTRO, TWINNED = 4, 40, 16, 3


def _page(path: str, query: str) -> tuple[int, int] | None:
    """``(section, page)`` of ``/sK/pJ.html``, or of its query form
    ``/index.php?page=sK/pJ.html``; None for anything else."""
    if path == "/index.php" and query.startswith("page="):
        path = "/" + query.removeprefix("page=")
    elif query:
        return None
    parts = path.strip("/").split("/")
    if len(parts) != 2 or not parts[0].startswith("s") or not parts[1].startswith("p"):
        return None
    k, j = parts[0][1:], parts[1][1:].removesuffix(".html")
    if not (k.isdigit() and j.isdigit() and parts[1].endswith(".html")):
        return None
    return (int(k), int(j)) if int(k) < SECTIONS and int(j) < PAGES else None


def _intro(path: str) -> int | None:
    """``n`` of ``/intro/in.html``."""
    n = path.removeprefix("/intro/i").removesuffix(".html")
    return int(n) if path.startswith("/intro/i") and n.isdigit() and int(n) < INTRO else None


class _Handler(BaseHTTPRequestHandler):
    """``docs.test`` and ``www.docs.test`` serve the same bytes at every spelling. The home
    page links the main host's intro pages, the last few of them their twins on ``www``
    (the alias's evidence); from there one chain runs through the twin's path forms, each
    page linking the next pages' path forms on the twin and its own query form on the main
    host."""

    port = 0
    twin_queries = False  # the query forms on the twin too (else on the main host)

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        main, www = f"http://docs.test:{self.port}", f"http://www.docs.test:{self.port}"
        body: str | None = None
        if path == "/":
            links = "".join(f'<a href="{main}/intro/i{i}.html">i</a>' for i in range(INTRO))
            body = f"<p>{words('home')}</p>{links}"
        elif (i := _intro(path)) is not None:
            # The twin is found from the main host's last intro pages: the main host holds
            # more pages when the alias is learned, and the alias leads to it (``www.h`` →
            # ``h``), as on the real web's seed 1886.
            links = f'<a href="{www}/intro/i{i}.html">w</a>' if i >= INTRO - TWINNED else ""
            links += f'<a href="{www}/s0/p0.html">s</a>'
            body = f"<p>{words(f'intro{i}')}</p>{links}"
        elif (page := _page(path, query)) is not None:
            k, j = page
            nxt = [(k, j + d) for d in (1, 2) if j + d < PAGES]
            if j == PAGES - 1 and k + 1 < SECTIONS:
                nxt.append((k + 1, 0))
            links = "".join(f'<a href="{www}/s{a}/p{b}.html">n</a>' for a, b in nxt)
            query = www if self.twin_queries else main
            links += f'<a href="{query}/index.php?page=s{k}/p{j}.html">q</a>'
            body = f"<p>{words(f'doc{k}x{j}')}</p>{links}"
        send_html(self, None if body is None else f"<html><body>{body}</body></html>".encode())

    def log_message(self, *args: object) -> None:
        pass


class _TwinQueriesHandler(_Handler):
    twin_queries = True


@pytest.fixture(params=["main", "twin"])
def query_twin_site(request) -> Iterator[int]:
    yield from serving(_TwinQueriesHandler if request.param == "twin" else _Handler)


def test_a_query_form_seen_only_across_an_alias_is_learned_early(query_twin_site, tmp_path):
    """``main``: the query forms on the main host, the path forms on the twin (seed 1886's
    shape; the alias's checks fetch a few of the main host's own path forms, and their pairs
    taught the rule before as well). ``twin``: both forms on the twin, whose pairs taught
    nothing before (a host that is an alias learns no rule of its own), and the main host
    fetches a page's two forms only where two of the alias's checks happen to meet: every
    query form of the twin was fetched, a duplicate of its path form."""
    port = query_twin_site
    rules, fetched = crawl_twin(port, tmp_path / "c", max_depth=1000)
    fetches: Counter[tuple[int, int]] = Counter()
    for url in fetched:
        path, _, query = url.partition("://")[2].partition("/")[2].partition("?")
        page = _page("/" + path, query)
        if page is not None:
            fetches[page] += 1
    pages = [(k, j) for k in range(SECTIONS) for j in range(PAGES)]
    assert [p for p in pages if p not in fetches] == []  # nothing lost
    assert any("hostRedirect" in spec for _, spec, _ in rules), rules
    assert any("queryToPath" in spec and at is None for _, spec, at in rules), rules
    # Not learned for the host the alias leads to, the twin's query forms were fetched as
    # pages of their own: 100 to 190 duplicates of 160 pages (``twin``). Learned from the
    # first pairs, what is left is the query forms fetched before (a batch or two of facts)
    # and the alias's checks, which fetch the main host's own spellings: 30 to 45.
    duplicates = sum(n - 1 for n in fetches.values())
    assert duplicates <= 80, (duplicates, rules)


# -- the learner alone: the pairs of seed 1886, made up -----------------------------------------

_ids = itertools.count(1)
H, W = "http://a.test", "http://www.a.test"
Q2P = rule_spec(QueryToPath("/index.php", "page", "/{x}"))


def _doc(key: str, content: str) -> PageFacts:
    return PageFacts(key, next(_ids), True, False, sha1=content)


def _aliased() -> LiveLearner:
    """A learner with ``www.a.test`` → ``a.test`` in force (both serve ``/a/p0..2``)."""
    learner = LiveLearner()
    learner.observe([_doc(u + f"/a/p{i}", f"A{i}") for i in range(3) for u in (H, W)])
    learner.learn()
    assert {(h, s) for h, s, _ in learner.active()} == {
        ("www.a.test", rule_spec(HostRedirect("a.test")))
    }
    return learner


def test_pairs_across_an_alias_teach_the_host_it_leads_to():
    """The twin's path forms hold the main host's identities; the main host fetched only the
    query forms: each pair is ``www.a.test/doc/xN.html`` (``a.test/doc/xN.html`` by the alias)
    beside ``a.test/index.php?page=doc/xN.html``. They are ``a.test``'s pairs, and teach it
    ``queryToPath`` at once — not after ``a.test`` happened to fetch both forms itself."""
    learner = _aliased()
    learner.observe([_doc(W + f"/doc/x{i}.html", f"X{i}") for i in range(2)])
    learner.observe([_doc(H + f"/index.php?page=doc/x{i}.html", f"X{i}") for i in range(2)])
    learned = learner.learn().learned
    assert [(r.host, r.spec) for r in learned] == [("a.test", Q2P)]
    live = LiveRules()
    live.set(learner.ruleset)
    assert live.apply(W + "/index.php?page=doc/x9.html") == H + "/doc/x9.html"


def test_a_twins_differing_page_counts_against_a_rule_learned_across_it():
    """Pairs across the alias are measured like the host's own: a twin's page that is another
    document than the query form it would be merged with is a counterexample (within a spot
    not yet found to differ: the rule is not learned on 2 equal pairs and 1 differing)."""
    learner = _aliased()
    learner.observe([_doc(W + f"/doc/x{i}.html", f"X{i}") for i in range(2)])
    learner.observe([_doc(W + "/doc/y0.html", "WY0")])
    learner.observe([_doc(H + f"/index.php?page=doc/x{i}.html", f"X{i}") for i in range(2)])
    learner.observe([_doc(H + "/index.php?page=doc/y0.html", "Y0")])
    assert not learner.learn().learned

"""Who a counterexample blames (``rules/_learn_live.py``, ``_monitor``): a mobile host
(``m.docs.test``) serving the main host's pages in its own template, but for the last page
of each section, whose main content it shows otherwise (an abridged mobile page), and
``;jsessionid=`` on the main host's links (the mobile host's are bare: the alias is shown by
the spellings the main host's rule gives its pages). ``--max-fp 0``: one counterexample
retracts whatever it counts against.

A pair of two hosts' spellings that differ, merged only by the host
alias *and* the main host's ``jsessionid`` rule, says the twin differs there: it counts
against the alias, never against ``jsessionid``, which every pair within the host shows
right — retracted, it would never be learned again and every session spelling of every
page would be fetched. The site is served on 127.0.0.1 inside the test."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from dustless.crawl import CrawlConfig, run_crawl
from learn.test_learn_twin import crawl_twin
from support import send_html, serving, words

SECTIONS, PAGES = 4, 30


def _path(k: int, j: int) -> str:
    """A section's pages, then its last page: named as a spot of its own (a file name's
    leading word, ``crawl/_learn_held.py``), whose first merge the alias's checks fetch."""
    return f"/s{k}/last-page.html" if j == PAGES else f"/s{k}/p{j}.html"


def _page(path: str) -> tuple[int, int] | None:
    head, _, name = path.strip("/").partition("/")
    if not (head[:1] == "s" and head[1:].isdigit() and int(head[1:]) < SECTIONS):
        return None
    if name == "last-page.html":
        return int(head[1:]), PAGES
    j = name[1:].removesuffix(".html")
    return (int(head[1:]), int(j)) if name[:1] == "p" and j.isdigit() and int(j) < PAGES else None


def _sid(tag: str) -> str:
    """The session id on the links of one page: each page's links carry their own."""
    return hashlib.sha1(tag.encode()).hexdigest()[:16].upper()


class _Handler(BaseHTTPRequestHandler):
    port = 0
    early = False  # the home page links the mobile host's differing pages

    def do_GET(self) -> None:
        host = self.headers["Host"].partition(":")[0]
        mobile = host.startswith("m.")
        path = self.path.partition("?")[0].partition(";")[0]
        body = None
        sid = f";jsessionid={_sid(path)}"  # the main host's links carry the page's own
        if path == "/" and not mobile:
            links = "".join(f'<a href="/s{k}/p0.html{sid}">s{k}</a>' for k in range(SECTIONS))
            if self.early:
                mobile_of = f"http://m.docs.test:{self.port}"
                links += "".join(
                    f'<a href="{mobile_of}{_path(k, PAGES)}">m</a>' for k in range(SECTIONS)
                )
            body = f"<html><body><p>{words('home')}</p>{links}</body></html>"
        page = _page(path)
        if page is not None:
            k, j = page
            text = words(f"doc{k}x{j}")
            if mobile:
                # Its own template; a shorter text of its own on the last page.
                if j == PAGES:
                    text = words(f"abridged{k}", 40)
                body = f'<html><body><div class="m-bar">menu</div><p>{text}</p></body></html>'
            else:
                links = "".join(
                    f'<a href="{_path(k, j + d)}{sid}">n</a>' for d in (1, 2) if j + d <= PAGES
                )
                links += f'<a href="http://m.docs.test:{self.port}{path}">mobile</a>'
                body = f"<html><body><p>{text}</p>{links}</body></html>"
        send_html(self, None if body is None else body.encode())

    def log_message(self, *args: object) -> None:
        pass


class _EarlyHandler(_Handler):
    early = True


@pytest.fixture
def site() -> Iterator[int]:
    yield from serving(_Handler)


@pytest.fixture
def early_site() -> Iterator[int]:
    yield from serving(_EarlyHandler)


def test_a_twin_hosts_difference_never_retracts_the_main_hosts_own_rule(site, tmp_path):
    port = site
    out = tmp_path / "c"
    config = CrawlConfig(
        seeds=(f"http://docs.test:{port}/",), resolve=("*.test:127.0.0.1",), policy="standard",
        learn=True, max_fp=0.0, delay=0, delay_factor=0, progress=False, max_depth=1000,
    )  # fmt: skip
    assert run_crawl(config, out).finished
    with sqlite3.connect(out / "crawl.db") as db:
        rules = db.execute(
            "SELECT host, spec, retracted_at IS NOT NULL, reason FROM learned_rules"
        ).fetchall()
        fetched = [u for (u,) in db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.status = 200"
        )]  # fmt: skip
    main = f"docs.test:{port}"
    session = [r for r in rules if r[0] == main and "jsessionid" in r[1]]
    assert any("hostRedirect" in r[1] for r in rules), rules  # the alias was learned
    assert session, rules  # the main host's session parameter was learned ...
    assert not any(retracted for *_, retracted, _ in session), session  # ... and kept
    # Every page of the main host was reached, and each was fetched about once (a few
    # checks of the rule aside), where without its rule every session spelling is fetched.
    pages = [u for u in fetched if u.startswith(f"http://{main}/s")]
    bare = {u.partition(";")[0] for u in pages}
    assert len(bare) == SECTIONS * (PAGES + 1)
    assert len(pages) - len(bare) <= SECTIONS * PAGES // 10, len(pages) - len(bare)


def test_a_twin_is_learned_an_alias_through_the_spellings_the_hosts_rules_give(site, tmp_path):
    """The mobile host's ``/s0/p1.html`` and the main host's ``/s0/p1.html;jsessionid=…``: the
    same path once the main host's session id is dropped — an alias hint, where the bare
    spellings compared would never meet (the main host's bare ones are merged, not fetched)."""
    port = site
    rules, _ = crawl_twin(port, tmp_path / "c", max_depth=1000)
    learned = [(host, spec) for host, spec, _ in rules]
    assert (f"m.docs.test:{port}", '{"element":"hostRedirect","to":"docs.test"}') in learned


def test_a_twin_page_fetched_before_the_alias_costs_no_page_of_the_main_host(early_site, tmp_path):
    """The mobile host's differing pages are fetched first (the home page links them), and
    take the main host's identities when the alias is learned from the pages after them:
    they hold them as pages fetched under the alias do — checked when due, given back when
    a check finds two documents — so each main-host page is fetched all the same."""
    port = early_site
    out = tmp_path / "c"
    config = CrawlConfig(
        seeds=(f"http://docs.test:{port}/",), resolve=("*.test:127.0.0.1",), policy="standard",
        learn=True, delay=0, delay_factor=0, progress=False, max_depth=1000,
    )  # fmt: skip
    assert run_crawl(config, out).finished
    with sqlite3.connect(out / "crawl.db") as db:
        rules = db.execute("SELECT host, spec FROM learned_rules").fetchall()
        fetched = {u.partition(";")[0] for (u,) in db.execute(
            "SELECT u.url FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.status = 200"
        )}  # fmt: skip
    # (Whether the alias comes before the main host's last pages are fetched is the crawl's
    # scheduling: when it comes after, it is refused for their differences and nothing is
    # held. Either way no page is lost.)
    assert (f"docs.test:{port}", '{"element":"dropParam","name":"jsessionid"}') in rules
    main = f"http://docs.test:{port}"
    lost = [
        _path(k, j) for k in range(SECTIONS) for j in range(PAGES + 1)
        if main + _path(k, j) not in fetched
    ]  # fmt: skip
    assert lost == []

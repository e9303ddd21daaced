"""A spot check stays a check (``crawl/learn.py``): a spelling a host alias's check admitted
under its own identity is fetched, even when a rule learned before it is fetched re-keys the
host's queue. Merged by that re-key, it was never fetched, and the alias's retraction did not
give it back (its merge row is the check's): the real web's seed 4 lost a page of the www
twin's differing subtree so. Built on a real crawl DB, with the learner fed as the engine
feeds it."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

from dustless.crawl._orders import Order, Readmit
from dustless.crawl.learn import Learning
from dustless.crawl.progress import RunCounters
from dustless.fetch import FetchResult
from dustless.frontier import QueuedURL
from dustless.kinds import LinkKind
from dustless.rules import LiveOptions, LiveRules
from dustless.states import NetState
from dustless.store import AdmitURL, FetchRecord, NewSeed, NewURL, SQLiteStore, URLState

H, W = "http://h.test", "http://www.h.test"


def _host(url: str) -> str:
    return url.split("/")[2]


class _Crawl:
    """A real crawl DB and a learner, fed as the engine feeds it."""

    def __init__(self, tmp_path: Path) -> None:
        self.store = store = SQLiteStore(tmp_path)
        store.start_batch('{"policy": "standard"}', now=1_700_000_000.0)
        [(self.seed, _)] = store.add_seeds([NewSeed(H + "/", H + "/", "h.test")])
        discovery = SimpleNamespace(site_of_host=lambda host: "h.test", identity=lambda url: url)
        self.learning = Learning(
            store, discovery, lambda url: url, LiveRules(), RunCounters(),  # type: ignore[arg-type]
            LiveOptions(min_support=2), wall=time.time, path=None,
        )  # fmt: skip
        self.ids: dict[str, int] = {}

    def queue(self, pages: list[tuple[str, str]]) -> None:
        """``(url, identity)`` rows queued."""
        self.store.add_urls(
            [NewURL(url, identity, _host(url), 1, seed_id=self.seed) for url, identity in pages]
        )
        for host in {_host(url) for url, _ in pages}:
            self.ids.update({u.url: u.id for u in self.store.queued_of_host(host, 1000)})

    def fetched(self, pages: list[tuple[str, str]], identity: str | None = None) -> list[Order]:
        """``(url, content)`` fetched, each under its own identity or ``identity``."""
        self.queue([(url, identity or url) for url, _ in pages if url not in self.ids])
        orders: list[Order] = []
        for url, content in pages:
            url_id = self.ids[url]
            item = QueuedURL(url, _host(url), 1, url_id=url_id, identity=identity or url)
            r = FetchResult(url, NetState.OK, 200, (), b"", "text/html")
            record = FetchRecord(url_id, 0.0, NetState.OK, status=200, mime="text/html",
                                 content_sha1=content)  # fmt: skip
            self.store.set_url_state([url_id], URLState.DONE)
            orders += self.learning.page(item, r, record)
        return orders + self.learning.commit()

    def link(self, url: str, identity: str) -> AdmitURL:
        return AdmitURL(url, identity, _host(url), "h.test", 2, LinkKind.ANCHOR, self.seed, None)


def _twin_with_sessions(crawl: _Crawl) -> None:
    """The www host mirrors the main host (the alias is learned), and the main host shows a
    session parameter (a rule of its own, which the alias's spellings take)."""
    crawl.fetched([(h + f"/a/x{i}.html", f"X{i}") for i in range(3) for h in (H, W)])
    crawl.fetched([(H + f"/s{i}.html{q}", f"S{i}") for i in range(3) for q in ("", f"?sid={i}")])
    assert crawl.learning.live.apply(W + "/b/c.html?sid=9") == H + "/b/c.html"


def test_a_check_is_not_merged_by_a_rule_learned_before_it_is_fetched(tmp_path):
    crawl = _Crawl(tmp_path)
    learning, store, seed = crawl.learning, crawl.store, crawl.seed
    fetched = crawl.fetched

    # The www host mirrors the main host: the alias is learned.
    fetched([(h + f"/a/x{i}.html", f"X{i}") for i in range(3) for h in (H, W)])
    assert learning.live.apply(W + "/b/c.html") == H + "/b/c.html"
    # A link to the twin's page in a spot not checked yet: a check, admitted as itself.
    fetched([(H + "/b/c.html", "C")])
    (check,) = learning.merged([crawl.link(W + "/b/c.html", H + "/b/c.html")])
    assert check.identity == W + "/b/c.html"
    store.add_urls([NewURL(check.url, check.identity, check.host, 2, seed_id=seed)])
    (check_id,) = [u.id for u in store.queued_of_host("www.h.test", 1000) if u.url == check.url]
    # Before it is fetched, the main host shows a session parameter: a rule of its own,
    # and its queue (the www host's with it) is re-keyed.
    fetched([(H + f"/s{i}.html{q}", f"S{i}") for i in range(3) for q in ("", f"?sid={i}")])
    assert learning.live.apply(H + "/s9.html?sid=9") == H + "/s9.html"
    row = store.urls_by_id([check_id])[check_id]
    assert (row.identity, row.state) == (W + "/b/c.html", URLState.QUEUED)


def test_a_twin_spelling_holding_an_identity_is_checked_though_a_link_checked_its_spot(tmp_path):
    """Every link of a www twin has a session id; its page ``/b/p.html`` was queued first
    by a twin spelling (``?sid=1``), under the main host's identity. Then a twin page links
    it again (``?sid=2``): the first merge in ``/b/``, a check — of the twin against itself,
    as the identity's page is the twin's. The twin spelling holding the identity must still be
    checked against the main host's own page (fetched), or where the twin differs the main
    host's pages are never fetched (``test_learn_twin.py``'s session twin lost 12 pages in
    about one run in eight, as the learner's batches fell)."""
    crawl = _Crawl(tmp_path)
    _twin_with_sessions(crawl)
    page = H + "/b/p.html"
    crawl.queue([(W + "/b/p.html?sid=1", page)])
    (check,) = crawl.learning.merged([crawl.link(W + "/b/p.html?sid=2", page)])
    assert check.identity == W + "/b/p.html?sid=2"  # the spot's first merge: checked
    orders = crawl.fetched([(W + "/b/p.html?sid=1", "TWIN")], identity=page)
    readmitted = [u.url for o in orders if isinstance(o, Readmit) for u in o.urls]
    assert page in readmitted  # the main host's own page: fetched, and compared
    held_by = crawl.store.urls_by_id([crawl.ids[W + "/b/p.html?sid=1"]])
    assert next(iter(held_by.values())).identity != page  # the identity is given up


def test_a_run_of_pages_named_by_a_leading_word_is_checked_twice(tmp_path):
    """A twin may differ in part of a flat directory's run of pages: the real web's seed 83732
    differs in 12 of its 20 ``app-`` pages, and the spot's first check landed on
    ``app-psql.html``, one of the equal ones; the 12 were merged unchecked and lost (its 16th
    merge never came). So a leading word's run is checked on its 2nd merge too; a directory,
    a subtree a mirror leaves out whole, is not (``VERIFY`` checks the rule's 8th merge)."""
    crawl = _Crawl(tmp_path)
    crawl.fetched([(h + f"/a/x{i}.html", f"X{i}") for i in range(3) for h in (H, W)])

    def checked(names: list[str]) -> list[int]:
        return [
            k
            for k, name in enumerate(names, 1)
            if crawl.learning.merged([crawl.link(f"{W}/{name}.html", f"{H}/{name}.html")])
        ]

    letters = [c + d for c in "bcdefghijk" for d in "ab"]  # 20 pages
    assert checked([f"b/app-{x}" for x in letters]) == [1, 2, 8, 16]
    directory = checked([f"c/{x}" for x in letters])
    assert directory[0] == 1
    assert 2 not in directory
    assert 16 in directory

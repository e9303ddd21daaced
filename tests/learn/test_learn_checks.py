"""A spot check stays a check (``crawl/learn.py``): a spelling a host alias's check admitted
under its own identity is fetched, even when a rule learned before it is fetched re-keys the
host's queue. Merged by that re-key, it was never fetched, and the alias's retraction did not
give it back (its merge row is the check's): the real web's seed 4 lost a page of the www
twin's differing subtree so. Built on a real crawl DB, with the learner fed as the engine
feeds it."""

from __future__ import annotations

import time
from types import SimpleNamespace

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


def test_a_check_is_not_merged_by_a_rule_learned_before_it_is_fetched(tmp_path):
    store = SQLiteStore(tmp_path)
    store.start_batch('{"policy": "standard"}', now=1_700_000_000.0)
    [(seed, _)] = store.add_seeds([NewSeed(H + "/", H + "/", "h.test")])
    discovery = SimpleNamespace(site_of_host=lambda host: "h.test", identity=lambda url: url)
    learning = Learning(
        store, discovery, lambda url: url, LiveRules(), RunCounters(),  # type: ignore[arg-type]
        LiveOptions(min_support=2), wall=time.time, path=None,
    )  # fmt: skip
    ids: dict[str, int] = {}

    def fetched(pages: list[tuple[str, str]]) -> None:
        store.add_urls([NewURL(url, url, _host(url), 1, seed_id=seed) for url, _ in pages])
        for host in {_host(url) for url, _ in pages}:
            ids.update({u.url: u.id for u in store.queued_of_host(host, 1000)})
        for url, content in pages:
            item = QueuedURL(url, _host(url), 1, url_id=ids[url], identity=url)
            r = FetchResult(url, NetState.OK, 200, (), b"", "text/html")
            record = FetchRecord(ids[url], 0.0, NetState.OK, status=200, mime="text/html",
                                 content_sha1=content)  # fmt: skip
            store.set_url_state([ids[url]], URLState.DONE)
            learning.page(item, r, record)
        learning.commit()

    # The www host mirrors the main host: the alias is learned.
    fetched([(h + f"/a/x{i}.html", f"X{i}") for i in range(3) for h in (H, W)])
    assert learning.live.apply(W + "/b/c.html") == H + "/b/c.html"
    # A link to the twin's page in a spot not checked yet: a check, admitted as itself.
    fetched([(H + "/b/c.html", "C")])
    link = AdmitURL(
        W + "/b/c.html", H + "/b/c.html", "www.h.test", "h.test", 2, LinkKind.ANCHOR, seed, None
    )
    (check,) = learning.merged([link])
    assert check.identity == W + "/b/c.html"
    store.add_urls([NewURL(check.url, check.identity, check.host, 2, seed_id=seed)])
    (check_id,) = [u.id for u in store.queued_of_host("www.h.test", 1000) if u.url == check.url]
    # Before it is fetched, the main host shows a session parameter: a rule of its own,
    # and its queue (the www host's with it) is re-keyed.
    fetched([(H + f"/s{i}.html{q}", f"S{i}") for i in range(3) for q in ("", f"?sid={i}")])
    assert learning.live.apply(H + "/s9.html?sid=9") == H + "/s9.html"
    row = store.urls_by_id([check_id])[check_id]
    assert (row.identity, row.state) == (W + "/b/c.html", URLState.QUEUED)

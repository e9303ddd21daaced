"""Many machines: the seed table (004 §2) is the crawl's, whichever worker found what.

Every outside link is a candidate seed, and one not in the seed table yet becomes a seed.
A worker drops a link whose URL it saw stored (its local cache of stored URLs) before asking
the crawl DB; an outside link to a URL another party stored first must still reach the seed
table, or the seeds known depend on which worker stored what (one process found the URL in
its cache and wrote no seed; several workers, each seeing part of the crawl, wrote it).
Real stores: SQLite, then a throwaway PostgreSQL (``open_store``).
"""

from __future__ import annotations

from typing import Any

from dustless.crawl._build import discovery_of
from dustless.crawl.admission import Admission
from dustless.crawl.config import CrawlConfig
from dustless.crawl.progress import RunCounters
from dustless.crawl.scripted import identity_policy
from dustless.frontier import QueuedURL
from dustless.kinds import LinkKind
from dustless.store import PostgresCrawlStore
from dustless.url import Normalizer

X, Y = "http://x.test/", "http://y.test/"
PAGE = "http://y.test/page"  # a page of y's party, linked from x's home too
CONFIG = CrawlConfig(seeds=(X, Y))


class _Hosts:
    """What admission tells the host table: nothing to check here."""

    def queued(self, host: str) -> None:
        pass

    def claim_now(self, hosts: Any) -> None:
        pass


def _admission(store: Any, batch: int) -> Admission:
    discovery = discovery_of(CONFIG, Normalizer(identity_policy(CONFIG.policy, None)))
    return Admission(store, discovery, _Hosts(), RunCounters(), batch=batch, scripted=None)


def _page(admission: Admission, store: Any, url: str, links: list[str]) -> None:
    """The page ``url`` (a seed, stored) was fetched and links to ``links``."""
    ((url_id, seed_id),) = store.query("SELECT id, seed_id FROM urls WHERE url = ?", (url,))
    site = admission.discovery.site_of_host(url.split("/")[2])
    found = admission.discovery.links(
        [(link, LinkKind.ANCHOR) for link in links], depth=0, seed_id=seed_id, party_site=site
    )
    item = QueuedURL(url, url.split("/")[2], 0, seed_id=seed_id, url_id=url_id, identity=url)
    admission.discover(found, item)
    admission.flush()


def _seeds(store: Any) -> set[str]:
    return {url for (url,) in store.query("SELECT url FROM seeds")}


def _start(store: Any) -> int:
    return int(store.start_batch(CONFIG.to_json(), 0.0).number)


def test_an_outside_link_to_a_url_the_process_stored_is_a_seed(open_store: Any) -> None:
    store = open_store(worker="one")
    admission = _admission(store, _start(store))
    admission.seed([X, Y])
    _page(admission, store, Y, [PAGE])  # y's party stores its page (an inside link)
    _page(admission, store, X, [PAGE])  # then x's home links to it: a candidate seed
    assert _seeds(store) == {X, Y, PAGE}
    _page(admission, store, X, [PAGE])  # known as both now: nothing sent, nothing new
    assert _seeds(store) == {X, Y, PAGE}


def test_two_workers_know_the_seeds_one_process_knows(pg_db: str) -> None:
    one, two = PostgresCrawlStore(pg_db, worker="w1"), PostgresCrawlStore(pg_db, worker="w2")
    batch = _start(one)
    first, second = _admission(one, batch), _admission(two, batch)
    first.seed([X, Y])
    _page(first, one, Y, [PAGE])
    _page(second, two, X, [PAGE])  # the worker that never saw the page stored
    assert _seeds(one) == {X, Y, PAGE}
    one.close()
    two.close()

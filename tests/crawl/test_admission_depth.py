"""A link waiting for admission is admitted at the least depth it was found at, and one that
``--max-depth`` refused is admitted when a shorter path to it turns up later.

Found on the ``--learn`` crawls of the drawn ``real`` webs (``tests/learn/test_learn_seeds.py``,
seed 57453): a page at depth 5 and a page at depth 4 both linked ``www.real1/river/app-ecpg.html``
between two flushes. The first link waited for admission; the second, the same identity, was
dropped as its repeat and its URL string settled. The crawl DB refused the waiting one (depth 6
> ``--max-depth 5``), and every later link to the page was skipped as a settled string: the page,
reached by a ``standard`` crawl, was never fetched. Which pages come between two flushes is the
crawl's timing, so a crawl lost it about one run in seven. Real stores: SQLite, then PostgreSQL.
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
from dustless.url import Normalizer

HOME = "http://x.test/"
TARGET = "http://x.test/target.html"
SPELLING = "http://x.test/targ%65t.html"  # another spelling of TARGET: one identity
CONFIG = CrawlConfig(seeds=(HOME,), max_depth=2)


class _Hosts:
    """What admission tells the host table: nothing to check here."""

    def queued(self, host: str) -> None:
        pass

    def claim_now(self, hosts: Any) -> None:
        pass


def _admission(store: Any) -> Admission:
    batch = int(store.start_batch(CONFIG.to_json(), 0.0).number)
    discovery = discovery_of(CONFIG, Normalizer(identity_policy(CONFIG.policy, None)))
    admission = Admission(store, discovery, _Hosts(), RunCounters(), batch=batch, scripted=None)
    admission.seed([HOME])
    return admission


def _found(admission: Admission, store: Any, depth: int, links: list[str]) -> None:
    """A page at ``depth`` of the home's party links to ``links`` (not flushed yet)."""
    ((url_id, seed_id),) = store.query("SELECT id, seed_id FROM urls WHERE url = ?", (HOME,))
    found = admission.discovery.links(
        [(link, LinkKind.ANCHOR) for link in links],
        depth=depth,
        seed_id=seed_id,
        party_site=admission.discovery.site_of_host("x.test"),
    )
    item = QueuedURL(HOME, "x.test", depth, seed_id=seed_id, url_id=url_id, identity=HOME)
    admission.discover(found, item)


def _depth_of(store: Any, url: str) -> int | None:
    rows = store.query("SELECT depth FROM urls WHERE identity = ?", (url,))
    return int(rows[0][0]) if rows else None


def test_a_waiting_link_takes_the_least_depth_it_was_found_at(open_store: Any) -> None:
    store = open_store()
    admission = _admission(store)
    _found(admission, store, 2, [TARGET])  # depth 3: over --max-depth 2
    _found(admission, store, 1, [TARGET])  # depth 2: within it
    admission.flush()
    assert _depth_of(store, TARGET) == 2


def test_a_link_refused_for_its_depth_comes_in_by_a_shorter_path_later(open_store: Any) -> None:
    store = open_store()
    admission = _admission(store)
    _found(admission, store, 2, [TARGET])  # depth 3: refused at the flush
    _found(admission, store, 2, [SPELLING])  # another spelling, one identity: a repeat
    _found(admission, store, 2, [TARGET])  # the same string from another page
    admission.flush()
    assert _depth_of(store, TARGET) is None
    _found(admission, store, 0, [SPELLING])  # depth 1, by a string seen before
    admission.flush()
    assert _depth_of(store, TARGET) == 1

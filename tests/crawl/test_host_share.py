"""The fair share of hosts between workers (``HostTable.lease`` on a shared store): a worker
over its share drains the excess and gives it back; when the share grows back before a
drained host could be given (its fetch rows were not in the DB yet), the host is resumed,
not left drained for ever.

Two ``PostgresCrawlStore`` handles on one DB play two workers; no sockets but the server's.
"""

from __future__ import annotations

from dustless.crawl.hosts import HostTable
from dustless.frontier import Politeness, QueuedURL
from dustless.kinds import LinkKind
from dustless.store import AdmitURL, Limits, PostgresCrawlStore, RobotsRow

HOSTS = [f"h{i}.test" for i in range(8)]


def _url(host: str, path: str) -> AdmitURL:
    url = f"http://{host}{path}"
    return AdmitURL(url, url, host, host, 1, LinkKind.ANCHOR, 1, None)


def _ready_hosts(table: HostTable, mono: float) -> set[str]:
    """The hosts that have a page to fetch now (each popped page released again)."""
    got: list[QueuedURL] = []
    while isinstance(r := table.next(mono, 0.0), QueuedURL):
        got.append(r)
    for item in got:
        table.frontier.release(item.host)
    return {item.host for item in got}


def test_drained_hosts_resume_when_the_share_grows_back(pg_db: str) -> None:
    store = PostgresCrawlStore(pg_db, worker="w1")
    other = PostgresCrawlStore(pg_db, worker="w2")
    try:
        store.start_batch("{}", 0.0)
        store.register_worker("w1", 100.0)
        store.admit([_url(h, f"/{i}") for h in HOSTS for i in range(3)], Limits(), 1)
        store.put_robots([RobotsRow(f"http://{h}", 200, b"", 100.0) for h in HOSTS])
        table = HostTable(store, Politeness(min_delay=0.0, factor=0.0), agent="t", lease_ttl=10)
        assert table.lease(0.0, 100.0) == 8  # alone: every host is its share
        assert _ready_hosts(table, 0.0) == set(HOSTS)
        # A second worker is alive: the share is 4. Hosts whose fetch rows are not in the
        # DB yet (``keep``) cannot be given at once: 4 of them are drained.
        other.register_worker("w2", 101.0)
        other.commit()
        table.lease(1.0, 101.0, keep=HOSTS)
        assert table.held() == 8
        assert len(_ready_hosts(table, 1.0)) == 4
        # The second worker is gone (no heartbeat within a TTL): the share is 8 again, and
        # the drained hosts are crawled again here.
        table.lease(2.0, 200.0, keep=HOSTS)
        assert _ready_hosts(table, 2.0) == set(HOSTS)
    finally:
        store.close()
        other.close()

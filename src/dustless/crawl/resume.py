"""Opening a crawl directory: a fresh crawl, or ``--resume`` after a stop or a ``kill -9``.

On resume the settings come from the batch row (the very same crawl continues), URLs left
``in-flight`` by the crash go back to ``queued``, the WARC writer truncates a torn last record
(scanning from where the DB's last pointer ends), the Bloom filter is refilled from the DB, and
the counters behind ``--max-pages``, ``--max-pages-per-site`` and ``--max-sites`` are recounted.
At the end the crawl writes ``OUTDIR/seeds.out.txt``: every seed, given and discovered, the
input URL list of the next crawl (seed 004 Fig. 1, "출력 URL 목록").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dustless.crawl.config import CrawlConfig
from dustless.crawl.discover import Discovery
from dustless.crawl.net import Fetcher, make_fetcher
from dustless.crawl.scripted import ScriptedPages, identity_policy, load_rules
from dustless.errors import InvalidOption
from dustless.store import WARC_DIR, Batch, CrawlStore, SQLiteStore, UrlSeen, WarcWriter

__all__ = ["SEEDS_OUT", "CrawlFinished", "Run", "open_run", "write_seeds_out"]


class CrawlFinished(InvalidOption):
    """``--resume`` of a crawl that has finished; ``repaired``: its missing
    ``seeds.out.txt`` was written from the DB (then there is nothing wrong to report)."""

    def __init__(self, out: Path, repaired: bool) -> None:
        what = "wrote its missing seeds.out.txt" if repaired else "nothing to resume"
        super().__init__(f"the crawl in {out} has finished: {what}")
        self.repaired = repaired


SEEDS_OUT = "seeds.out.txt"


@dataclass(slots=True)
class Run:
    config: CrawlConfig
    store: SQLiteStore
    batch: Batch
    warc: WarcWriter
    seen: UrlSeen
    discovery: Discovery
    db_queued: dict[str, int]  # host -> URLs queued in the DB
    has_seeds: bool  # the store holds seed rows already
    fetcher: Fetcher
    scripted: ScriptedPages | None = None  # --script (seed 002 §3.4)


def open_run(config: CrawlConfig, out: Path, *, resume: bool, now: float) -> Run:
    from dustless.url import Normalizer

    db_path = out / "crawl.db"
    if not resume and db_path.exists():
        raise InvalidOption(
            f"{out} already holds a crawl: add --resume to continue it, or choose another --out"
        )
    if resume and not db_path.exists():
        raise InvalidOption(f"{out} holds no crawl to resume (no crawl.db)")
    if not resume:
        # Bad settings (policy, --resolve, CIDRs, rule files) fail before anything is written.
        rules = load_rules(config.rules, config.scripts)
        identity_policy(config.policy, rules.all)
        make_fetcher(config)
    store = SQLiteStore(out)
    if resume:
        batch = store.resume_batch()
        if batch is None:
            # A kill -9 right after the final commit of an older dustless could lose the
            # last file: the DB still knows every seed, so write it rather than refuse.
            repaired = not (out / SEEDS_OUT).exists()
            if repaired:
                write_seeds_out(store, out)
            store.close()
            raise CrawlFinished(out, repaired)
        config = CrawlConfig.from_json(batch.config).with_(progress=config.progress)
        try:
            rules = load_rules(config.rules, config.scripts)  # the files the crawl began with
        except Exception:
            store.close()
            raise
        store.requeue_in_flight()
    else:
        batch = store.start_batch(config.to_json(), now)
    warc = WarcWriter(
        out / WARC_DIR,
        committed_ends=store.warc_ends(),
        info={
            "software": "dustless/0.1",
            "format": "WARC File Format 1.1",
            "robots": "classic",
            "http-header-user-agent": config.user_agent,
        },
    )
    seen = UrlSeen(store, capacity=max(10_000_000, 2 * _count(store)), error_rate=0.001)
    discovery = Discovery(config, Normalizer(identity_policy(config.policy, rules.all)))
    has_seeds = False
    db_queued: dict[str, int] = {}
    if resume:
        seen.rebuild()
        has_seeds = _recount(store, discovery)
        db_queued = store.queued_hosts(limit=10_000_000)
    fetcher = make_fetcher(config)
    scripted = None if rules.scripts is None else ScriptedPages(rules.scripts, store)
    return Run(config, store, batch, warc, seen, discovery, db_queued, has_seeds, fetcher, scripted)


def _count(store: CrawlStore) -> int:
    return sum(store.url_counts().values())


def _recount(store: CrawlStore, discovery: Discovery) -> bool:
    """Rebuild the parties and the page counters from the DB; False when it has no seeds."""
    # A party exists where a seed's URL was admitted (queued or fetched), 004 §2.
    for seed_id, host in store.query(
        "SELECT DISTINCT u.seed_id, u.host FROM urls u JOIN seeds s ON s.identity = u.identity"
    ):
        discovery.add_party(discovery.site_of_host(host), seed_id)
    for host, n in store.query(
        "SELECT host, count(*) FROM urls WHERE state != 'skipped' GROUP BY host"
    ):
        discovery.count(discovery.site_of_host(host), n)
    return bool(store.query("SELECT 1 FROM seeds LIMIT 1"))


SEEDS_OUT_HEADER = "# dustless seeds.out.txt: this crawl's seeds, a URL a line (seed 004 Fig. 1)\n"
DISCOVERED_HEADER = (
    "# discovered: outside links of crawled pages. A crawl reading this file with --seeds\n"
    "# does not trust them: a private or loopback address among them needs --allow-private.\n"
)


def write_seeds_out(store: CrawlStore, out: Path) -> Path:
    """``OUTDIR/seeds.out.txt`` (atomically replaced): the given seeds, then, under a comment
    that says so, the discovered ones — every URL a line, so the file is the next crawl's
    ``--seeds`` as it stands."""
    path = out / SEEDS_OUT
    tmp = path.with_suffix(".tmp")
    rows = store.seeds()
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(SEEDS_OUT_HEADER)
        for row in rows:
            if row.discovered_from is None:
                f.write(row.url + "\n")
        discovered = [row.url for row in rows if row.discovered_from is not None]
        if discovered:
            f.write(DISCOVERED_HEADER)
            f.writelines(url + "\n" for url in discovered)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path

"""The engine's parts, built once in dependency order from one ``CrawlSetup``.

``Crawler(CrawlSetup(...))`` is the one constructor (issue 27): what a run opened (store,
fetcher, WARC writer, batch, rules; ``crawl/resume.py``) and how to run it go in one value,
and :func:`build_parts` makes the collaborators from it. Each is given what it uses when it
is constructed — discovery and the host table first, then spellings and learning, then the
admission that takes both, then the sources — and none is given a reference afterwards:
where the wiring was a cycle (admission ↔ spellings ↔ learning), the deciding side returns
orders (``crawl/_orders.py``) that the engine hands to the admission.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dustless.crawl._batching import Batching
from dustless.crawl.admission import Admission
from dustless.crawl.conditional import conditional_batch
from dustless.crawl.config import CrawlConfig
from dustless.crawl.discover import Discovery
from dustless.crawl.hosts import HostTable
from dustless.crawl.learn import Learning, learning_policy
from dustless.crawl.net import Fetches
from dustless.crawl.progress import Progress, RunCounters
from dustless.crawl.record import Recorder
from dustless.crawl.scripted import Rules, ScriptedPages, identity_policy
from dustless.crawl.soft404 import Soft404Hosts
from dustless.crawl.sources import Sources, SourceSwitch, site_switch
from dustless.crawl.spellings import Spellings
from dustless.rules import LiveOptions, LiveRules
from dustless.store import Batch, CrawlStore, WarcWriter

__all__ = ["CrawlSetup", "Parts", "build_parts"]


@dataclass(frozen=True, slots=True)
class CrawlSetup:
    """Everything a ``Crawler`` is given: the opened run and how to run it."""

    config: CrawlConfig
    store: CrawlStore  # SQLite for one machine, PostgreSQL for many
    fetcher: Fetches
    warc: WarcWriter | None  # None: --store none (crawl/record.py)
    batch: Batch
    rules: Rules | None = None
    learned: Path | None = None  # --learn writes its rules there as it goes
    resumed: bool = False
    progress: Progress | None = None
    clock: Callable[[], float] = field(default=time.monotonic)
    wall: Callable[[], float] = field(default=time.time)
    strict: bool | None = None  # None: ``DUSTLESS_STRICT`` says
    # The probe mode of ``evaluate --fetch`` (crawl/probe.py): the URLs queued are fetched,
    # redirects followed a few hops, links not followed.
    probe: bool = False


@dataclass(frozen=True, slots=True)
class Parts:
    """The collaborators of one crawl, each constructed with the ones it uses."""

    stats: RunCounters
    discovery: Discovery
    scripted: ScriptedPages | None
    hosts: HostTable
    record: Recorder
    spellings: Spellings
    learning: Learning | None
    admission: Admission
    sources: Sources
    soft404: Soft404Hosts
    batching: Batching  # one machine or many: chosen once, from the store


def build_parts(s: CrawlSetup) -> Parts:
    from dustless.url import Normalizer

    c, store, batch = s.config, s.store, s.batch
    stats = RunCounters(started=s.clock())
    all_rules = None if s.rules is None else s.rules.all
    policy = identity_policy(c.policy, all_rules)
    # --learn: rules learned during the crawl join the identities (crawl/learn.py).
    live = LiveRules() if c.learn else None
    identity = policy if live is None else learning_policy(policy, live)
    discovery = Discovery(c, Normalizer(identity))
    scripts = None if s.rules is None else s.rules.scripts
    scripted = None if scripts is None else ScriptedPages(scripts, store)
    hosts = HostTable(
        store,
        c.politeness(),
        agent=c.user_agent,
        conditional=conditional_batch(batch.config),
        lease_ttl=c.lease_ttl,  # many machines: how soon a dead worker's hosts come back
    )
    record = Recorder(store, s.warc, batch.number, resumed=s.resumed)
    # Fallback spellings: kept at admission, tried when a fetch gives no document.
    spellings = Spellings(store, discovery, c.spelling_tries)
    learning = None
    if live is not None:
        stats.learning = True
        learning = Learning(
            store,
            discovery,
            Normalizer(policy).normalize,
            live,
            stats,
            LiveOptions(max_fp=c.max_fp, min_support=c.min_support),
            wall=s.wall,
            path=s.learned,
            hosts=hosts,
            spellings=spellings,
        )
    admission = Admission(
        store,
        discovery,
        hosts,
        stats,
        batch=batch.number,
        scripted=scripted,
        spellings=spellings,
        learning=learning,
    )
    # Sitemaps and feeds (crawl/sources.py): where they come from, how they are read.
    default = SourceSwitch(c.sitemaps, c.feeds)
    sources = Sources(
        store,
        discovery,
        admission,
        hosts,
        stats,
        batch=batch.number,
        default=default,
        site_switch=site_switch(all_rules, default),
    )
    return Parts(
        stats=stats,
        discovery=discovery,
        scripted=scripted,
        hosts=hosts,
        record=record,
        spellings=spellings,
        learning=learning,
        admission=admission,
        sources=sources,
        # Soft 404s (crawl/soft404.py): each host's answer to a random missing path.
        soft404=Soft404Hosts(probe=not (s.probe or c.no_soft404_probe)),
        batching=Batching.of(store, c.concurrency),
    )

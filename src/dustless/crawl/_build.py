"""Where the crawl's settings become its parts: the one module that reads a ``CrawlConfig``.

``run_crawl`` (``crawl/run.py``) hands the caller's settings to :func:`open_crawl`, which
checks them (:func:`checked`: the rule files loaded, the fetcher made; bad settings fail
before anything is written), opens the store and the batch (``crawl/resume.py``,
``crawl/worker.py``: they take the settings as JSON and return an ``Opened``), takes the
crawl's stored settings instead on ``--resume`` and for a worker that joins, opens the WARC
writer, and builds the engine's parts from one ``CrawlSetup`` (:func:`build_parts`). Each
part is given the plain values it uses — no part is given the whole config, and the config
builds nothing itself (issue 27) — and the engine is given the parts:
``Crawler(build_parts(setup))``.

The parts are built in dependency order — discovery and the host table first, then
spellings and learning, then the admission that takes both, then the sources — and none is
given a reference afterwards: where the wiring was a cycle (admission ↔ spellings ↔
learning), the deciding side returns orders (``crawl/_orders.py``) that the engine hands to
the admission.
"""

from __future__ import annotations

import functools
import ipaddress
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dustless.crawl._batching import Batching
from dustless.crawl.admission import Admission
from dustless.crawl.conditional import conditional_batch
from dustless.crawl.config import CrawlConfig
from dustless.crawl.discover import Discovery, _Normalizer
from dustless.crawl.filter import UrlFilter
from dustless.crawl.hosts import HostTable
from dustless.crawl.learn import LEARNED_RULES, Learning, learning_policy
from dustless.crawl.net import Fetches, seed_ips
from dustless.crawl.progress import Progress, RunCounters
from dustless.crawl.record import Recorder
from dustless.crawl.resume import Opened, open_run, ready_dir
from dustless.crawl.scope import Scope, site_of
from dustless.crawl.scripted import Rules, ScriptedPages, identity_policy, load_rules
from dustless.crawl.soft404 import Soft404Hosts
from dustless.crawl.sources import Sources, SourceSwitch, site_switch
from dustless.crawl.spellings import Spellings
from dustless.errors import InvalidOption
from dustless.fetch import AddressPolicy, Fetcher, FetchLimits, Resolver, parse_resolve, tls_context
from dustless.frontier import Politeness
from dustless.rules import LiveOptions, LiveRules
from dustless.store import WARC_DIR, Batch, CrawlStore, WarcWriter
from dustless.url import Normalizer, authority_of, hostname_of

__all__ = [
    "Checked",
    "CrawlSetup",
    "Pace",
    "Parts",
    "build_parts",
    "checked",
    "discovery_of",
    "fetch_limits",
    "fetcher_of",
    "open_crawl",
    "politeness_of",
    "warc_info",
]


# -- the run's opening: settings checked, then the store, the batch and the WARC writer -----


def open_crawl(
    config: CrawlConfig,
    out: Path,
    *,
    resume: bool,
    now: float,
    db: str | None = None,
    worker: str | None = None,
    progress: Progress | None = None,
    strict: bool | None = None,
) -> Parts:
    """Open ``out`` for a run — on its own SQLite DB, or as a worker of the crawl on the
    PostgreSQL ``db`` (``crawl/worker.py``) — and build what its engine is given. Nothing is
    written before the directory and the settings given are found good; a resumed crawl and
    a worker that joins run with the crawl's stored settings, this process's display kept."""
    name = None
    if db is None:
        ready_dir(out, resume=resume)
    else:
        from dustless.crawl.worker import worker_name

        name = worker_name(out, worker, resume=resume)
    given = None if resume else checked(config)
    opened: Opened
    if name is None or db is None:
        memory = config.store == "none"
        opened = open_run(out, config.to_json(), resume=resume, now=now, memory=memory)
    else:
        from dustless.crawl.worker import open_worker

        opened = open_worker(
            out, config.to_json(), config.seeds, db=db, name=name, resume=resume, now=now
        )
    try:
        if given is None or not opened.fresh:
            # A resume, or a worker that joined: the crawl's own settings (its seeds are in
            # the DB already); the display is this process's own.
            config = CrawlConfig.from_json(opened.batch.config).with_(progress=config.progress)
            given = checked(config)  # the files the crawl began with
            if resume and db is None:
                # A crawl stored before the parties' table existed: rebuilt from its rows.
                opened.store.rebuild_sites(functools.partial(_site_of_host, config.scope))
        warc = _start(
            opened,
            out,
            now=now,
            agent=config.user_agent,
            bodies=config.warc_bodies,
            archive=config.store != "none",
        )
    except BaseException:
        opened.store.close()
        raise
    return build_parts(
        CrawlSetup(
            config,
            opened.store,
            given.fetcher,
            warc,
            opened.batch,
            rules=given.rules,
            learned=out / LEARNED_RULES,  # --learn writes its rules there as it goes
            resumed=resume,
            progress=progress,
            strict=strict,
        )
    )


def _start(
    opened: Opened, out: Path, *, now: float, agent: str, bodies: str, archive: bool
) -> WarcWriter | None:
    """The part of opening a run every worker shares, its batch chosen: register the worker,
    give back what it had claimed, open its WARC writer cut to what the DB committed (none
    when the crawl archives nothing: ``--store none``)."""
    store = opened.store
    store.register_worker(str(out.resolve()), now)
    # What this worker had claimed when it stopped (or crashed) goes back to the queue.
    store.requeue_in_flight()
    warc = None
    if archive:
        warc = WarcWriter(
            out / WARC_DIR,
            prefix=opened.prefix,
            committed_ends=store.warc_ends(),
            exact_ends=store.warc_committed_ends(),
            info=warc_info(agent),
            bodies=bodies,
        )
    store.commit()
    return warc


def warc_info(agent: str) -> dict[str, str]:
    """The ``warcinfo`` record's fields (WARC 1.1 §6.2) of a crawl's WARC files."""
    return {
        "software": "dustless/0.1",
        "format": "WARC File Format 1.1",
        "robots": "classic",
        "http-header-user-agent": agent,
    }


def _site_of_host(scope: Scope, host: str) -> str:
    return site_of(hostname_of(host), scope)


# -- before anything is written: what the settings load and open ---------------------------


@dataclass(frozen=True, slots=True)
class Checked:
    """The crawl's rule files, loaded, and its fetcher: what its settings open."""

    rules: Rules
    fetcher: Fetcher


def checked(c: CrawlConfig) -> Checked:
    """Bad settings (policy, --resolve, CIDRs, --ca-file, rule files) fail here, before the
    crawl writes anything; what they load is the run's (made once, not to check and again to
    use)."""
    fetcher = fetcher_of(c)
    rules = load_rules(c.rules, c.scripts)
    identity_policy(c.policy, rules.all)
    return Checked(rules, fetcher)


def fetcher_of(c: CrawlConfig) -> Fetcher:
    """The crawl's fetcher: its resolver (``--resolve``), address policy and limits."""
    for spec in (*c.allow_ip, *c.deny_ip):
        try:
            ipaddress.ip_network(spec, strict=False)
        except ValueError:
            raise InvalidOption(f"not an address range (CIDR): {spec!r}") from None
    # One parser reads --resolve (``fetch.parse_resolve``: ``h.test:[::1]`` as well as
    # ``h.test:::1``).
    resolve = dict(parse_resolve(spec) for spec in c.resolve)
    trusted = c.trusted()
    # Seeds' hosts are trusted (the crawl was pointed there); those a --resolve name covers
    # already are, and every trusted name costs a comparison on each connection.
    seed_hosts = {
        h
        for h in (hostname_of(authority_of(u)) for u in trusted)
        if not any(h == n or (n.startswith("*.") and h.endswith(n[1:])) for n in resolve)
    }
    policy = AddressPolicy(
        allow=c.allow_ip,
        deny=c.deny_ip,
        allow_private=c.allow_private,
        trusted_hosts=(*resolve, *seed_hosts),
        trusted_ips=seed_ips(trusted),
    )
    verify: bool | ssl.SSLContext = True
    if c.ca_file is not None:
        try:
            verify = tls_context(c.ca_file)
        except ValueError as exc:
            raise InvalidOption(str(exc)) from None
    return Fetcher(
        Resolver(resolve), fetch_limits(c), policy, max_connections=c.concurrency, verify_tls=verify
    )


def fetch_limits(c: CrawlConfig) -> FetchLimits:
    """A page's limits (seed 004 §3: size, stall, timeouts) and the crawl's User-Agent."""
    return FetchLimits(
        max_bytes=c.max_bytes,
        stall_timeout=c.stall_timeout,
        connect_timeout=c.connect_timeout,
        total_timeout=c.total_timeout,
        user_agent=c.user_agent,
        keep_wire_body=c.warc_bodies == "as-sent",  # the WARC records' bodies as sent
    )


def politeness_of(c: CrawlConfig) -> Politeness:
    return Politeness(
        min_delay=c.delay,
        factor=c.delay_factor,
        max_crawl_delay=c.max_crawl_delay,
        backoff=c.backoff,
        max_backoff=max(c.backoff, 300.0),
        max_failures=c.max_failures,
    )


def discovery_of(c: CrawlConfig, identity: _Normalizer) -> Discovery:
    return Discovery(
        UrlFilter(
            max_length=c.max_url_length, max_depth=c.max_depth, deny_patterns=c.deny_patterns
        ),
        identity,
        scope=c.scope,
        max_pages=c.max_pages,
        max_pages_per_site=c.max_pages_per_site,
        max_sites=c.max_sites,
    )


# -- the engine's parts ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CrawlSetup:
    """What :func:`build_parts` is given: the opened run and how to run it."""

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
class Pace:
    """What the engine's loop itself reads of the settings."""

    seeds: tuple[str, ...]  # admitted by a crawl's first worker
    concurrency: int  # fetches at once
    commit_interval: float  # seconds between commits, at most
    agent: str  # the User-Agent robots.txt rules are read for


@dataclass(frozen=True, slots=True)
class Parts:
    """What a ``Crawler`` is given: what the run opened, its pace, and its collaborators,
    each constructed with the ones it uses — everything but the settings themselves."""

    store: CrawlStore
    fetcher: Fetches
    warc: WarcWriter | None  # None: --store none (crawl/record.py)
    batch: Batch
    clock: Callable[[], float]
    wall: Callable[[], float]
    progress: Progress | None
    strict: bool | None  # None: ``DUSTLESS_STRICT`` says
    probe: bool  # evaluate --fetch (crawl/probe.py): links not followed
    pace: Pace
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
    c, store, batch = s.config, s.store, s.batch
    pace = Pace(c.seeds, c.concurrency, c.commit_interval, c.user_agent)
    politeness, page_limits = politeness_of(c), fetch_limits(c)
    stats = RunCounters(started=s.clock())
    all_rules = None if s.rules is None else s.rules.all
    policy = identity_policy(c.policy, all_rules)
    scripts = None if s.rules is None else s.rules.scripts
    scripted = None if scripts is None else ScriptedPages(scripts, store)
    # --learn: rules learned during the crawl join the identities (crawl/learn.py).
    live = LiveRules() if c.learn else None
    identity = policy if live is None else learning_policy(policy, live)
    discovery = discovery_of(c, Normalizer(identity))
    hosts = HostTable(
        store,
        politeness,
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
        page_limits=page_limits,
        depth=c.sitemap_depth,
        max_sitemaps=c.max_sitemaps,
    )
    return Parts(
        store=store,
        fetcher=s.fetcher,
        warc=s.warc,
        batch=batch,
        clock=s.clock,
        wall=s.wall,
        progress=s.progress,
        strict=s.strict,
        probe=s.probe,
        pace=pace,
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

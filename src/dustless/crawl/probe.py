"""``dustless evaluate --fetch``: the engine, asked to request the normalized forms a crawl
never fetched (seed 000 §3's ``N_normal``: documents downloaded from the *normalized* URLs).

The crawler fetches the first spelling it saw, so a form such as ``/asp/x`` (the lowercase of
``/ASP/x`` and ``/Asp/x``) may never have been requested; without it the loss is only an
estimate. Like the paper, ``--fetch`` requests those forms — with the crawl's own engine in
its probe mode: the same politeness clock per host, robots.txt per origin (the rules the
crawl stored are reused within their day), the crawl's ``--resolve`` and address rules, the
same network states and WARC records, and progress on long runs.

The forms go into a batch of their own whose config is ``{"kind": "evaluate-fetch", …}``
(``dustless.store.PROBE_KIND``), as URL rows under identities ``"probe " + url`` that can never
collide with the crawl's, so a later ``crawl --resume`` or ``recrawl`` is not disturbed. Links
are not followed; a redirect is, to its target (a probe row too), at most
:data:`MAX_PROBE_HOPS` hops. Responses go to ``warc/evaluate-NNNNN.warc.gz``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dustless.crawl._build import CrawlSetup, build_parts, fetcher_of
from dustless.crawl.admission import MAX_PROBE_HOPS
from dustless.crawl.config import CrawlConfig
from dustless.crawl.engine import Crawler
from dustless.crawl.progress import Progress
from dustless.errors import InvalidOption
from dustless.kinds import LinkKind
from dustless.store import (
    PROBE_KIND,
    PROBE_PREFIX,
    WARC_DIR,
    CrawlStore,
    NewURL,
    SQLiteStore,
    WarcWriter,
)
from dustless.url import authority_of

__all__ = ["MAX_PROBE_HOPS", "ProbeResult", "crawl_config", "run_probe"]


@dataclass(frozen=True, slots=True)
class ProbeResult:
    requested: int  # URLs asked for (redirect hops included)
    states: tuple[tuple[str, int], ...]  # network state -> fetches
    skipped: int  # forms over --fetch-limit


def crawl_config(store: CrawlStore, overrides: dict[str, Any]) -> CrawlConfig:
    """The settings of the crawl's first batch, with ``overrides`` (``None`` values: keep)."""
    config = CrawlConfig()
    for batch in store.batches():
        try:
            data = json.loads(batch.config)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("kind") != PROBE_KIND:
            try:
                config = CrawlConfig.from_json(batch.config)
            except Exception:  # not a dustless crawl config (a synthetic DB): defaults
                config = CrawlConfig()
            break
    changes = {k: v for k, v in overrides.items() if v is not None}
    if "resolve" in changes:
        changes["resolve"] = (*config.resolve, *changes["resolve"])
    # Forms are requested one by one: no spellings, no learning, nothing else queued.
    return config.with_(spelling_tries=1, **changes)


def run_probe(
    directory: str | Path,
    forms: Sequence[str],
    *,
    limit: int = 10_000,
    overrides: dict[str, Any] | None = None,
    progress: Progress | None = None,
    db: str | None = None,
) -> ProbeResult:
    """Fetch ``forms`` (at most ``limit``) into a probe batch of the crawl in ``directory``.

    ``db`` (``postgresql://…``): the crawl workers share there; this process is one more
    worker (``evaluate-MACHINE-PID``), whose WARC files go to ``directory``."""
    d = Path(directory)
    prefix = "evaluate"
    store: CrawlStore
    where: Path | str = d
    if db is None:
        store = SQLiteStore(d)
    else:
        from dustless.crawl.worker import default_worker_name, warc_prefix
        from dustless.store import PostgresCrawlStore

        name = f"evaluate-{default_worker_name()}"
        prefix = warc_prefix(name)
        store = pg = PostgresCrawlStore(db, worker=name)
        where = pg.where
    try:
        batches = store.batches()
        if batches and batches[-1].ended_at is None:
            raise InvalidOption(
                f"the crawl in {where} is not finished: continue it with dustless crawl "
                "--resume before evaluate --fetch"
            )
        if db is not None:  # readers find this worker's WARC files in its directory
            store.register_worker(str(d.resolve()), time.time())
        config = crawl_config(store, overrides or {})
        fetcher = fetcher_of(config)  # bad --resolve or CIDRs: refused before any write
        now = time.time()
        batch = store.start_batch(
            json.dumps({"kind": PROBE_KIND, "user_agent": config.user_agent}), now
        )
        todo = list(dict.fromkeys(forms))[:limit]
        store.add_urls(
            [NewURL(u, PROBE_PREFIX + u, authority_of(u), 0, LinkKind.REDIRECT) for u in todo]
        )
        store.commit()
    except BaseException:
        store.close()
        raise
    warc = WarcWriter(
        d / WARC_DIR,
        prefix=prefix,
        committed_ends=store.warc_ends(),
        exact_ends=store.warc_committed_ends(),
        bodies=config.warc_bodies,  # the crawl's: a probe's revisits refer to its records
    )
    crawler = Crawler(
        build_parts(CrawlSetup(config, store, fetcher, warc, batch, progress=progress, probe=True))
    )
    try:
        if progress is not None:
            with progress:
                result = asyncio.run(crawler.run())
        else:
            result = asyncio.run(crawler.run())
        if result.finished:
            store.end_batch(batch.number, time.time())
            store.commit()
    finally:
        warc.close()
        store.close()
    stats = result.stats
    return ProbeResult(
        requested=stats.fetched,
        states=tuple(sorted(stats.states.items())),
        skipped=max(0, len(forms) - limit),
    )

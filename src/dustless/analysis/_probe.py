"""``dustless evaluate --fetch``: request the normalized forms the crawl never fetched.

Seed 000 §3's ``N_normal`` counts the documents downloaded from the *normalized* URLs. The
crawler fetches the first spelling it saw (issue 4), so a form such as ``/asp/x`` (the
lowercase of ``/ASP/x`` and ``/Asp/x``) may never have been requested; without it the loss is
only an estimate. Like the paper, ``--fetch`` requests those forms — politely: one request
at a time per host, the crawl's delay between two, robots.txt obeyed (RFC 9309, fetched once
per origin through the same fetcher), the crawl's ``--resolve`` and address rules.

Every fetch is recorded in the crawl DB through the store's API, in a batch of its own whose
config is ``{"kind": "evaluate-fetch", …}`` (:data:`~dustless.analysis._crawlreader.PROBE_KIND`),
under URL identities ``"probe " + url`` that can never collide with the crawl's own (a URL
has no space), so a later ``crawl --resume`` or ``recrawl`` is not disturbed. Responses go
to ``warc/evaluate-NNNNN.warc.gz``, a file series of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dustless.analysis._crawlreader import PROBE_KIND
from dustless.errors import InvalidURL

__all__ = ["ProbeResult", "probe_forms"]


def robots_key_of(url: str) -> tuple[str, str, int]:
    from dustless.robots import robots_key

    return robots_key(url)


MAX_REDIRECTS = 5
PROBE_PREFIX = "probe "


@dataclass(frozen=True, slots=True)
class ProbeResult:
    requested: int  # URLs asked for (redirect hops included)
    states: tuple[tuple[str, int], ...]  # network state -> fetches
    skipped: int  # forms over --fetch-limit


def _crawl_config(directory: Path, overrides: dict[str, Any]) -> Any:
    from dustless.crawl.config import CrawlConfig
    from dustless.store import SQLiteStore

    store = SQLiteStore(directory)
    try:
        configs = [b.config for b in store.batches()]
    finally:
        store.close()
    config = CrawlConfig()
    for text in configs:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("kind") != PROBE_KIND:
            try:
                config = CrawlConfig.from_json(text)
            except Exception:  # not a dustless crawl config (a synthetic DB): defaults
                config = CrawlConfig()
            break
    changes = {k: v for k, v in overrides.items() if v is not None}
    if "resolve" in changes:
        changes["resolve"] = (*config.resolve, *changes["resolve"])
    return config.with_(**changes) if changes else config


class _Prober:
    def __init__(
        self, directory: Path, config: Any, wall: Callable[[], float], clock: Callable[[], float]
    ) -> None:
        from dustless.crawl.net import make_fetcher
        from dustless.store import WARC_DIR, SQLiteStore, WarcWriter
        from dustless.url import Normalizer

        self.config = config
        self.wall = wall
        self.clock = clock
        self.store = SQLiteStore(directory)
        self.fetcher = make_fetcher(config)
        self.warc = WarcWriter(
            directory / WARC_DIR, prefix="evaluate", committed_ends=self.store.warc_ends()
        )
        self.batch = self.store.start_batch(
            json.dumps({"kind": PROBE_KIND, "user_agent": config.user_agent}), wall()
        )
        self.store.commit()
        self.robots: dict[tuple[str, str, int], Any] = {}
        self.rfc = Normalizer("rfc3986").normalize
        self.done: set[str] = set()
        self.states: dict[str, int] = {}
        self.requested = 0
        self.later: list[str] = []  # redirect targets on other hosts: the next round

    async def _allowed(self, url: str) -> tuple[bool, float | None]:
        from dustless.robots import robots_key, robots_url

        key = robots_key(url)
        robots = self.robots.get(key)
        if robots is None:
            fetched = await self.fetcher.fetch_robots(robots_url(url))
            robots = self.robots[key] = fetched.robots
        return robots.allowed(self.config.user_agent, url), robots.crawl_delay(
            self.config.user_agent
        )

    def _record(self, url: str, result: Any, state: str) -> None:
        from dustless.extract import content_fingerprint
        from dustless.kinds import LinkKind
        from dustless.states import NetState
        from dustless.store import FetchRecord, NewURL
        from dustless.url import host_of

        identity = PROBE_PREFIX + url
        self.store.add_urls([NewURL(url, identity, host_of(url), 0, LinkKind.REDIRECT)])
        ((url_id,),) = self.store.query("SELECT id FROM urls WHERE identity = ?", (identity,))
        sha = ref = fp = None
        size = None
        ok = result is not None and result.status is not None and not result.truncated
        if ok and result is not None and 200 <= (result.status or 0) < 300:
            sha = hashlib.sha1(result.body).hexdigest()
            fp = content_fingerprint(result.body, result.mime, result.header("content-type"))
            size = len(result.body)
            refs = self.warc.write_response(
                url,
                result.raw_response_head,
                result.body,
                fetched_at=result.started,
                request=result.raw_request or None,
                ip=result.ip,
                payload_sha1=sha,
            )
            ref = refs.response
        self.store.record_fetches(
            [
                FetchRecord(
                    url_id,
                    result.started if result is not None else self.wall(),
                    NetState(state),
                    status=None if result is None else result.status,
                    mime=None if result is None else result.mime,
                    size_raw=size,
                    size_stored=None if ref is None else ref.length,
                    elapsed=None if result is None else result.elapsed,
                    content_sha1=sha,
                    content_fp=fp,
                    location=None if result is None else result.location,
                    warc=ref,
                    error=None if result is None else result.error,
                    batch=self.batch.number,
                )
            ]
        )
        self.states[state] = self.states.get(state, 0) + 1
        self.requested += 1

    async def host_loop(self, host: str, urls: Sequence[str]) -> None:
        """Fetch one host's URLs: one request at a time, and ``max(delay, crawl-delay,
        factor × last fetch time)`` between two, robots.txt included (004 §2's politeness
        rule with the crawl's own settings). A redirect to this host is followed in turn;
        one to another host waits for the next round, so that host's loop stays the only
        one talking to it."""
        from dustless.url import host_of

        queue = deque((u, 0) for u in urls)
        while queue:
            url, hops = queue.popleft()
            if url in self.done:
                continue
            self.done.add(url)
            known = robots_key_of(url) in self.robots
            allowed, crawl_delay = await self._allowed(url)
            pause = max(self.config.delay, min(crawl_delay or 0.0, self.config.max_crawl_delay))
            if not known and pause > 0:
                await asyncio.sleep(pause)
            if not allowed:
                self._record(url, None, "robots")
                continue
            started = self.clock()
            result = await self.fetcher.fetch(url)
            self._record(url, result, result.state.value)
            elapsed = self.clock() - started
            if result.location and result.status is not None and 300 <= result.status < 400:
                with contextlib.suppress(InvalidURL):
                    target = self.rfc(result.location)
                    if hops < MAX_REDIRECTS and target not in self.done:
                        if host_of(target) == host:
                            queue.appendleft((target, hops + 1))
                        else:
                            self.later.append(target)
            wait = max(pause, self.config.delay_factor * elapsed)
            if queue and wait > 0:
                await asyncio.sleep(wait)

    async def close(self) -> None:
        await self.fetcher.close()
        self.warc.flush_durable()
        self.warc.close()
        self.store.end_batch(self.batch.number, self.wall())
        self.store.commit()
        self.store.close()


async def _run(prober: _Prober, forms: Sequence[str], concurrency: int) -> None:
    from dustless.url import host_of

    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(host: str, urls: list[str]) -> None:
        async with gate:
            await prober.host_loop(host, urls)
            prober.store.commit()

    todo = list(forms)
    try:
        for _round in range(MAX_REDIRECTS + 1):
            by_host: dict[str, list[str]] = {}
            for url in todo:
                with contextlib.suppress(InvalidURL):
                    by_host.setdefault(host_of(url), []).append(url)
            if not by_host:
                break
            await asyncio.gather(*(one(h, u) for h, u in by_host.items()))
            todo, prober.later = prober.later, []
    finally:
        await prober.close()


def probe_forms(
    directory: str | Path,
    forms: Sequence[str],
    *,
    limit: int = 10_000,
    resolve: Sequence[str] = (),
    delay: float | None = None,
    allow_private: bool | None = None,
    user_agent: str | None = None,
    wall: Callable[[], float] = time.time,
    clock: Callable[[], float] = time.monotonic,
) -> ProbeResult:
    """Fetch ``forms`` (at most ``limit``) into a probe batch of the crawl in ``directory``."""
    d = Path(directory)
    config = _crawl_config(
        d,
        {
            "resolve": tuple(resolve) or None,
            "delay": delay,
            "allow_private": allow_private,
            "user_agent": user_agent,
        },
    )
    todo = list(forms[:limit])
    prober = _Prober(d, config, wall, clock)
    asyncio.run(_run(prober, todo, config.concurrency))
    return ProbeResult(
        requested=prober.requested,
        states=tuple(sorted(prober.states.items())),
        skipped=max(0, len(forms) - limit),
    )

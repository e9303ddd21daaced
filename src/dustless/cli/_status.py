"""``dustless crawl --db URL --status``: a crawl shared by workers, as the DB sees it now.

Workers (where, since when, last seen, fetches and their rate over the last minute, hosts
leased), the queue (URLs and hosts with queued work, leases live and run out) and the
crawl's rate. Read-only: it can be run at any time, from any machine that reaches the DB.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from dustless.cli._json import print_json
from dustless.words import plural

__all__ = ["print_status", "status_json", "status_lines"]


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{max(0.0, seconds):.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def _liveness(now: float, seen_at: float, ended_at: float | None, ttl: float) -> str:
    # A finished batch has no worker left in it: "alive" (seen within the TTL) would say
    # a worker still runs when it has just ended.
    if ended_at is not None and seen_at <= ended_at + ttl:
        return "ended"
    return "alive" if now - seen_at <= ttl else "gone"


def status_json(status: object, where: str, ttl: float) -> dict[str, Any]:
    """``crawl --status --json`` (docs/crawling.md): the same figures, times as Unix seconds."""
    from dustless.store import CrawlStatus, URLState

    assert isinstance(status, CrawlStatus)
    b = status.batch
    return {
        "crawl_db": where,
        "now": status.now,
        "batch": None
        if b is None
        else {"number": b.number, "started_at": b.started_at, "ended_at": b.ended_at},
        "workers": [
            {
                "name": w.name,
                "state": _liveness(status.now, w.seen_at, None if b is None else b.ended_at, ttl),
                "machine": w.machine,
                "pid": w.pid,
                "dir": w.dir,
                "started_at": w.started_at,
                "seen_at": w.seen_at,
                "fetches": w.fetches,
                "last_minute": w.last_minute,
                "leases": w.leases,
            }
            for w in status.workers
        ],
        "urls_queued": status.urls_queued,
        "hosts_queued": status.hosts_queued,
        "hosts_leased": status.hosts_leased,
        "leases_expired": status.leases_expired,
        "urls": {state.name.lower(): status.urls.get(state, 0) for state in URLState},
        "last_minute": status.last_minute,
    }


def status_lines(status: object, where: str, ttl: float) -> list[str]:
    """The report of a ``CrawlStatus`` (``ttl``: the crawl's lease TTL, to say who is alive)."""
    from dustless.store import CrawlStatus, URLState

    assert isinstance(status, CrawlStatus)
    now = status.now
    b = status.batch
    if b is None:
        return [f"crawl DB {where}: no crawl yet"]
    state = "finished " + _ago(now - b.ended_at) if b.ended_at is not None else "running"
    lines = [f"crawl DB {where}: batch {b.number}, {state}, started {_ago(now - b.started_at)}"]
    lines.append(f"workers ({len(status.workers):,}):")
    for w in status.workers:
        alive = _liveness(now, w.seen_at, b.ended_at, ttl)
        lines.append(
            f"  {w.name:20} {alive:5} seen {_ago(now - w.seen_at):>10}  "
            f"{plural(w.fetches, 'fetch', 'fetches'):>17}  {w.last_minute / 60:7,.1f}/s  "
            f"{plural(w.leases, 'host'):>11} leased  {w.machine or '?'}:{w.pid or '?'} {w.dir}"
        )
    u = status.urls
    lines.append(
        f"queue: {plural(status.urls_queued, 'URL')} queued on "
        f"{plural(status.hosts_queued, 'host')}; {plural(status.hosts_leased, 'host')} leased, "
        f"{plural(status.leases_expired, 'lease')} run out "
        f"(taken over at the next claim); {plural(u[URLState.IN_FLIGHT], 'URL')} claimed"
    )
    merged = f", {u[URLState.MERGED]:,} merged" if u[URLState.MERGED] else ""  # --learn
    lines.append(
        f"urls: {u[URLState.DONE]:,} done, {u[URLState.QUEUED]:,} queued, "
        f"{u[URLState.SKIPPED]:,} skipped{merged}; fetches: {status.last_minute:,} in the last "
        f"minute ({status.last_minute / 60:,.1f}/s)"
    )
    return lines


def print_status(db: str, *, as_json: bool = False) -> int:
    from dustless.crawl.config import CrawlConfig
    from dustless.store import CrawlStatus, PostgresCrawlStore

    # Read-only: opening does not migrate (nor create the tables of a database named wrong).
    with PostgresCrawlStore(db, worker="status", read_only=True) as store:
        if store.schema_version == 0:
            if as_json:  # the same keys: no batch, no worker, nothing queued
                empty = CrawlStatus(time.time(), None, [], 0, 0, 0, 0, {}, 0)
                print_json(status_json(empty, store.where, 0.0))
            else:
                print(f"crawl DB {store.where}: no crawl yet")
            return 0
        status = store.status(time.time())
        ttl = CrawlConfig().lease_ttl
        if status.batch is not None:
            ttl = CrawlConfig.from_json(status.batch.config).lease_ttl
        if as_json:
            print_json(status_json(status, store.where, ttl))
        else:
            print("\n".join(status_lines(status, store.where, ttl)))
    sys.stdout.flush()
    return 0

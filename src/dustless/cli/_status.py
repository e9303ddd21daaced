"""``dustless crawl --db URL --status``: a crawl shared by workers, as the DB sees it now.

Workers (where, since when, last seen, fetches and their rate over the last minute, hosts
leased), the queue (URLs and hosts with queued work, leases live and run out) and the
crawl's rate. Read-only: it can be run at any time, from any machine that reaches the DB.
"""

from __future__ import annotations

import sys
import time

__all__ = ["print_status", "status_lines"]


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{max(0.0, seconds):.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


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
    lines.append(f"workers ({len(status.workers)}):")
    for w in status.workers:
        # A finished batch has no worker left in it: "alive" (seen within the TTL) would say
        # a worker still runs when it has just ended.
        if b.ended_at is not None and w.seen_at <= b.ended_at + ttl:
            alive = "ended"
        else:
            alive = "alive" if now - w.seen_at <= ttl else "gone"
        lines.append(
            f"  {w.name:20} {alive:5} seen {_ago(now - w.seen_at):>10}  "
            f"{w.fetches:>9,} fetches  {w.last_minute / 60:7.1f}/s  "
            f"{w.leases:>5,} hosts leased  {w.machine or '?'}:{w.pid or '?'} {w.dir}"
        )
    u = status.urls
    lines.append(
        f"queue: {status.urls_queued:,} URLs queued on {status.hosts_queued:,} hosts; "
        f"{status.hosts_leased:,} hosts leased, {status.leases_expired:,} leases run out "
        f"(taken over at the next claim); {u[URLState.IN_FLIGHT]:,} URLs claimed"
    )
    merged = f", {u[URLState.MERGED]:,} merged" if u[URLState.MERGED] else ""  # --learn
    lines.append(
        f"urls: {u[URLState.DONE]:,} done, {u[URLState.QUEUED]:,} queued, "
        f"{u[URLState.SKIPPED]:,} skipped{merged}; fetches: {status.last_minute:,} in the last "
        f"minute ({status.last_minute / 60:.1f}/s)"
    )
    return lines


def print_status(db: str) -> int:
    from dustless.crawl.config import CrawlConfig
    from dustless.store import PostgresCrawlStore

    # Read-only: opening does not migrate (nor create the tables of a database named wrong).
    with PostgresCrawlStore(db, worker="status", read_only=True) as store:
        if store.schema_version == 0:
            print(f"crawl DB {store.where}: no crawl yet")
            return 0
        status = store.status(time.time())
        ttl = CrawlConfig().lease_ttl
        if status.batch is not None:
            ttl = CrawlConfig.from_json(status.batch.config).lease_ttl
        print("\n".join(status_lines(status, store.where, ttl)))
    sys.stdout.flush()
    return 0

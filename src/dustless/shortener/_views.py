"""The JSON shapes of a link and of its statistics: one function each, for the HTTP API and
the CLI's ``--json`` alike (so the two can never drift apart)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from ._bots import is_bot_family
from ._model import Link, LinkPage, LinkStats, Redirect

__all__ = ["DIRECT", "iso", "link_json", "page_json", "stats_json"]

DIRECT = "(direct)"  # the referrer "host" of clicks that came without a Referer


def iso(ts: float | None) -> str | None:
    """RFC 3339 UTC, or None for no time — and for a value no date can show (a row written
    before values were checked: ``inf``, ``nan``, ``1e300``), instead of failing."""
    if ts is None or not math.isfinite(ts):
        return None
    try:
        return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def link_json(
    link: Link,
    short_prefix: str,
    now: float,
    *,
    show_created: bool = True,
    tags: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A link as the API answers it. ``show_created=False`` hides when someone else made it
    (an anonymous request that got an existing anonymous link back)."""
    return {
        "code": link.code,
        "shortUrl": short_prefix + link.code,
        "longUrl": link.long_url,
        "redirect": int(link.redirect),
        "createdAt": iso(link.created_at) if show_created else None,
        "title": link.title,
        "validSince": iso(link.valid_since),
        "validUntil": iso(link.expires_at),
        "expiresAt": iso(link.expires_at),  # the older name of validUntil
        "maxVisits": link.max_visits,
        "visits": link.visits if link.max_visits is not None else None,
        "status": link.ended(now).value,
        "qrUrl": short_prefix + link.code + "/qr",
        "tags": list(tags),
    }


def _counts(rows: tuple[tuple[str, int], ...]) -> list[dict[str, Any]]:
    return [{"key": key, "clicks": n} for key, n in rows]


def stats_json(
    stats: LinkStats, short_prefix: str, now: float, tags: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A link's statistics: every click, the people's and the potential bots' apart."""
    body = link_json(stats.link, short_prefix, now, tags=tags)
    body.update(
        {
            "clicks": stats.total,
            "humanClicks": stats.human,
            "potentialBotClicks": stats.bots,
            # 302 sends every click through us; a browser that cached a 301 does not.
            "countsEveryClick": stats.link.redirect is Redirect.FOUND,
            "byDay": _counts(stats.by_day),
            "referrers": [{"key": k or DIRECT, "clicks": n} for k, n in stats.referrers],
            "userAgents": [
                {"key": k, "clicks": n, "potentialBot": is_bot_family(k)}
                for k, n in stats.user_agents
            ],
            "operatingSystems": _counts(stats.operating_systems),
        }
    )
    return body


def page_json(
    page: LinkPage, short_prefix: str, now: float, number: int, size: int
) -> dict[str, Any]:
    """One page of a link list, with each link's clicks and daily clicks (its chart)."""
    items = []
    for link in page.links:
        everything, bots = page.clicks.get(link.id, (0, 0))
        item = link_json(link, short_prefix, now, tags=page.tags.get(link.id, ()))
        item["clicks"] = everything
        item["humanClicks"] = everything - bots
        item["potentialBotClicks"] = bots
        item["daily"] = [
            {"day": day, "humanClicks": h, "potentialBotClicks": b}
            for day, h, b in page.daily.get(link.id, ())
        ]
        items.append(item)
    return {
        "links": items,
        "page": number,
        "pageSize": size,
        "total": page.total,
        "pages": max(1, -(-page.total // size)),
    }

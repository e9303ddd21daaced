"""Dates in sitemaps and feeds, to seconds since the epoch (UTC); ``None`` when unreadable.

* sitemaps.org ``<lastmod>`` and Atom (RFC 4287 §3.3, RFC 3339) use W3C Datetime
  (https://www.w3.org/TR/NOTE-datetime): ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or a time
  with a zone designator. Real files also omit the zone (read as UTC) or use a space.
* RSS 2.0 ``<pubDate>`` is RFC 822 (with 4-digit years, as RFC 1123 has it).
"""

from __future__ import annotations

import calendar
import email.utils
import re

__all__ = ["parse_rfc822", "parse_w3c"]

_W3C = re.compile(
    r"(?P<y>\d{4})(?:-(?P<mo>\d{2})(?:-(?P<d>\d{2})"
    r"(?:[T ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?P<f>\.\d+)?)?"
    r"(?P<tz>Z|z|[+-]\d{2}:?\d{2})?)?)?)?"
)


def parse_w3c(text: str) -> float | None:
    """W3C Datetime (and RFC 3339) → epoch seconds; ``None`` for anything else."""
    m = _W3C.fullmatch(text.strip())
    if m is None:
        return None
    try:
        year = int(m["y"])
        month = int(m["mo"] or 1)
        day = int(m["d"] or 1)
        hour = int(m["h"] or 0)
        minute = int(m["mi"] or 0)
        second = int(m["s"] or 0)
        if not (1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]):
            return None
        if hour > 23 or minute > 59 or second > 60:  # 60: a leap second (RFC 3339 §5.7)
            return None
    except ValueError:
        return None
    stamp = float(calendar.timegm((year, month, day, hour, minute, min(second, 59), 0, 0, 0)))
    if m["f"]:
        stamp += float(m["f"])
    tz = m["tz"]
    if tz and tz not in "Zz":
        sign = -1 if tz[0] == "-" else 1
        digits = tz[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:]) * 60
        if offset >= 24 * 3600:
            return None
        stamp -= sign * offset
    return stamp


def parse_rfc822(text: str) -> float | None:
    """RFC 822 / RFC 1123 date (RSS ``pubDate``) → epoch seconds; W3C as a fallback."""
    text = text.strip()
    if not text:
        return None
    try:
        parsed = email.utils.parsedate_tz(text)
    except (TypeError, ValueError, IndexError):
        parsed = None
    if parsed is None:
        return parse_w3c(text)  # feeds in the wild put ISO dates in pubDate too
    try:
        return float(email.utils.mktime_tz(parsed))
    except (OverflowError, ValueError):
        return None

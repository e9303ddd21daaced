"""Links exported by other shorteners, as import records (pure: text in, records out).

* **Shlink**: the CSV its web client exports from the short URL list (``short_urls.csv``):
  ``createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits`` — tags joined by ``|``;
  older clients wrote no ``domain``/``shortCode`` (the code is then the short URL's path) and
  joined tags by ``,``.
* **YOURLS**: its ``yourls_url`` table (``keyword,url,title,timestamp,ip,clicks``) saved as
  CSV with a header row (YOURLS has no CSV export of its own: phpMyAdmin's or ``mysql``'s);
  ``timestamp`` is ``YYYY-MM-DD HH:MM:SS``, read as UTC.

Codes, long URLs, creation times, titles, tags and visit counts are kept. A visit count has no
dates: it becomes that many clicks of the user-agent family ``(imported)`` on the day the
link was made. Every row is checked before anything is written; a bad one names its line.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Callable
from typing import TextIO

from dustless.errors import UsageError
from dustless.url import split_lenient

from ._bots import UNKNOWN_OS
from ._model import Link, LinkRecord, Redirect
from ._validate import Rejected, UrlChecker, check_alias, parse_tags, parse_title

__all__ = ["IMPORTED_FAMILY", "SOURCES", "read_foreign"]

IMPORTED_FAMILY = "(imported)"
_REQUIRED = {"shlink": ("longUrl", "createdAt"), "yourls": ("keyword", "url", "timestamp")}


def _time(text: str) -> float:
    parsed = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.timestamp()


def _count(text: str | None) -> int:
    value = int((text or "0").strip() or "0")
    if value < 0:
        raise ValueError(f"a visit count is {value}")
    return value


def _shlink(row: dict[str, str]) -> tuple[str, str, float, str | None, list[str], int]:
    code = (row.get("shortCode") or "").strip()
    if not code:  # older exports: the short URL's path is the code
        code = split_lenient(row.get("shortUrl") or "").path.lstrip("/")
    joiner = "|" if "shortCode" in row else ","
    tags = [t for t in (row.get("tags") or "").split(joiner) if t.strip()]
    return (
        code,
        row["longUrl"],
        _time(row["createdAt"]),
        row.get("title"),
        tags,
        _count(row.get("visits")),
    )


def _yourls(row: dict[str, str]) -> tuple[str, str, float, str | None, list[str], int]:
    return (
        row["keyword"].strip(),
        row["url"],
        _time(row["timestamp"]),
        row.get("title"),
        [],
        _count(row.get("clicks")),
    )


SOURCES: dict[str, Callable[[dict[str, str]], tuple[str, str, float, str | None, list[str], int]]]
SOURCES = {"shlink": _shlink, "yourls": _yourls}


def read_foreign(
    source: TextIO, name: str, kind: str, checker: UrlChecker, owner: str | None = None
) -> list[LinkRecord]:
    """Every row of a ``kind`` export as a link record owned by key ``owner``."""
    reader = csv.DictReader(source)
    missing = [c for c in _REQUIRED[kind] if c not in (reader.fieldnames or ())]
    if missing:
        raise UsageError(f"{name}: not a {kind} export: no column {', '.join(missing)}")
    records: list[LinkRecord] = []
    codes: set[str] = set()
    for row in reader:
        where = f"{name}:{reader.line_num}"
        try:
            code, long_url, created, title, tags, visits = SOURCES[kind](row)
            check_alias(code, imported=True)
            if code in codes:
                raise ValueError(f"code {code!r} appears twice")
            codes.add(code)
            checked = checker.check(long_url)
            link = Link(
                id=0,
                code=code,
                long_url=checked.stored,
                redirect=Redirect.FOUND,
                created_at=created,
                is_alias=True,
                title=parse_title(title),
            )
            day = dt.datetime.fromtimestamp(created, dt.UTC).date().isoformat()
            clicks = ((day, "", IMPORTED_FAMILY, UNKNOWN_OS, visits),) if visits else ()
            records.append(LinkRecord(link, checked.key, owner, clicks, parse_tags(tags)))
        except (Rejected, ValueError, KeyError, OverflowError) as exc:
            raise UsageError(f"{where}: {exc}") from None
    return records

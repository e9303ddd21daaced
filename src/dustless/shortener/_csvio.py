"""CSV export and import of links — superseded by ``dump.py``'s JSON Lines, which also
carries owners, API keys and clicks; kept for files written before it and for scripts.

Codes are kept exactly: a generated code is stored as text, so the new database need not
share the old one's code key; new links it creates skip any code an imported link holds.

A backup must not stop at one bad row. Rows are converted one by one; a value no CSV cell can
hold as a date (an ``expires_at`` of ``inf``, ``nan`` or ``1e300``, stored before such values
were refused) is written empty and reported — which keeps the link's meaning, since the
service never ended a link at any of those values; ``-inf`` (always ended) is written as the
year 1 — and a row that is not a link at all is
reported and left out while the others are written.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from dustless.errors import UsageError

from ._codes import is_code_shape
from ._model import Link, Redirect
from ._store import row_to_link
from ._validate import Rejected, UrlChecker, check_alias, parse_max_visits

__all__ = ["COLUMNS", "read_links", "write_links"]

COLUMNS = (
    "code",
    "long_url",
    "redirect",
    "created_at",
    "expires_at",
    "alias",
    "max_visits",
    "visits",
)
# The first instant a CSV cell can write: what a link that ended at -inf is written as.
_LONG_AGO = "0001-01-01T00:00:00+00:00"
# Files written before visit limits existed have only these; they import as before.
REQUIRED = COLUMNS[:6]


def _iso(ts: float | None) -> str:
    """ISO 8601 of ``ts``; ``ValueError`` for a value no date can show."""
    if ts is None:
        return ""
    if not math.isfinite(ts):
        raise ValueError(f"{ts!r} is not a time")
    try:
        return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{ts!r} is outside the years 1–9999") from None


def _timestamp(text: str, column: str) -> float | None:
    if not text:
        return None
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{column} is not an ISO date-time: {text!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.timestamp()


def write_links(
    rows: Iterable[tuple[object, ...]],
    out: TextIO,
    report: Callable[[str], None],
) -> tuple[int, int]:
    """Write the store's raw link rows as CSV; ``report`` hears of every bad value or row.
    Returns (rows written, rows left out)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    written = skipped = 0
    for row in rows:
        try:
            link = row_to_link(row)
        except (TypeError, ValueError) as exc:
            report(f"link row {row[:2]!r} left out: {exc}")
            skipped += 1
            continue
        try:
            created = _iso(link.created_at)
        except ValueError as exc:
            report(f"link {link.code}: created_at {exc}; written empty")
            created = ""
        try:
            expires = _iso(link.expires_at)
        except ValueError as exc:
            if link.expires_at == -math.inf:  # it ended before any time: keep it ended
                report(f"link {link.code}: expires_at {exc}; written as {_LONG_AGO} (it ended)")
                expires = _LONG_AGO
            else:
                report(f"link {link.code}: expires_at {exc}; written empty (it never ended)")
                expires = ""
        writer.writerow(
            (
                link.code,
                link.long_url,
                int(link.redirect),
                created,
                expires,
                int(link.is_alias),
                "" if link.max_visits is None else link.max_visits,
                link.visits,
            )
        )
        written += 1
    return written, skipped


def read_links(source: TextIO, name: str, checker: UrlChecker) -> Iterator[tuple[Link, str]]:
    """``(link, url_key)`` per row; ``UsageError`` naming the line for a bad row."""
    reader = csv.DictReader(source)
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or ())]
    if missing:
        raise UsageError(f"{name}: missing CSV columns: {', '.join(missing)}")
    for row in reader:
        where = f"{name}:{reader.line_num}"
        try:
            is_alias = row["alias"].strip() in ("1", "true", "True")
            code = row["code"]
            if is_alias:
                check_alias(code, imported=True)
            elif not is_code_shape(code):
                raise ValueError(f"code {code!r} is not 7 base62 characters")
            checked = checker.check(row["long_url"])
            created = _timestamp(row["created_at"], "created_at")
            limit_text = (row.get("max_visits") or "").strip()
            visits_text = (row.get("visits") or "").strip()
            max_visits = parse_max_visits(int(limit_text)) if limit_text else None
            visits = int(visits_text) if visits_text else 0
            link = Link(
                id=0,
                code=code,
                long_url=checked.stored,
                redirect=Redirect(int(row["redirect"])),
                created_at=0.0 if created is None else created,
                expires_at=_timestamp(row["expires_at"], "expires_at"),
                is_alias=is_alias,
                max_visits=max_visits,
                visits=visits,
            )
        except (Rejected, ValueError) as exc:
            raise UsageError(f"{where}: {exc}") from None
        yield link, checked.key

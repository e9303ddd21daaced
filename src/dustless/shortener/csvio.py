"""CSV export and import of links, for moving a service between databases.

Codes are kept exactly: a generated code is stored as text, so the new database need not
share the old one's code key; new links it creates skip any code an imported link holds.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Iterator
from typing import TextIO

from dustless.errors import UsageError

from .codes import is_code_shape
from .model import Link, Redirect
from .validate import Rejected, UrlChecker, check_alias

__all__ = ["COLUMNS", "read_links", "write_links"]

COLUMNS = ("code", "long_url", "redirect", "created_at", "expires_at", "alias")


def _iso(ts: float | None) -> str:
    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat()


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


def write_links(links: Iterable[Link], out: TextIO) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    n = 0
    for link in links:
        writer.writerow(
            (
                link.code,
                link.long_url,
                int(link.redirect),
                _iso(link.created_at),
                _iso(link.expires_at),
                int(link.is_alias),
            )
        )
        n += 1
    return n


def read_links(source: TextIO, name: str, checker: UrlChecker) -> Iterator[tuple[Link, str]]:
    """``(link, url_key)`` per row; ``UsageError`` naming the line for a bad row."""
    reader = csv.DictReader(source)
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise UsageError(f"{name}: missing CSV columns: {', '.join(missing)}")
    for row in reader:
        where = f"{name}:{reader.line_num}"
        try:
            is_alias = row["alias"].strip() in ("1", "true", "True")
            code = row["code"]
            if is_alias:
                check_alias(code)
            elif not is_code_shape(code):
                raise ValueError(f"code {code!r} is not 7 base62 characters")
            checked = checker.check(row["long_url"])
            created = _timestamp(row["created_at"], "created_at")
            link = Link(
                id=0,
                code=code,
                long_url=checked.stored,
                redirect=Redirect(int(row["redirect"])),
                created_at=0.0 if created is None else created,
                expires_at=_timestamp(row["expires_at"], "expires_at"),
                is_alias=is_alias,
            )
        except (Rejected, ValueError) as exc:
            raise UsageError(f"{where}: {exc}") from None
        yield link, checked.key

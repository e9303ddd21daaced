"""The export format that moves a whole deployment: JSON Lines, version 2 (pure: rows in,
lines out, and back). Version 2 adds a link's ``validSince`` and ``title`` and the operating
system family of its clicks: a version 1 file still imports (its links have neither, its
clicks' system is ``(unknown)``); a reader of version 1 refuses a version 2 file
rather than drop the start of a link that must not work yet.

The first line is a header naming the format and its version; every other line is one
record, ``{"type": "key", …}`` or ``{"type": "link", …}``, keys first (a link names its owner
by the key's name: ids differ between databases). A link carries its aggregated clicks and
its tags. API
keys are carried *as stored* — their SHA-256, which is all the database has — so every key
keeps working after the move and no plaintext key is ever written.

Times are Unix seconds as JSON numbers, which round-trip every finite double exactly (Python
writes the shortest repr that reads back as the same double). A stored value no JSON number
can hold is written as the string ``"inf"``, ``"-inf"`` or ``"nan"`` and read back as that
very value: a link that ended at ``-inf`` stays ended, one that never ends never does.

A backup must not stop at one bad row: a row that is no link (or no key) is reported and
left out, every other row is written. Reading checks every line before anything is written,
and names the line of the first problem.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from dustless.errors import UsageError

from ._bots import UNKNOWN_OS
from ._codes import is_code_shape
from ._model import Link, LinkRecord, Redirect, StoredKey
from ._store import RawDump, row_to_link
from ._validate import (
    Rejected,
    UrlChecker,
    check_alias,
    parse_max_visits,
    parse_tags,
    parse_title,
)

__all__ = ["FORMAT", "VERSION", "Dump", "is_dump", "read_dump", "write_dump"]

FORMAT = "dustless-shortener"
VERSION = 2
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


@dataclass(frozen=True, slots=True)
class Dump:
    """What a file holds, checked: keys first, then links naming their owners."""

    keys: tuple[StoredKey, ...]
    links: tuple[LinkRecord, ...]


def _time(ts: float | None) -> float | str | None:
    if ts is None or math.isfinite(ts):
        return ts
    return "nan" if math.isnan(ts) else ("inf" if ts > 0 else "-inf")


def _hash_of(value: object) -> str:
    text = str(value)
    if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"key_hash {text[:20]!r}… is not a SHA-256 in hex")
    return text


def write_dump(
    raw: RawDump, out: TextIO, report: Callable[[str], None], now: float
) -> tuple[int, int, int]:
    """Write ``raw`` as JSON Lines; ``report`` hears of every row left out.
    Returns (keys written, links written, rows left out)."""
    created = dt.datetime.fromtimestamp(now, dt.UTC).isoformat().replace("+00:00", "Z")
    header = {"format": FORMAT, "version": VERSION, "exportedAt": created}
    out.write(json.dumps(header) + "\n")
    names: dict[int, str] = {}
    keys = links = skipped = 0
    for row in raw.keys:
        try:
            key_id, name, key_hash, admin, made, revoked = row
            record = {
                "type": "key",
                "name": str(name),
                "keyHash": _hash_of(key_hash),
                "admin": bool(admin),
                "createdAt": _time(float(made)),  # type: ignore[arg-type]
                "revokedAt": None if revoked is None else _time(float(revoked)),  # type: ignore[arg-type]
            }
            names[int(key_id)] = str(name)  # type: ignore[call-overload]
        except (TypeError, ValueError) as exc:
            report(f"key row {row[:2]!r} left out: {exc}")
            skipped += 1
            continue
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        keys += 1
    clicks = _clicks_by_link(raw.clicks, report)
    tags: dict[int, list[str]] = {}
    for link_id, tag in raw.tags:
        tags.setdefault(int(link_id), []).append(str(tag))  # type: ignore[call-overload]
    for row in raw.links:
        try:
            link = row_to_link(row)
        except (TypeError, ValueError) as exc:
            report(f"link row {row[:2]!r} left out: {exc}")
            skipped += 1
            continue
        owner = names.get(link.owner)
        if link.owner and owner is None:
            report(f"link {link.code}: owner key id {link.owner} is no key; written ownerless")
        record = {
            "type": "link",
            "code": link.code,
            "longUrl": link.long_url,
            "redirect": int(link.redirect),
            "createdAt": _time(link.created_at),
            "validSince": _time(link.valid_since),
            "validUntil": _time(link.expires_at),
            "title": link.title,
            "customSlug": link.is_alias,
            "owner": owner,
            "maxVisits": link.max_visits,
            "visits": link.visits,
            "clicks": clicks.get(link.id, []),
            "tags": sorted(tags.get(link.id, [])),
        }
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        links += 1
    return keys, links, skipped


def _clicks_by_link(
    rows: list[tuple[object, ...]], report: Callable[[str], None]
) -> dict[int, list[list[object]]]:
    by_link: dict[int, list[list[object]]] = {}
    for row in rows:
        try:
            link_id, day, host, family, system, n = row
            by_link.setdefault(int(link_id), []).append(  # type: ignore[call-overload]
                [str(day), str(host), str(family), str(system), int(n)]  # type: ignore[call-overload]
            )
        except (TypeError, ValueError) as exc:
            report(f"click row {row[:2]!r} left out: {exc}")
    return by_link


def is_dump(first_line: str) -> bool:
    """Whether a file starting with ``first_line`` is in this format (else: CSV)."""
    return first_line.lstrip("\ufeff").startswith("{")


# -- reading -------------------------------------------------------------------------------


def _get(record: dict[str, Any], name: str, kinds: tuple[type, ...], optional: bool = False) -> Any:
    if name not in record:
        raise ValueError(f"no {name!r}")
    value = record[name]
    if value is None and optional:
        return None
    # bool is an int in Python: refuse true where a number is meant, and 1 for a flag.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ValueError(f"{name!r} is {json.dumps(value)[:40]}, not {kinds[0].__name__}")
    return value


def _read_time(record: dict[str, Any], name: str, optional: bool = False) -> float | None:
    value = _get(record, name, (int, float, str), optional)
    if value is None:
        return None
    if isinstance(value, str):
        if value not in _NON_FINITE:
            raise ValueError(f"{name!r} is {value!r}: Unix seconds, or 'inf', '-inf', 'nan'")
        return _NON_FINITE[value]
    return float(value)


def _read_key(record: dict[str, Any]) -> StoredKey:
    return StoredKey(
        name=_get(record, "name", (str,)),
        key_hash=_hash_of(_get(record, "keyHash", (str,))),
        admin=_get(record, "admin", (bool,)),
        created_at=_read_time(record, "createdAt") or 0.0,
        revoked_at=_read_time(record, "revokedAt", optional=True),
    )


def _read_link(
    record: dict[str, Any], checker: UrlChecker, owners: set[str], version: int
) -> LinkRecord:
    code = _get(record, "code", (str,))
    is_alias = _get(record, "customSlug", (bool,))
    if is_alias:
        check_alias(code, imported=True)
    elif not is_code_shape(code):
        raise ValueError(f"code {code!r} is not 7 base62 characters")
    checked = checker.check(_get(record, "longUrl", (str,)))
    owner = _get(record, "owner", (str,), optional=True)
    if owner is not None and owner not in owners:
        raise ValueError(f"owner {owner!r} is no key of this file")
    limit = _get(record, "maxVisits", (int,), optional=True)
    visits = _get(record, "visits", (int,))
    if visits < 0:
        raise ValueError(f"'visits' is {visits}")
    counts: dict[tuple[str, str, str, str], int] = {}
    # Version 1 counted clicks without their operating system: [day, host, UA, n].
    width, shape = (4, "[day, host, UA, n]") if version == 1 else (5, "[day, host, UA, OS, n]")
    for item in _get(record, "clicks", (list,)):
        if not (
            isinstance(item, list)
            and len(item) == width
            and all(isinstance(v, str) for v in item[:-1])
            and isinstance(item[-1], int)
            and not isinstance(item[-1], bool)
            and item[-1] >= 0
        ):
            raise ValueError(f"a click count is {json.dumps(item)[:60]}, not {shape}")
        dt.date.fromisoformat(item[0])  # ValueError for a day that is none
        group = (item[0], item[1], item[2], UNKNOWN_OS if version == 1 else item[3])
        counts[group] = counts.get(group, 0) + item[-1]
    link = Link(
        id=0,
        code=code,
        long_url=checked.stored,
        redirect=Redirect(_get(record, "redirect", (int,))),
        created_at=_read_time(record, "createdAt") or 0.0,
        expires_at=_read_time(record, "validUntil", optional=True),
        is_alias=is_alias,
        max_visits=parse_max_visits(limit),
        visits=visits,
        # Version 1 files have neither.
        valid_since=_read_time(record, "validSince", optional=True)
        if "validSince" in record
        else None,
        title=parse_title(_get(record, "title", (str,), optional=True))
        if "title" in record
        else None,
    )
    return LinkRecord(
        link,
        checked.key,
        owner,
        tuple((d, h, f, o, n) for (d, h, f, o), n in counts.items()),
        parse_tags(_get(record, "tags", (list,))),
    )


def _lines(source: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(source, 1):
        if line.strip():
            yield number, line


def read_dump(source: Iterable[str], name: str, checker: UrlChecker) -> Dump:
    """Every record of a file, checked; ``UsageError`` naming the line of the first bad one."""
    keys: list[StoredKey] = []
    links: list[LinkRecord] = []
    owners: set[str] = set()
    codes: set[str] = set()
    header_seen = False
    version = VERSION
    for number, line in _lines(source):
        where = f"{name}:{number}"
        try:
            record = json.loads(line.lstrip("\ufeff"))
        except ValueError as exc:
            raise UsageError(f"{where}: not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise UsageError(f"{where}: a record is a JSON object")
        if not header_seen:
            version = _check_header(record, where)
            header_seen = True
            continue
        try:
            kind = record.get("type")
            if kind == "key":
                if links:
                    raise ValueError("keys come before the links")
                key = _read_key(record)
                if key.name in owners:
                    raise ValueError(f"key {key.name!r} appears twice")
                owners.add(key.name)
                keys.append(key)
            elif kind == "link":
                link = _read_link(record, checker, owners, version)
                if link.link.code in codes:
                    raise ValueError(f"code {link.link.code!r} appears twice")
                codes.add(link.link.code)
                links.append(link)
            else:
                raise ValueError(f"unknown record type {kind!r}")
        except (Rejected, ValueError) as exc:
            raise UsageError(f"{where}: {exc}") from None
    if not header_seen:
        raise UsageError(f"{name}: empty: no {FORMAT} header")
    return Dump(tuple(keys), tuple(links))


def _check_header(record: dict[str, Any], where: str) -> int:
    if record.get("format") != FORMAT:
        raise UsageError(f"{where}: not a {FORMAT} export (its first line names no such format)")
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise UsageError(f"{where}: the header has no version number")
    if version > VERSION:
        raise UsageError(
            f"{where}: export format version {version} is newer than this dustless reads "
            f"({VERSION}); upgrade dustless to import it"
        )
    return version
